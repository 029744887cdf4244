"""``ember.amp``: PyTorch's automatic mixed precision API (``autocast``, ``GradScaler``).

``GradScaler("cpu")`` scales, unscales, skips steps and grows/backs off the scale
as PyTorch's; inside ``autocast("cpu")`` regions ops cast to bfloat16/float16 or float32
as PyTorch's CPU autocast does (see ``autocast_mode``). Programs written for a GPU build their scaler
and regions for "cuda": those are disabled, as PyTorch disables them without a GPU.
"""

from __future__ import annotations

from .._missing import module_getattr
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

__getattr__ = module_getattr(__name__)
