"""``autocast``: PyTorch's mixed-precision regions, recorded but computed in full precision.

Inside ``with ember.autocast("cpu", dtype=ember.bfloat16):``
``is_autocast_enabled("cpu")`` is True and ``get_autocast_dtype("cpu")`` is
bfloat16, as in PyTorch, so code that asks gets PyTorch's answers; but ember's
ops keep computing in the dtypes of their inputs (float32 stays float32): ember
has no bfloat16 and runs float16 no faster than float32 on the CPU. On
``device_type="cuda"`` the region is disabled, as PyTorch disables it when no GPU
is present (ember does not repeat PyTorch's warning about that).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._device import device

# PyTorch's default autocast dtype per device type; a region overrides it while it is active.
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16", "mps": "float16"}
_state: dict[str, list] = {}  # device type -> [enabled, dtype]


def _get(device_type: str) -> list:
    if device_type not in _state:
        _state[device_type] = [False, getattr(_dtype, _DEFAULT_DTYPE.get(device_type, "float16"))]
    return _state[device_type]


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
        cache_enabled: accepted, no effect.

    Differences from PyTorch: ops inside the region compute in their inputs' dtypes (see the module docstring).
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
            self._enabled = False  # no GPU: PyTorch disables the region too
        elif self._enabled and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
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
