"""``ember.backends.openmp``: ember is not built with OpenMP; its elementwise kernels use a thread pool.

``ember.set_num_threads`` sets that pool's size (see ``ember._parallel``).
"""

from __future__ import annotations

from .._missing import module_getattr


def is_available() -> bool:
    """False: ember is not built with OpenMP (its kernels use Python threads over NumPy, BLAS its own)."""
    return False


__getattr__ = module_getattr(__name__)
