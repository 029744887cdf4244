"""What an RPC message carries and how: :mod:`pickle`, with tensors by value and functions by reference.

A function travels as its module and qualified name (module-level functions, methods of module-level classes,
builtins, ember's functions such as ``ember.add``): the receiving worker imports it, so every worker must run the
same program, as PyTorch requires. Tensors travel by value (their bytes, dtype, shape, ``requires_grad``); inside a
distributed autograd context one that requires grad is recorded for the backward pass (``_grad_context.py``).
As with PyTorch's RPC, unpickling runs code of the sender's choosing: the workers of one job trust each other.

An exception raised by the called function comes back as the same type, its message the remote worker's
``repr`` of it and traceback, as PyTorch builds it.
"""

from __future__ import annotations

import importlib
import io
import pickle
import traceback
import types

from ..._tensor import Tensor
from . import _grad_context

_PROTOCOL = pickle.HIGHEST_PROTOCOL
# Where ember's functions are public. Many are made by factories (``ember.sin`` is a ``_unary.<locals>.op``) or
# wrapped (``ember.add`` takes ``out=`` through a wrapper that keeps the wrapped function's name), so pickle cannot
# find them by their qualified name; they travel as the public name that reaches them.
_PUBLIC_MODULES = ("ember", "ember.nn.functional", "ember.linalg", "ember.special", "ember.fft")
_public_names: dict[int, tuple[str, str]] = {}


def _public_name(fn) -> tuple[str, str] | None:
    if not _public_names:
        for module_name in _PUBLIC_MODULES:
            module = importlib.import_module(module_name)
            for name in getattr(module, "__all__", dir(module)):
                value = getattr(module, name, None)
                if isinstance(value, types.FunctionType):
                    _public_names.setdefault(id(value), (module_name, name))
    return _public_names.get(id(fn))


def _public_function(module_name: str, name: str):
    return getattr(importlib.import_module(module_name), name)


class _Pickler(pickle.Pickler):
    def __init__(self, file, context: _grad_context.DistAutogradContext | None, me: int, dst: int) -> None:
        super().__init__(file, protocol=_PROTOCOL)
        self._context, self._me, self._dst = context, me, dst

    def reducer_override(self, obj):
        if self._context is not None and isinstance(obj, Tensor) and obj.requires_grad:
            send_id = self._context.record_send(obj, self._dst)
            return _grad_context.received, (obj.detach(), self._context.id, self._me, send_id)
        if isinstance(obj, types.FunctionType) and (public := _public_name(obj)) is not None:
            return _public_function, public
        return NotImplemented


def dumps(obj, context: _grad_context.DistAutogradContext | None, me: int, dst: int) -> bytes:
    """``obj`` as bytes for worker ``dst``; tensors that require grad recorded in ``context`` (if any)."""
    buf = io.BytesIO()
    _Pickler(buf, context, me, dst).dump(obj)
    return buf.getvalue()


def loads(data: bytes):
    return pickle.loads(data)


class RemoteException:
    """An exception raised by a call on another worker, as it travels back: its type and PyTorch's message."""

    def __init__(self, exc_type: type, msg: str) -> None:
        self.exc_type, self.msg = exc_type, msg

    @classmethod
    def of(cls, exc: BaseException, worker) -> RemoteException:
        text = f"On {worker}:\n{exc!r}\n{traceback.format_exc()}"
        exc_type = type(exc)
        try:  # a type pickle cannot find by name on the other side (a local class) comes back as RuntimeError
            pickle.loads(pickle.dumps(exc_type))
        except Exception:  # noqa: BLE001
            exc_type = RuntimeError
        return cls(exc_type, text)

    def to_exception(self) -> BaseException:
        try:
            return self.exc_type(self.msg)
        except Exception as e:  # noqa: BLE001  (a type whose constructor needs more than a message)
            return RuntimeError(f"Failed to create original exception type. Error msg was {e} Original exception "
                                f"on remote side was {self.msg}")
