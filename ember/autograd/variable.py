"""``Variable``: PyTorch's pre-0.4 wrapper, kept as PyTorch keeps it.

Since PyTorch 0.4 tensors are variables: ``Variable(t)`` returns a new tensor
sharing ``t``'s storage, detached from its graph, with ``requires_grad`` as
given, and ``isinstance(x, Variable)`` is True for every tensor. ``volatile=True``
warns that it has no effect (use ``no_grad()``), as in PyTorch; so do reading ``x.volatile`` (always False) and
setting it.
"""

from __future__ import annotations

import warnings

from .._tensor import VOLATILE_REMOVED, Tensor
from .engine import queue_callback


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: where PyTorch keeps ``queue_callback`` (DDP-style code calls it there)."""

    queue_callback = staticmethod(queue_callback)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)`` -> a Tensor (see the module docstring)."""

    _execution_engine = _ExecutionEngine()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False, volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn(VOLATILE_REMOVED, UserWarning, stacklevel=2)
            if requires_grad:  # (PyTorch's check, after its warning and before it reads data)
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
