"""The one array-module handle.

Every piece of array math in ember comes from ``xp``. Today it is NumPy; a GPU
array library with NumPy's interface (CuPy) can replace it here without any op
changing.
"""

import numpy as xp

__all__ = ["xp"]
