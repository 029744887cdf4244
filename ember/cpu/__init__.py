"""``ember.cpu``: PyTorch's CPU device module. The CPU is ember's one device, always available."""

from __future__ import annotations

from .._missing import module_getattr


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def device_count() -> int:
    """1, as PyTorch counts the CPU."""
    return 1


def current_device() -> str:
    """"cpu"."""
    return "cpu"


def synchronize(device=None) -> None:
    """No-op: CPU work finishes before the call that issued it returns."""


__getattr__ = module_getattr(__name__)  # ember.cpu.amp loads on first use
