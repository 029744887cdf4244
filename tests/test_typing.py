"""The shipped ``py.typed`` is true: mypy and pyright, reading ember as an installed package, type
tests/typing_probe.py (a PyTorch-style training script) as PyTorch's stubs would: operators, reductions and
module calls are ``Tensor``; misspelt methods on a Tensor, a Module and an Optimizer are errors; nothing else is.

Each checker's test skips, saying so, when that checker is not installed (the ``test`` extra installs both).
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import types

import pytest
from conftest import ROOT

import ember

PROBE = os.path.join(ROOT, "tests", "typing_probe.py")


def _marked_lines() -> tuple[set[int], set[int]]:
    """(1-based lines with ``reveal_type``, lines marked ``# error``) of the probe."""
    with open(PROBE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    reveals = {i for i, line in enumerate(lines, 1) if line.startswith("reveal_type(") or "    reveal_type(" in line}
    errors = {i for i, line in enumerate(lines, 1) if line.rstrip().endswith("# error")}
    return reveals, errors


@pytest.fixture
def installed(tmp_path):
    """The probe in an empty folder, and a search-path folder where ember looks installed (a link to this
    checkout's package, as a regular install or ``pip install -e . --config-settings editable_mode=compat``
    exposes it), so the checkers apply their rules for installed typed packages (exports, py.typed)."""
    site = tmp_path / "site"
    site.mkdir()
    os.symlink(os.path.join(ROOT, "ember"), site / "ember")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(PROBE, work / "probe.py")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env["PYTHONPATH"] = str(site)
    return work, env


def _run(cmd, work, env) -> str:
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    return out.stdout + out.stderr


def test_mypy_sees_tensors_and_flags_misspelt_methods(installed):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    work, env = installed
    out = _run([sys.executable, "-m", "mypy", "--python-executable", sys.executable, "--cache-dir",
                str(work / ".mypy_cache"), "--show-error-codes", "probe.py"], work, env)
    reveals, errors = _marked_lines()
    revealed = dict(re.findall(r'^probe\.py:(\d+): note: Revealed type is "(.*)"$', out, re.M))
    assert {int(n): t for n, t in revealed.items()} == dict.fromkeys(reveals, "ember._tensor.Tensor"), out
    assert {int(n) for n in re.findall(r"^probe\.py:(\d+): error:", out, re.M)} == errors, out
    assert f"Found {len(errors)} errors in 1 file" in out, out


def _pyright() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "pyright")
    return here if os.path.exists(here) else shutil.which("pyright")


def test_pyright_sees_tensors_and_flags_misspelt_methods(installed):
    pyright = _pyright()
    if pyright is None:
        pytest.skip("pyright is not installed (pip install -e '.[test]' installs it, with Node.js from PyPI)")
    work, env = installed
    env = dict(env, PYRIGHT_PYTHON_IGNORE_WARNINGS="1")  # no look-up of a newer pyright on PyPI
    out = _run([pyright, "--outputjson", "--pythonpath", sys.executable, "probe.py"], work, env)
    report = json.loads(out[out.index("{"):])
    reveals, errors = _marked_lines()
    found = [(d["range"]["start"]["line"] + 1, d["severity"], d["message"]) for d in report["generalDiagnostics"]]
    types_ = {line: re.search(r'is "(.*)"$', msg).group(1) for line, sev, msg in found if sev == "information"}
    assert types_ == dict.fromkeys(reveals, "Tensor"), found
    assert {line for line, sev, _ in found if sev == "error"} == errors, found
    assert not [f for f in found if f[1] == "warning"], found


def test_all_lists_every_public_name():
    # What ``import ember`` binds publicly is what ``ember.__all__`` exports to type checkers (a new op added to
    # ember/__init__.py must be added there too, or pyright reports it "not exported").
    public = {n for n, v in vars(ember).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"}
    public |= {n for n in ember._LAZY if not n.startswith("_")}  # (a private lazy name, torch._weight_norm: not exported)
    assert public <= set(ember.__all__), sorted(public - set(ember.__all__))
    assert all(hasattr(ember, n) for n in ember.__all__)
