"""The one array-module handle.

Every piece of array math in ember comes from ``xp``. Today it is NumPy; a GPU
array library with NumPy's interface (CuPy) can replace it here without any op
changing.

Before NumPy loads, its OpenBLAS is told to let idle worker threads sleep at once
(``OPENBLAS_THREAD_TIMEOUT=4``) instead of spinning for about 0.1 s after every
threaded matrix multiply: a spinning worker takes half of the core that ember's own
kernel threads (``ember._parallel``) need next. Only when NumPy is not imported yet
and the variable is unset; ``EMBER_BLAS_TUNING=0`` turns it off.
"""

import os
import sys

if "numpy" not in sys.modules and os.environ.get("EMBER_BLAS_TUNING", "1") != "0":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as xp  # noqa: E402 (after the OpenBLAS setting above, which it reads as it loads)

# PyTorch computes inf/nan silently (log(0) = -inf, 0/0 = nan); so does ember. This is
# NumPy's process-wide setting, so it also applies to the user's own NumPy code.
xp.seterr(all="ignore")

__all__ = ["xp"]
