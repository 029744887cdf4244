"""``ember.backends.openmp``: ember has no OpenMP parallelism of its own (``set_num_threads`` has no effect)."""

from __future__ import annotations

from .._missing import module_getattr


def is_available() -> bool:
    """False: ember is not built with OpenMP (NumPy's BLAS may still use threads)."""
    return False


__getattr__ = module_getattr(__name__)
