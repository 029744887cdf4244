"""``ember.cuda.amp``: the older spelling of ``ember.amp`` for CUDA; disabled, as PyTorch's is without a GPU.

``GradScaler()`` and ``autocast()`` here are ``ember.amp``'s for device "cuda":
``scale`` returns its input, ``step`` calls ``optimizer.step()``, regions change
nothing. Both spellings are deprecated: they warn (FutureWarning) as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from .. import _warnings
from .. import amp as _amp
from .._missing import module_getattr
from ..amp import custom_bwd, custom_fwd

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class GradScaler(_amp.GradScaler):
    """``ember.amp.GradScaler("cuda", ...)``: disabled (no GPU)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                       "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_amp.autocast):
    """``ember.amp.autocast("cuda", ...)``: a disabled region (no GPU)."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        _warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                       "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


__getattr__ = module_getattr(__name__)
