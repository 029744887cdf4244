"""The one array-module handle.

Every piece of array math in ember comes from ``xp``. Today it is NumPy; a GPU
array library with NumPy's interface (CuPy) can replace it here without any op
changing.
"""

import numpy as xp

# PyTorch computes inf/nan silently (log(0) = -inf, 0/0 = nan); so does ember. This is
# NumPy's process-wide setting, so it also applies to the user's own NumPy code.
xp.seterr(all="ignore")

__all__ = ["xp"]
