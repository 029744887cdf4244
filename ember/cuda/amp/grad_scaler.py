"""``ember.cuda.amp.grad_scaler``: the module of PyTorch's deprecated ``torch.cuda.amp.GradScaler``."""

from __future__ import annotations

from ... import _warnings
from ... import amp as _amp
from ..._missing import module_getattr

__all__ = ["GradScaler"]


class GradScaler(_amp.GradScaler):
    """``ember.amp.GradScaler("cuda", ...)``: disabled (no GPU)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                       "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


__getattr__ = module_getattr(__name__)
