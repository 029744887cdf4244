"""docs/api.md tells the truth: its tables list what exists, and everything PyTorch-named that exists is listed.

A table belongs to the heading above it whose first code span is a dotted path
(``ember.nn``, ``ember.Tensor``; a trailing ``()`` means the names are that
callable's parameters). Names are the code spans in a row's last cell; a name
followed by † is an ember extension and need not exist in PyTorch.
"""

import importlib
import inspect
import os
import re

import pytest
import torch

import ember

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "api.md")
PATH = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")
NAME = re.compile(r"`([A-Za-z_]\w*)`(†?)")


def resolve(path: str):
    """The object a dotted path names: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def doc_tables(doc: str = DOC) -> dict[str, list[tuple[str, bool]]]:
    """{heading path: [(name, is_extension), ...]} for every table in ``doc``."""
    tables: dict[str, list[tuple[str, bool]]] = {}
    path = None
    with open(doc, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                spans = re.findall(r"`([^`]+)`", line)
                path = spans[0] if spans and PATH.match(spans[0]) else None
            elif path and line.startswith("|") and not line.startswith("|---"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if cells[0] != "Group":
                    tables.setdefault(path, []).extend((n, bool(ext)) for n, ext in NAME.findall(cells[-1]))
    return tables


TABLES = doc_tables()


def has(obj, name: str, call: bool) -> bool:
    """``name`` is a parameter of ``obj`` (call) or an attribute (module ``__getattr__`` included)."""
    return name in inspect.signature(obj).parameters if call else hasattr(obj, name)


def test_doc_has_the_namespaces():
    for path in ("ember", "ember.Tensor", "ember.autograd", "ember.nn", "ember.nn.functional", "ember.nn.init",
                 "ember.nn.utils", "ember.optim", "ember.optim.lr_scheduler", "ember.utils.data",
                 "ember.distributed", "ember.distributed.algorithms", "ember.cuda", "ember.fft",
                 "ember.nn.parallel.DistributedDataParallel()"):
        assert TABLES.get(path), f"docs/api.md has no table for {path}"


@pytest.mark.parametrize("path", sorted(TABLES))
def test_listed_names_exist(path):
    """Every listed name exists in ember, and in PyTorch at the same path unless marked †.

    ``ember.vision`` stands for torchvision, which is not installed next to the oracle torch (it would replace
    it): its names are checked in ember only; tests/test_vision_*.py compare them with torchvision's semantics."""
    call = path.endswith("()")
    ember_obj = resolve(path.removesuffix("()"))
    torch_obj = None
    if not all(ext for _, ext in TABLES[path]) and not path.startswith("ember.vision"):
        torch_obj = resolve("torch" + path.removesuffix("()")[len("ember"):])
    for name, ext in TABLES[path]:
        assert has(ember_obj, name, call), f"{path}: {name} does not exist"
        if not ext and torch_obj is not None:
            assert has(torch_obj, name, call), f"{path}: {name} is not in PyTorch; mark it † in docs/api.md"


def public(module_name: str) -> set[str]:
    """A module's public API: its __all__, else the functions, classes and values ember defines for it."""
    mod = importlib.import_module(module_name)
    if hasattr(mod, "__all__"):  # submodules have their own tables
        return {n for n in mod.__all__ if not inspect.ismodule(getattr(mod, n))}
    out = set()
    for name in dir(mod):
        value = getattr(mod, name)
        if name.startswith("_") or inspect.ismodule(value):
            continue
        owner = value.__module__ if inspect.isclass(value) or callable(value) else type(value).__module__
        if owner == module_name or owner.startswith(module_name + "."):  # defined here or in a submodule
            out.add(name)
    return out


@pytest.mark.parametrize("module_name", ["ember", "ember.autograd", "ember.nn", "ember.nn.functional",
                                         "ember.nn.init", "ember.nn.utils", "ember.optim",
                                         "ember.optim.lr_scheduler", "ember.utils.data", "ember.distributed",
                                         "ember.distributed.algorithms", "ember.nn.parallel", "ember.cuda",
                                         "ember.fft", "ember.distributed.device_mesh", "ember.distributed.tensor",
                                         "ember.distributed.tensor.parallel"])
def test_pytorch_named_api_is_listed(module_name):
    torch_mod = importlib.import_module("torch" + module_name[len("ember"):])
    listed = {n for n, _ in TABLES.get(module_name, [])}
    missing = sorted(n for n in public(module_name) if hasattr(torch_mod, n) and n not in listed)
    assert not missing, f"add to the {module_name} table of docs/api.md: {missing}"


def test_tensor_and_module_methods_are_listed():
    for path, cls, torch_cls in (("ember.Tensor", ember.Tensor, torch.Tensor),
                                 ("ember.nn.Module", ember.nn.Module, torch.nn.Module)):
        listed = {n for n, _ in TABLES[path]}
        # (hasattr: dir(ember.Tensor) also lists the names it lacks, as missing features: ember._missing)
        missing = sorted(n for n in dir(cls) if not n.startswith("_") and hasattr(torch_cls, n) and n not in listed
                         and hasattr(cls, n))
        assert not missing, f"add to the {path} table of docs/api.md: {missing}"


def test_parser_reads_names_and_marks(tmp_path):
    """The parser finds every name and its † mark, so a made-up name reaches the existence check."""
    fake = tmp_path / "api.md"
    fake.write_text("## `ember.nn`\n\n| Group | Names |\n|---|---|\n| Layers | `Linear` `NoSuchLayer` `Foo`† |\n"
                    "## Prose `python -m x`\n\n| A | `ignored` |\n", encoding="utf-8")
    tables = doc_tables(str(fake))
    assert tables == {"ember.nn": [("Linear", False), ("NoSuchLayer", False), ("Foo", True)]}
    assert not hasattr(ember.nn, "NoSuchLayer")
