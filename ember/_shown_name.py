"""The package name that reprs print: ``torch`` where ``torch`` is ember (``python -m ember.compat``), else
``ember``.

A program run under ember.compat prints ``torch.Size([2, 3])``, ``torch.float32`` and
``torch.return_types.max(...)`` where PyTorch does, so its output reads (and diffs) as under PyTorch; imported as
``ember`` the same objects print ``ember.Size([2, 3])``. Decided at each repr, as ``ember.__version__`` is: the
compat runner installs its alias after ember's objects exist.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar


def package_name() -> str:
    """``"torch"`` while ``torch`` is ember in this process, ``"ember"`` otherwise."""
    modules = sys.modules
    ember = modules.get("ember")
    return "torch" if ember is not None and modules.get("torch") is ember else "ember"


# ember's classes whose names PyTorch's programs read (``'torch' in str(type(x))``, as tensorboardX's ``make_np``
# tells a tensor from other values): class -> (its ember module, the module PyTorch names it by)
_PYTORCH_MODULE: dict[type, tuple[str, str]] = {}
_Class = TypeVar("_Class", bound=type)


def shown_as_pytorchs(torch_module: str) -> Callable[[_Class], _Class]:
    """Class decorator: where ``torch`` is ember, the class's ``__module__`` is ``torch_module``, so that
    ``str(type(x))`` prints PyTorch's ``<class 'torch.Tensor'>``; imported as ``ember`` nothing changes.

    Set once, when ``torch`` first resolves to ember (``show_pytorch_names``), or at the class's definition where
    that happened before: nothing is decided on an op's path (a metaclass ``__repr__`` would slow
    ``isinstance``). Pickle finds the class by that name too (``torch`` is ember there); a pickled tensor names
    its class by its ember path (``ember_path``), which loads in a process without the alias as well."""

    def mark(cls: _Class) -> _Class:
        _PYTORCH_MODULE[cls] = (cls.__module__, torch_module)
        if package_name() == "torch":
            _show(cls)
        return cls

    return mark


def show_pytorch_names() -> None:
    """The marked classes take PyTorch's module names (``import torch`` has just given ember)."""
    for cls in _PYTORCH_MODULE:
        _show(cls)


def _show(cls: type) -> None:
    ember_module, torch_module = _PYTORCH_MODULE[cls]
    cls.__module__ = torch_module
    # the module by that name, as importing it through the alias would record it (inspect.getmodule reads it)
    sys.modules.setdefault(torch_module, sys.modules[ember_module])


def ember_path(cls: type) -> type | str:
    """``cls`` itself, or for a class now named as PyTorch's its ember path (``"ember._tensor.Tensor"``)."""
    names = _PYTORCH_MODULE.get(cls)
    return cls if names is None or cls.__module__ == names[0] else f"{names[0]}.{cls.__qualname__}"


def class_at(path: str) -> type:
    """The class at the ember path ``ember_path`` gave."""
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)
