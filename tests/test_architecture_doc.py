"""docs/ARCHITECTURE.md matches the code: every file and name it writes in backticks (and every file and function
its training-step walk-throughs name) exists; the files it lists for a single-process step and a DDP step are the
files such a step runs, traced (tests/dist_scripts/step_files.py); DDP uses the reducer only through the methods it
lists. (The layout block's completeness: tests/test_layout.py.)"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

import ember

DOC = Path(ROOT, "docs", "ARCHITECTURE.md").read_text()
EMBER = Path(ember.__file__).parent

# Backticked names that are PyTorch's, NumPy's or Python's, not ember's (the document compares with them).
FOREIGN = {"derivatives.yaml", "__array_ufunc__", "__array_function__", "numpy", "u", "J v", "u^T J v"}
# What a walk-through's variables stand for.
VARIABLES = {"loss": "ember.Tensor", "p": "ember.nn.Parameter", "x": "ember.Tensor", "model": "ember.nn.Module",
             "optimizer": "ember.optim.Optimizer", "reducer": "ember.distributed.reducer.Reducer",
             "comm": "ember.distributed.comm.Communicator", "node": "ember.autograd.graph.Node"}


def section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def code_blocks(text: str) -> list[str]:
    return re.findall(r"```text\n(.*?)```", text, flags=re.S)


def backticked(text: str) -> list[str]:
    return re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text)


CLASS_ATTRS: dict[str, set[str]] = {}  # a class's names: methods, class attributes, self.X, __slots__


def _attributes(cls: ast.ClassDef) -> set[str]:
    found = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(
                node.value, ast.Name) and node.value.id == "self":
            found.add(node.attr)
    for node in cls.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                found.add(target.id)
                if target.id == "__slots__" and isinstance(node.value, (ast.Tuple, ast.List)):
                    found.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
    return found


def _index() -> tuple[dict[str, list[str]], dict[str, list[str]], set[str]]:
    """Modules by every dotted suffix of their name; the modules defining each class; every name ember defines
    (functions, classes, their attributes and parameters, module-level names)."""
    by_suffix: dict[str, list[str]] = {}
    classes: dict[str, list[str]] = {}
    names: set[str] = set()
    for path in EMBER.rglob("*.py"):
        parts = ("ember", *path.relative_to(EMBER).with_suffix("").parts)
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), []).append(".".join(parts))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if isinstance(node, ast.ClassDef):
                    if node in tree.body:
                        classes.setdefault(node.name, []).append(".".join(parts))
                    CLASS_ATTRS.setdefault(node.name, set()).update(_attributes(node))
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)  # __slots__ entries, keyword names read from dicts
    return by_suffix, classes, names


BY_SUFFIX, CLASSES, NAMES = _index()


def _object(dotted: str):
    """The object a dotted name denotes: a module (by a unique suffix of its name), an attribute of one, or an
    attribute of ember's top level (Tensor, ...) or of a walk-through variable's class."""
    head, *rest = dotted.split(".")
    if head in VARIABLES:
        obj = _object(VARIABLES[head])
        return _getattrs(obj, rest)
    for i in range(len(dotted.split(".")), 0, -1):
        prefix = ".".join(dotted.split(".")[:i])
        modules = BY_SUFFIX.get(prefix, [])
        if f"ember.{prefix}" in modules:  # ``autograd.grad`` is ember.autograd's, not ember.distributed.autograd's
            modules = [f"ember.{prefix}"]
        if len(set(modules)) == 1:
            return _getattrs(importlib.import_module(modules[0]), dotted.split(".")[i:])
    homes = sorted(set(CLASSES.get(head, [])))
    assert len(homes) == 1, f"{dotted!r}: no module or single class {head!r} in ember ({homes})"
    return _getattrs(getattr(importlib.import_module(homes[0]), head), rest)


def _getattrs(obj, names):
    for name in names:
        # An instance attribute (set in a method, or a slot) is not on the class: the class's source says.
        declared = isinstance(obj, type) and any(name in CLASS_ATTRS.get(k.__name__, ()) for k in obj.__mro__)
        assert hasattr(obj, name) or declared, f"{getattr(obj, '__name__', obj)!r} has no {name!r}"
        obj = getattr(obj, name, None)
    return obj


def check_name(token: str) -> None:
    """Assert that what ``token`` names exists in ember (a path, a dotted name, a name, a call, an assignment)."""
    token = token.strip()
    if token in FOREIGN or hasattr(builtins, token):
        return
    if re.fullmatch(r"\w+\*", token):  # a family of names: _single_tensor_*
        assert any(n.startswith(token[:-1]) for n in NAMES), f"no name in ember starts with {token[:-1]!r}"
        return
    if token == "torch" or token.startswith("torch."):  # PyTorch's name: ember's counterpart
        return check_name("ember" + token[len("torch"):])
    if m := re.fullmatch(r"from (\S+) import (\w+)", token):
        return check_name(f"{m[1]}.{m[2]}")
    if m := re.fullmatch(r"import (\S+)", token):
        return check_name(m[1]) if m[1] == "torch" or m[1].startswith(("ember", "torch.")) else None
    if re.fullmatch(r"[\w./]+(\.py|/)", token):
        return check_path(token)
    if m := re.fullmatch(r"([\w.]+)\s*=.*", token):  # is_view = True, cat="ddp", p.data = ...
        return check_name(m[1])
    if m := re.fullmatch(r"([A-Za-z_][\w.]*)\(.*\)(\(.*\))?", token):  # a call: zero_grad(set_to_none=False)
        for keyword in re.findall(r"(\w+)=", token):
            assert keyword in NAMES, f"{token!r}: no keyword {keyword!r} in ember"
        return check_name(m[1])
    if m := re.fullmatch(r"([A-Za-z_][\w.]*)(\[.*\])?", token):
        name = m[1]
        if name.startswith("self."):
            assert name.split(".")[1] in NAMES, f"{token!r}: no attribute {name.split('.')[1]!r} in ember"
        elif "." in name:
            _object(name)
        else:
            assert name in NAMES or name in BY_SUFFIX, f"{token!r} is not defined in ember"
    # anything else is an expression the prose quotes (`g * out`, a command line): nothing to look up


def check_path(path: str) -> None:
    for base in (EMBER, Path(ROOT)):
        if (base / path).exists():
            return
    matches = [p for p in EMBER.rglob(path.rstrip("/")) if p.name == Path(path).name]
    assert len(matches) == 1, f"{path!r}: no such file in ember (or the name is ambiguous: {matches})"


@pytest.mark.parametrize("token", sorted(set(backticked(DOC))))
def test_every_backticked_name_exists(token):
    check_name(token)


WALKS = ("One training step, single process", "One training step under DistributedDataParallel")


@pytest.mark.parametrize("title", WALKS)
def test_the_walk_throughs_name_real_files_and_functions(title):
    narrative = code_blocks(section(title))[0]
    paths = re.findall(r"[\w/]+\.py", narrative)
    assert paths, "the walk-through names no file"
    for path in paths:
        check_path(path)
    text = re.sub(r"[\w/]+\.py", " ", narrative)
    dotted = set(re.findall(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?", text))
    private = set(re.findall(r"(?<![\w.])(_[a-z]\w*\*?)", text))
    called = set(re.findall(r"(?<![\w.])([a-z]\w*)\(\)", text))
    assert dotted and private
    for name in sorted(dotted | private | called):
        check_name(name)


def listed_files(title: str) -> dict[str, str]:
    """The ``path  why`` table of a walk-through (its second text block)."""
    block = code_blocks(section(title))[1]
    rows = dict(re.findall(r"^ {4}(\S+\.py) {2,}(\S.*)$", block, flags=re.M))
    assert len(rows) == len(block.strip().splitlines()), "a row of the files table is not `path  why`"
    return rows


def _traced(tmp_path, distributed: bool) -> set[str]:
    out = tmp_path / "files.json"
    script = os.path.join(ROOT, "tests", "dist_scripts", "step_files.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_DIAGNOSTICS")}
    env["PYTHONPATH"] = ROOT
    cmd = [sys.executable, script, str(out)]
    if distributed:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "110",
               script, str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return set(json.loads(out.read_text()))


def test_single_process_step_runs_the_listed_files(tmp_path):
    listed = set(listed_files(WALKS[0]))
    ran = _traced(tmp_path, distributed=False)
    assert ran - listed == set(), "the step runs files the document does not list"
    assert listed - ran == set(), "the document lists files the step does not run"


def test_ddp_step_runs_the_listed_files(tmp_path):
    pytest.importorskip("mpi4py")
    listed = set(listed_files(WALKS[0])) | set(listed_files(WALKS[1]))
    ran = _traced(tmp_path, distributed=True)
    assert ran - listed == set(), "the DDP step runs files the document does not list"
    assert listed - ran == set(), "the document lists files the DDP step does not run"


def test_ddp_uses_only_the_reducer_methods_the_document_lists():
    paragraph = section(WALKS[1]).split("these methods only", 1)[1].split("The non-finite policy", 1)[0]
    documented = {t for t in backticked(paragraph) if t.isidentifier() and t != "join"} - {"Reducer"}
    tree = ast.parse((EMBER / "nn" / "parallel" / "distributed.py").read_text())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if (isinstance(owner, ast.Attribute) and owner.attr == "reducer") or (
                    isinstance(owner, ast.Name) and owner.id == "reducer"):
                used.add(node.attr)
    assert used == documented
    from ember.distributed.reducer import Reducer

    assert all(name in Reducer.__doc__ for name in documented)


def test_the_checker_fails_on_what_is_not_there():
    for wrong in ("autograd/nowhere.py", "engine.no_such_function", "GradStore.not_a_method", "not_an_ember_name",
                  "zero_grad(no_such_keyword=1)", "loss.not_a_method()",
                  "GradStore.zero_grads"):  # zero_grads is grad_store.py's function, not GradStore's method
        with pytest.raises(AssertionError):
            check_name(wrong)
    check_name("engine.sum_to_shape")
    check_name("GradStore.issue_zeros")


def test_grad_is_set_where_the_document_says():
    paragraph = DOC.split("Apart from the user (Tensor's `grad` setter)", 1)[1].split("Nothing reads", 1)[0]
    documented = {t.split(".")[-1] for t in backticked(paragraph) if re.fullmatch(r"[\w.]+", t)}
    setters = set()
    for path in EMBER.rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
                    if any(isinstance(t, ast.Attribute) and t.attr == "_grad" for t in targets):
                        setters.add(fn.name)
    # Tensor's own: the setter itself, a new tensor's empty slot (_fill; Node.apply's result, _fill's work inline;
    # vmap's BatchedTensor's, func/_batched.wrap), a deep copy's copy of the gradient
    assert setters - {"grad", "_fill", "apply", "wrap", "__deepcopy__"} <= documented, setters - documented
    assert {"set_first_grad", "issue_zeros", "adopt", "zero_grads", "accumulate_sparse", "add_to_grad",
            "accumulate_recorded"} <= setters
