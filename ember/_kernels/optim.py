"""Optimizer updates (numba): ``y += alpha * x`` in one pass, where the NumPy reference (``add_scaled`` in
``ember/optim/optimizer.py``) makes two (the product into a scratch buffer, then the add); Adam's and AdamW's
update of one parameter in one pass (``adam``), where the reference (``_adam_rows`` in ``ember/optim/adam.py``)
makes about ten. Same arithmetic, same order (each operation rounded to the parameter's dtype as NumPy's in-place
ufuncs round it): the same bits. Their ``prange`` loops run on numba's OpenMP threads in ``.parallel``
(``policy.omp``); every element is updated on its own.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, prange


@kernel
def add_scaled(y, x, alpha):
    """y += x * alpha for 1-D arrays of one float dtype; alpha a scalar of that dtype."""
    for i in prange(y.shape[0]):
        y[i] += x[i] * alpha


@kernel
def adam(p, g, m, v, shrink, weight, beta2, beta2c, eps_c, step_size):
    """One Adam step of the 1-D arrays p (parameter), g (gradient), m, v (moments) in place, in the reference's
    order (``_adam_rows``: no L2 decay, no maximize, no amsgrad there)::

        p *= shrink (AdamW's decay; 1: none);  m += (g - m) * weight;  v = v * beta2 + (g * g) * beta2c
        p += m / (sqrt(v) + eps_c) * step_size  (times step_size unless it is 1: ``add_scaled``'s)

    scalars of p's dtype (weight = 1 - beta1, beta2c = 1 - beta2)."""
    one = p.dtype.type(1)
    for i in prange(p.shape[0]):
        gi = g[i]
        mi = m[i] + (gi - m[i]) * weight
        m[i] = mi
        vi = v[i] * beta2 + (gi * gi) * beta2c
        v[i] = vi
        d = mi / (np.sqrt(vi) + eps_c)
        pi = p[i] * shrink if shrink != one else p[i]
        p[i] = pi + (d * step_size if step_size != one else d)
