"""``autocast``: PyTorch's mixed-precision regions on the CPU.

Inside ``with ember.autocast("cpu", dtype=ember.bfloat16):`` (or ``dtype=ember.float16``) ops cast their
floating arguments as PyTorch's CPU autocast does: matmul, linear, convolutions and attention compute in
bfloat16 and return bfloat16; the losses (and prod, cdist) compute in float32; other ops keep their inputs'
dtypes (``_autocast.py`` has the op lists). ``is_autocast_enabled("cpu")`` and ``get_autocast_dtype("cpu")``
answer as PyTorch's. On ``device_type="cuda"`` the region is disabled, as PyTorch disables it when no GPU is
present (ember does not repeat PyTorch's warning about that).

Differences from PyTorch: ember's half-precision ops are not faster than float32 (NumPy computes them in
float32 and rounds); autocast gives PyTorch's dtypes and roundings, not its speed-up.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import _dtype, _warnings
from .._autocast import get as _get
from .._device import device


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region for ``device_type`` is active (PyTorch's default device type: cuda)."""
    return _get(device_type)[0]


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype the current (or next) autocast region of ``device_type`` names."""
    return _get(device_type)[1]


def get_autocast_gpu_dtype() -> _dtype.dtype:
    """PyTorch's deprecated ``get_autocast_dtype("cuda")``."""
    warnings.warn("torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """PyTorch's deprecated ``get_autocast_dtype("cpu")``."""
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast for ``device_type`` on or off outside a ``with`` block, as ``torch.set_autocast_enabled``."""
    _get(device_type)[0] = bool(enabled)


def is_autocast_available(device_type: str) -> bool:
    """Whether PyTorch could autocast on ``device_type`` here: only the CPU."""
    return device_type == "cpu"


class autocast:
    """Context manager and decorator marking a mixed-precision region.

    Args:
        device_type: "cpu" or "cuda" (any device name ember knows; others are a RuntimeError, as in PyTorch).
        dtype: the lower precision PyTorch would use (default: bfloat16 on the CPU, float16 on CUDA).
            On the CPU only bfloat16 and float16 are accepted; another dtype disables the region with
            PyTorch's warning.
        enabled: False makes the region a no-op.
        cache_enabled: accepted, no effect (ember keeps no cache of cast weights).
    """

    def __init__(self, device_type: str, dtype: _dtype.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        device(device_type)  # an unknown device type is PyTorch's RuntimeError
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        if device_type != "cpu":
            if self._enabled and device_type == "cuda":
                _warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                               through={"ember.cuda": "torch.cuda.amp.autocast_mode"})  # its deprecated subclass
            self._enabled = False  # no GPU: PyTorch disables the region too
        elif self._enabled and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
            _warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                           "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
            self._enabled = False
        self._saved: list[list] = []

    def __enter__(self) -> autocast:
        state = _get(self.device)
        self._saved.append(list(state))
        state[:] = [self._enabled, self.fast_dtype]
        return self

    def __exit__(self, *exc: Any) -> None:
        _get(self.device)[:] = self._saved.pop()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any):
            with self:
                return func(*args, **kwargs)

        return wrapper


def custom_fwd(fwd: Callable | None = None, *, device_type: str = "cuda", cast_inputs=None) -> Callable:
    """Decorator for a custom Function's ``forward`` under autocast; ember runs it unchanged."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str = "cuda") -> Callable:
    """Decorator for a custom Function's ``backward`` under autocast; ember runs it unchanged."""
    if bwd is None:
        return lambda f: f
    return bwd
