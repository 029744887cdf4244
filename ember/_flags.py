"""Process-wide switches PyTorch programs set at start-up: deterministic algorithms, float32 matmul precision,
the default device. ember records them and answers as PyTorch does; none changes what ember computes
(NumPy on the CPU is deterministic and always computes float32 matmuls in float32)."""

from __future__ import annotations

from ._device import default_device, set_default
from ._device import device as _device
from ._size import c_type_name
from ._warnings import warn_in

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}
_PRECISIONS = ("highest", "high", "medium")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the setting (ember's ops are deterministic either way)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {c_type_name(mode)}")
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """"default"/0: deterministic algorithms off; "warn"/1: on, warning only; "error"/2: on (as
    ``use_deterministic_algorithms``)."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2, as ``set_deterministic_debug_mode`` takes them."""
    return 0 if not _state["deterministic"] else 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium" (ember always computes float32 matmuls in float32, i.e. "highest")."""
    if precision not in _PRECISIONS:
        # PyTorch's comes from its C++ code, named after the frame that called it: torch/__init__.py's
        warn_in("torch", f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                "set_float32_matmul_precision call has no effect.", UserWarning)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def set_default_device(device) -> None:
    """Accepts None and the CPU (ember's only device), and the meta device (the factories then make meta
    tensors: ``ember/_meta.py``); another device is ember's clear RuntimeError."""
    set_default(device)


def get_default_device() -> _device:
    return default_device()
