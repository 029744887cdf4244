"""``ember.backends.mkldnn``: oneDNN, which ember does not use (``is_available()`` is False; PyTorch's CPU
builds answer True). ``enabled`` is kept and has no effect."""

from __future__ import annotations

from .._missing import module_getattr

enabled: bool = True


def is_available() -> bool:
    """False: ember's CPU kernels are NumPy's, not oneDNN's."""
    return False


__getattr__ = module_getattr(__name__)
