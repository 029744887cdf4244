"""``ember.cpu.amp``: the older spelling of ``ember.amp`` for the CPU.

``autocast()`` is ``ember.amp.autocast("cpu", ...)`` (bfloat16 by default) and ``GradScaler()`` is
``ember.amp.GradScaler("cpu", ...)``.
Both spellings are deprecated: they warn (FutureWarning) as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from .. import _dtype, _warnings
from .. import amp as _amp
from .._missing import module_getattr

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    """``ember.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                       "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_amp.autocast):
    """``ember.amp.autocast("cpu", ...)`` with PyTorch's default dtype, bfloat16."""

    def __init__(self, enabled: bool = True, dtype: Any = _dtype.bfloat16, cache_enabled: bool = True) -> None:
        _warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                       "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


__getattr__ = module_getattr(__name__)
