"""``ember.xpu``: PyTorch's module for Intel GPUs (XPU), as PyTorch's build without XPU answers.

Programs probe it beside CUDA (``"xpu" if torch.xpu.is_available() else ...``) and release its cache
unconditionally; PyTorch's CPU build answers those calls quietly, and so does ember: ``is_available()``
is False, ``device_count()`` 0, seeding and ``empty_cache`` do nothing. Functions that need a device
(``set_device``, ``current_device``, ``synchronize``) raise ``XpuUnavailableError``, an AssertionError
as PyTorch's "Torch not compiled with XPU enabled" (and a RuntimeError, as for CUDA).
"""

from __future__ import annotations

from ._device import needs_device
from ._missing import module_getattr


class XpuUnavailableError(RuntimeError, AssertionError):
    """An XPU-only function was called; ember has no XPU backend."""


def is_available() -> bool:
    """False: ember computes on the CPU."""
    return False


def device_count() -> int:
    """0: no XPU device."""
    return 0


def is_initialized() -> bool:
    """False: no XPU context is ever made."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as PyTorch answers without an XPU."""
    return False


def empty_cache() -> None:
    """No-op: there is no XPU memory to release (PyTorch does nothing when XPU was never initialised)."""


def manual_seed(seed: int) -> None:
    """No-op: there is no XPU generator (``ember.manual_seed`` seeds the CPU one)."""


def manual_seed_all(seed: int) -> None:
    """No-op, like ``manual_seed``."""


set_device = needs_device("xpu", "set_device", XpuUnavailableError)
current_device = needs_device("xpu", "current_device", XpuUnavailableError)
synchronize = needs_device("xpu", "synchronize", XpuUnavailableError)

__getattr__ = module_getattr(__name__)
