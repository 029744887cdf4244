"""PyTorch's check of an ``fp32_precision`` switch's new value (``torch.backends.cuda.matmul.fp32_precision``)."""

from __future__ import annotations

# the precisions PyTorch knows ("bf16" only oneDNN takes)
_KNOWN = ("none", "ieee", "tf32", "bf16")


def checked_fp32_precision(backend: str, op: str, value, takes: tuple[str, ...] = ("none", "ieee", "tf32")) -> str:
    """``value`` for the ``fp32_precision`` of ``backend``'s ``op`` (``"cuda"``, ``"matmul"``), refused as
    PyTorch's setter refuses it: a value that is not a string is a TypeError, an unknown one "Unknown precision",
    one the backend does not take (CUDA's "bf16") its RuntimeError."""
    if not isinstance(value, str):
        raise TypeError("_set_fp32_precision_setter(): incompatible function arguments. The following argument "
                        "types are supported:\n    1. (arg0: str, arg1: str, arg2: str) -> str\n\nInvoked with: "
                        f"{backend!r}, {op!r}, {value!r}")
    if value not in _KNOWN:
        raise RuntimeError(f"Unknown precision: {value}")
    if value not in takes:
        raise RuntimeError(f"backend '{backend}' does not support precision '{value}'")
    return value
