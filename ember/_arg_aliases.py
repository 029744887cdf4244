"""NumPy's keyword spellings that PyTorch accepts for its native ops: ``axis=`` for ``dim=`` and
``keepdims=`` for ``keepdim=`` (``x.sum(axis=0, keepdims=True)``, ``torch.cumprod(x, axis=1)``).

PyTorch's argument parser maps these for every op it implements natively, whatever the op; its ops
written in Python (``torch.norm``, ``torch.split``, ``torch.unique``, ``Tensor.unflatten``) take only
PyTorch's own names. ember does the same with one wrapper, applied to the Tensor class's methods once, when
the class is defined (``accept_numpy_names`` on ``Tensor``), and to its top-level functions (``ember/__init__.py``).
Type checkers see the methods' own signatures (PyTorch's stubs do not list the NumPy spellings either).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import FunctionType
from typing import TypeVar

_C = TypeVar("_C", bound=type)

ALIASES = {"axis": "dim", "keepdims": "keepdim"}
PYTHON_LEVEL = frozenset({"norm", "split", "unique"})  # PyTorch's Python ops: no NumPy spellings


def _rename(name: str, kwargs: dict) -> dict:
    for alias, own in ALIASES.items():
        if alias in kwargs:
            if own in kwargs:
                raise TypeError(f"{name}() got both '{own}' and its NumPy spelling '{alias}'")
            kwargs[own] = kwargs.pop(alias)
    return kwargs


def with_numpy_names(name: str, fn: Callable) -> Callable:
    """``fn``, also accepting ``axis=``/``keepdims=`` when it has ``dim``/``keepdim`` (else ``fn`` itself)."""
    if name in PYTHON_LEVEL or name.startswith("__") or not callable(fn):
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "dim" not in params and "keepdim" not in params:
        return fn

    @functools.wraps(fn)
    def accepting_numpy_names(*args, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            _rename(name, kwargs)
        return fn(*args, **kwargs)

    # inspect.signature tells what the wrapper accepts: fn's parameters and the NumPy spellings
    extra = [inspect.Parameter(alias, inspect.Parameter.KEYWORD_ONLY, default=None)
             for alias, own in ALIASES.items() if own in params]
    listed = list(params.values())
    tail = [p for p in listed if p.kind is p.VAR_KEYWORD]
    accepting_numpy_names.__signature__ = inspect.Signature(
        [p for p in listed if p.kind is not p.VAR_KEYWORD] + extra + tail)
    return accepting_numpy_names


def accept_numpy_names(cls: _C) -> _C:
    """Class decorator: each method of ``cls`` (its own and its mixins') that has ``dim``/``keepdim`` also takes
    ``axis=``/``keepdims=``; the others are left as they are."""
    for name in dir(cls):
        method = inspect.getattr_static(cls, name)
        if isinstance(method, FunctionType):
            wrapped = with_numpy_names(name, method)
            if wrapped is not method:
                setattr(cls, name, wrapped)
    return cls
