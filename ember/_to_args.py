"""The arguments of ``Module.to(...)``, read as PyTorch reads them (``torch._C._nn._parse_to``, which Lightning's
and accelerate's ``to`` overrides call too): one of three overloads, giving (device, dtype, non_blocking,
memory_format)."""

from __future__ import annotations

from . import _dtype
from ._device import device
from ._memory_format import memory_format
from ._tensor import Tensor

_OVERLOADS = (
    (("device", "dtype", "non_blocking", "copy"), ()),
    (("dtype", "non_blocking", "copy"), ("dtype",)),
    (("tensor", "non_blocking", "copy"), ("tensor",)),
)
_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = "
    "None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n")
_ACCEPTS = {
    "device": lambda v: v is None or isinstance(v, (str, device)) or (isinstance(v, int) and not isinstance(v, bool)),
    "dtype": lambda v: v is None or isinstance(v, _dtype.dtype),
    "tensor": lambda v: isinstance(v, Tensor),
    "non_blocking": lambda v: isinstance(v, bool),
    "copy": lambda v: isinstance(v, bool),
    "memory_format": lambda v: v is None or isinstance(v, memory_format),
}


def _bind(names: tuple, required: tuple, args: tuple, kwargs: dict) -> dict | None:
    """``args``/``kwargs`` bound to one overload's parameters (``memory_format`` keyword-only), or None if they do
    not fit it."""
    if len(args) > len(names) or not set(kwargs) <= {*names, "memory_format"}:
        return None
    bound = dict(zip(names, args))
    if set(bound) & set(kwargs):
        return None
    bound.update(kwargs)
    if any(name not in bound or bound[name] is None for name in required):
        return None
    return bound if all(_ACCEPTS[name](value) for name, value in bound.items()) else None


def _kind(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else f"torch.{type(value).__name__}" \
        if isinstance(value, (_dtype.dtype, device, memory_format)) else type(value).__name__


def parse_to(*args, **kwargs) -> tuple:
    """``(device, dtype, non_blocking, memory_format)`` of ``to(*args, **kwargs)``: ``to(device=None, dtype=None,
    non_blocking=False)``, ``to(dtype, non_blocking=False)`` or ``to(tensor, non_blocking=False)`` (the tensor's
    device and dtype), each with the keyword ``memory_format``; as PyTorch's, an integer device is a CUDA index,
    ``copy=True`` is a RuntimeError, and arguments that fit no overload are its TypeError."""
    for names, required in _OVERLOADS:
        bound = _bind(names, required, args, kwargs)
        if bound is not None:
            break
    else:
        got = ", ".join([_kind(a) for a in args] + [f"{k}={_kind(v)}" for k, v in kwargs.items()])
        if kwargs and not args:
            got += ", "  # (PyTorch's words for keywords only: "got (foo=int, )")
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        + _SIGNATURES)
    if bound.get("copy"):
        raise RuntimeError(".to() does not accept copy argument")
    tensor, dev = bound.get("tensor"), bound.get("device")
    if tensor is not None:
        dev = tensor.device
    elif isinstance(dev, int):
        dev = device("cuda", dev)
    elif dev is not None:
        dev = device(dev)
    dtype = tensor.dtype if tensor is not None else bound.get("dtype")
    return dev, dtype, bound.get("non_blocking", False), bound.get("memory_format")
