"""Number theory on integer tensors: gcd and lcm (``torch.gcd`` / ``torch.lcm``).

Integer dtypes only, as PyTorch's kernels (floating and bool operands: its NotImplementedError), the operands
promoted together; no gradient (integer results). As PyTorch's, the results wrap around on overflow instead of
raising: lcm is |a / gcd(a, b) * b| computed as C computes it (8- and 16-bit operands in int, then wrapped), and
gcd of the dtype's lowest value and 0 is that value (its absolute value does not fit).
"""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._dtype import np_kind
from .._tensor import Tensor
from .elementwise import promote
from .pointwise import _tensor_other


def _integer_operands(name: str, input: Tensor, other: Tensor) -> tuple:
    """The promoted arrays of an integer-only binary op (PyTorch's TypeError for a number as ``other``)."""
    _tensor_other(name, other)
    a, b = promote(input, other)
    if np_kind(a._data.dtype) not in "iu":
        raise _dtype.not_implemented_for(f"{name}_cpu", a.dtype)
    return a._data, b._data


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor, elementwise with broadcasting (gcd(0, 0) = 0; non-negative otherwise, save
    the wrapped lowest value)."""
    a, b = _integer_operands("gcd", input, other)
    return Tensor._make(xp.gcd(a, b))


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple, elementwise with broadcasting: |a / gcd(a, b) * b| in the operands' dtype
    (wrapping on overflow, as PyTorch's), 0 where either is 0."""
    a, b = _integer_operands("lcm", input, other)
    g = xp.gcd(a, b)
    # C's arithmetic: 8- and 16-bit operands are promoted to int, wrapped back to the dtype after the abs
    wide = xp.int32 if a.dtype.itemsize < 4 else a.dtype
    q = (a // xp.where(g == 0, 1, g)).astype(wide)  # (exact division: floor is truncation)
    with xp.errstate(over="ignore"):
        out = xp.abs(q * b.astype(wide)).astype(a.dtype)
    return Tensor._make(xp.where(g == 0, xp.zeros((), a.dtype), out))
