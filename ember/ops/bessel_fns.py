"""``torch.special``'s ``modified_bessel_i0`` / ``modified_bessel_i1`` and ``spherical_bessel_j0``: functions PyTorch
computes with no gradient (their results do not require grad), in the input's dtype (integers in the default float
dtype; float16, bfloat16 and complex inputs are PyTorch's NotImplementedError).

I0 and I1 are the values ``special.i0`` / ``i1`` compute (Cephes' Chebyshev series, in float64), rounded to the
dtype: float64 results agree with PyTorch's to about 1e-15, float32 ones within an ulp or two (PyTorch sums the
series in float32). j0(x) = sin(x) / x, by its Taylor series below |x| = 0.5, as PyTorch's kernel, and 0 at +-inf.
"""

from __future__ import annotations

from .. import _dtype
from .._backend import quiet, xp
from .._size import c_type_name
from .._tensor import Tensor
from .special_fns import _i0_64, _i1_64


def _checked(x, name: str, argument: str = "input"):
    """``x``'s array in the dtype the function computes in (PyTorch's errors for the others)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"special_{name}(): argument '{argument}' (position 1) must be Tensor, not "
                        f"{c_type_name(x)}")
    if x.is_complex() or x.dtype in (_dtype.float16, _dtype.bfloat16):
        raise _dtype.not_implemented_for(f"{name}_cpu", x.dtype)
    dtype = x.dtype if x.is_floating_point() else _dtype.get_default_dtype()
    return x._data.astype(dtype.np, copy=False)


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0 (``i0``'s values; no gradient)."""
    a = _checked(input, "modified_bessel_i0")
    with quiet():
        return Tensor._make(_i0_64(a.astype(xp.float64)).astype(a.dtype))


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1 (``i1``'s values; no gradient)."""
    a = _checked(input, "modified_bessel_i1")
    with quiet():
        return Tensor._make(_i1_64(a.astype(xp.float64)).astype(a.dtype))


# the Taylor coefficients of sin(x) / x, (-1)^k / (2k + 1)!, for k = 1..6, evaluated by Horner's rule in x^2
_J0_SERIES = (-1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800, 1 / 6227020800)


def spherical_bessel_j0(x: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind of order 0, sin(x) / x (no gradient)."""
    a = _checked(x, "spherical_bessel_j0", "x")  # (PyTorch names this one's argument x)
    with quiet():
        x2 = a * a
        series = xp.full_like(a, _J0_SERIES[-1])
        for c in _J0_SERIES[-2::-1]:
            series = c + x2 * series
        near = xp.abs(a) < 0.5
        out = xp.where(near, 1 + x2 * series, xp.sin(a) / xp.where(near, 1, a))
        out = xp.where(xp.isinf(a), 0, out).astype(a.dtype, copy=False)
    return Tensor._make(out)
