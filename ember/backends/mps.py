"""``ember.backends.mps``: Apple's Metal backend, which ember does not have."""

from __future__ import annotations

from .._missing import module_getattr


def is_available() -> bool:
    """False: ember computes on the CPU (PyTorch's answer off macOS)."""
    return False


def is_built() -> bool:
    """False: ember is not built with MPS."""
    return False


__getattr__ = module_getattr(__name__)
