"""Optimizer updates (numba): ``y += alpha * x`` in one pass, where the NumPy reference (``add_scaled`` in
``ember/optim/optimizer.py``) makes two (the product into a scratch buffer, then the add). Same arithmetic, same
order (the product rounded, then the sum): the same bits.
"""

from __future__ import annotations

from ._jit import kernel


@kernel
def add_scaled(y, x, alpha):
    """y += x * alpha for 1-D arrays of one float dtype; alpha a scalar of that dtype."""
    for i in range(y.shape[0]):
        y[i] += x[i] * alpha
