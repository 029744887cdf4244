"""Autocast's state and the casts it applies to ops (the regions themselves: ``amp/autocast_mode.py``).

Inside an enabled CPU region PyTorch casts the floating tensor arguments of some ops before running
them (its CPU autocast op lists):

- ``lower_precision`` ops (matmul, mm, bmm, addmm, baddbmm, addbmm, linear, convolutions and transposed
  convolutions, scaled_dot_product_attention, prelu; einsum, which PyTorch runs through bmm) compute in
  the region's dtype (bfloat16 or float16) and return it;
- ``full_precision`` ops (the losses, prod, cdist) compute in float32 and return float32;
- every other op runs on its inputs' dtypes (softmax of float32 stays float32, of bfloat16 bfloat16).

The op runs with autocast off, as PyTorch's kernels do (an op built from others casts once). The casts
are differentiable: gradients reach float32 parameters in float32.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar
from typing import cast as cast_fn

from . import _dtype

# device type -> [enabled, dtype]; PyTorch's default autocast dtype per device type until a region sets one
DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16", "mps": "float16"}
state: dict[str, list] = {}


def get(device_type: str) -> list:
    """The [enabled, dtype] of ``device_type`` (created with PyTorch's default dtype)."""
    if device_type not in state:
        state[device_type] = [False, getattr(_dtype, DEFAULT_DTYPE.get(device_type, "float16"))]
    return state[device_type]


def _cast(value, target: _dtype.dtype):
    from ._tensor import Tensor
    from .ops.elementwise import cast

    if isinstance(value, Tensor):
        return cast(value, target) if value.dtype.is_floating_point and value.dtype is not target else value
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cast(v, target) for v in value)
    return value


_F = TypeVar("_F", bound=Callable)


def _policy(to_float32: bool) -> Callable[[_F], _F]:
    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            cpu = state.get("cpu")
            if cpu is None or not cpu[0]:
                return fn(*args, **kwargs)
            target = _dtype.float32 if to_float32 else cpu[1]
            args = [_cast(a, target) for a in args]
            kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            cpu[0] = False
            try:
                return fn(*args, **kwargs)
            finally:
                cpu[0] = True

        return cast_fn(_F, wrapper)  # the same signature as fn, for type checkers

    return decorate


lower_precision = _policy(to_float32=False)
full_precision = _policy(to_float32=True)
