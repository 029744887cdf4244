"""``ember.backends.mkl``: ember does not link MKL itself (NumPy's BLAS is whatever NumPy was built with)."""

from __future__ import annotations

from .._missing import module_getattr


def is_available() -> bool:
    """False: ember has no MKL build of its own."""
    return False


__getattr__ = module_getattr(__name__)
