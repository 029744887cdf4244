"""``ember.cuda.amp``: the older spelling of ``ember.amp`` for CUDA; disabled, as PyTorch's is without a GPU.

``GradScaler()`` and ``autocast()`` here are ``ember.amp``'s for device "cuda":
``scale`` returns its input, ``step`` calls ``optimizer.step()``, regions change
nothing. Both spellings are deprecated: they warn (FutureWarning) as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from ... import _warnings
from ... import amp as _amp
from ..._missing import module_getattr
from ...amp import custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class autocast(_amp.autocast):
    """``ember.amp.autocast("cuda", ...)``: a disabled region (no GPU)."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        _warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                       "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


__getattr__ = module_getattr(__name__)
