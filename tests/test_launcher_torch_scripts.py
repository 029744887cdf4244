"""A torch script started by ember's launcher runs on ember without flags: through ``python -m ember.compat -m
torch.distributed.run`` (torchrun's spelling), and where PyTorch is not installed; other ``-m torch.*`` modules
under the compat runner run as ember's counterpart or name what is missing."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

from ember.distributed import _bootstrap  # noqa: E402
from ember.distributed._launch_args import parse  # noqa: E402
from ember.distributed.run import rank_target  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": ROOT}

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.ones(1) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()}: torch is {torch.__name__}, sum {t.item():g}, args {sys.argv[1:]}", flush=True)
    dist.destroy_process_group()
""")


def test_torchrun_spelling_under_the_compat_runner_runs_every_rank_on_ember(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-m", "torch.distributed.run", "--standalone",
                          "--nproc_per_node", "2", "--timeout", "60", str(script), "--lr", "0.1"],
                         capture_output=True, text=True, timeout=120, env=ENV, cwd=str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in (0, 1):
        assert f"rank {rank}: torch is ember, sum 3, args ['--lr', '0.1']" in out.stdout, out.stdout


def test_a_failing_torch_script_under_the_compat_runner_shows_only_its_own_frames(tmp_path):
    """The traceback a failing rank prints starts in the user's script: the compat runner's and runpy's frames
    (eight lines before the first line of the user's) are ember's start-up, as _bootstrap's are."""
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\ndist.init_process_group('gloo')\n"
                      "if dist.get_rank() == 1:\n    raise ValueError('bad batch')\ndist.barrier()\n")
    out = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "60",
                          "-m", "ember.compat", str(script)], capture_output=True, text=True, timeout=120, env=ENV,
                         cwd=str(tmp_path))
    report = [line for line in out.stderr.splitlines() if line.startswith("[ember rank 1]")]
    assert out.returncode != 0 and report[-1] == "[ember rank 1] ValueError: bad batch", out.stderr
    assert report[:2] == ["[ember rank 1] Traceback (most recent call last):",
                          f'[ember rank 1]   File "{script}", line 4, in <module>'], out.stderr


def test_each_rank_runs_a_script_through_the_compat_runner_only_when_asked_or_torch_is_missing(monkeypatch):
    args = parse(["--nproc-per-node", "2", "train.py", "--lr", "1"])
    assert rank_target(args) == ["train.py", "--lr", "1"]  # PyTorch installed, launcher not under compat
    import ember.compat

    monkeypatch.setattr(ember.compat, "is_active", lambda: True)  # the launcher runs under the compat runner
    assert rank_target(args) == ["-m", "ember.compat", "train.py", "--lr", "1"]
    assert rank_target(parse(["-m", "ember.compat", "train.py"])) == ["-m", "ember.compat", "train.py"]
    assert rank_target(parse(["--no-python", "echo", "hi"])) == ["echo", "hi"]
    assert _bootstrap.on_ember(["-m", "pkg.train"]) == ["-m", "ember.compat", "-m", "pkg.train"]


def test_a_rank_without_pytorch_runs_the_torch_script_on_ember(tmp_path):
    # A Python where ``import torch`` finds nothing: the real PyTorch is hidden from this rank's interpreter.
    script = tmp_path / "train.py"
    script.write_text("import torch\nprint('torch is', torch.__name__)\n")
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(textwrap.dedent("""
        import importlib.machinery, sys
        class _NoTorch(importlib.machinery.PathFinder):
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    return None
                return super().find_spec(name, path, target)
        sys.meta_path[:] = [_NoTorch if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
    """))
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(hide), ROOT]), "RANK": "0", "WORLD_SIZE": "1",
           "EMBER_RUN_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "ember.distributed._bootstrap", str(script)], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "torch is ember"


@pytest.mark.parametrize("module, expected", [
    ("torch.utils.mobile_optimizer", "torch.utils.mobile_optimizer is not implemented in ember"),
    ("torch.no_such_module", "torch.no_such_module is not implemented in ember"),
])
def test_compat_runner_names_a_missing_torch_module(module, expected):
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-m", module], capture_output=True, text=True,
                         timeout=60, env=ENV)
    assert out.returncode == 1 and expected in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("safe_path", ["", "1"])
def test_the_rank_starter_leaves_sys_path_as_python_m_bootstrap_does(tmp_path, safe_path):
    """The rank supervisor starts a rank with a small -c starter standing for ``python -m
    ember.distributed._bootstrap``: the script sees the same sys.path, also under PYTHONSAFEPATH (where -m adds no
    working directory and the first PYTHONPATH entry must stay first)."""
    from ember.distributed._agent import _START

    (tmp_path / "show_path.py").write_text("import json, sys\nprint(json.dumps([sys.argv, sys.path]))\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT]), "PYTHONSAFEPATH": safe_path,
           "RANK": "0", "WORLD_SIZE": "1", "EMBER_RUN_DIR": str(tmp_path)}
    seen = []
    for start in (["-m", "ember.distributed._bootstrap"], ["-c", _START]):
        out = subprocess.run([sys.executable, *start, "-m", "show_path", "a"], capture_output=True, text=True,
                             timeout=60, env=env, cwd=cwd)
        assert out.returncode == 0, out.stderr
        seen.append(out.stdout)
    assert seen[1] == seen[0]
