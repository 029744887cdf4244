"""A floating-point number's parts: ldexp (x * 2^e), frexp (x = mantissa * 2^exponent), nextafter (the next
representable value), as ``torch.ldexp`` / ``torch.frexp`` / ``torch.nextafter``.

NumPy has each for float16, float32 and float64; bfloat16 (ml_dtypes) goes through float32 for ldexp and frexp
(exact: a scaling by a power of two, and bfloat16's exponent range is float32's), while NumPy's nextafter steps in
bfloat16 itself.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._backend import xp
from .._dtype import np_kind
from .._tensor import Tensor
from ..autograd.graph import MultiOutputNode, Node, torch_named
from .elementwise import cast, conj_if_complex, promote, result_dtype
from .index_update import _write_back
from .pointwise import _tensor_other


def _through_float32(fn, x, *rest):
    """``fn(x, *rest)`` for NumPy's float dtypes; a bfloat16 ``x`` computed in float32, the floats cast back."""
    if x.dtype.itemsize == 2 and x.dtype != xp.float16:
        return tuple(r.astype(x.dtype) if r.dtype.kind == "f" else r
                     for r in _as_tuple(fn(x.astype(xp.float32), *rest)))
    return _as_tuple(fn(x, *rest))


def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


@torch_named("LdexpBackward0")
class Ldexp(Node):
    """x * 2^e: an integer e scales exactly (C's ldexp, e taken as a 32-bit int as PyTorch's kernel does), a
    floating one multiplies by exp2(e). Gradients, PyTorch's formulas: for x, g * 2^e (for an integer e that
    power is PyTorch's integer pow: 0 for a negative e, wrapping in int64 beyond 2^62); for a floating e,
    g * out * ln 2."""

    diagonal_jacobian = True

    def forward(self, x, e):
        if e.dtype.kind in "iub" and np_kind(x.dtype) == "f":
            out = _through_float32(xp.ldexp, x, e.astype(xp.int32))[0]
        else:  # PyTorch's x * pow(2, e): the power rounded to e's own dtype (an integer e of a complex x: x's)
            out = (x * _power_of_two(e, x.dtype)).astype(x.dtype, copy=False)
        # (both saved: under create_graph the engine swaps saved arrays for recorded ones, so e's gradient
        # g * out * ln 2 is differentiable again in x and e)
        self.saved = (e, out)
        return out

    def backward(self, g):
        e, out = self.saved
        nx, ne = self.needs_input_grad
        if e.dtype.kind in "iub":
            e = e.astype(xp.int64)
            scale = xp.where((e < 0) | (e > 63), 0, xp.left_shift(1, xp.clip(e, 0, 63))).astype(g.dtype)
        else:
            scale = _power_of_two(e, g.dtype)
        # (conj: the derivatives of a holomorphic function of a complex x or e)
        return ((g * conj_if_complex(scale) if nx else None),
                (g * conj_if_complex(out) * math.log(2) if ne else None))


def _power_of_two(e, dtype):
    """2^e computed in e's dtype (a bfloat16 e through float32, rounded back), then converted to ``dtype``."""
    if np_kind(e.dtype) in "iub":
        return xp.exp2(e.astype(dtype))
    return _through_float32(xp.exp2, e)[0].astype(dtype, copy=False)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2**other``, elementwise with broadcasting, in the operands' promoted dtype (integers and bools: the
    default float dtype); an integer ``other`` scales exactly (no overflow of 2**other before the product). As
    PyTorch's, a bool exponent of a floating input has no kernel (NotImplementedError)."""
    _tensor_other("ldexp", other)
    if input.is_floating_point() and other.dtype == _dtype.bool_:
        raise _dtype.not_implemented_for("ldexp_cpu_exp", _dtype.bool_)
    target = result_dtype(input, other)
    if np_kind(target.np) in "iub":
        target = _dtype.get_default_dtype()
    x = cast(input, target)
    return Ldexp.apply(x, other)  # (a floating ``other`` in its own dtype: PyTorch's power of two is in it)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    """``input.ldexp_(other)``: ``input`` <- ldexp(input, other); an integer ``input`` cannot hold the floating
    result (PyTorch's RuntimeError, in its words for this op)."""
    if not (input.is_floating_point() or input.is_complex()):
        name = _dtype.SCALAR_TYPE_NAMES[input.dtype.name]
        raise RuntimeError(f"ldexp can't be cast to the desired output type {name}")
    return _write_back(input, lambda t: ldexp(t, other), other)


@torch_named("FrexpBackward0")
class Frexp(MultiOutputNode):
    """(mantissa, exponent) with x = mantissa * 2^exponent, |mantissa| in [0.5, 1) (0, inf and nan: themselves,
    exponent 0); the mantissa's gradient is 1 / 2^exponent, the int32 exponent has none."""

    diagonal_jacobian = True

    def forward(self, x):
        mantissa, exponent = _through_float32(xp.frexp, x)
        self.exponent = exponent
        return mantissa, exponent

    def backward(self, g, _g_exponent=None):
        return (g / xp.exp2(self.exponent.astype(g.dtype)),)


def frexp(input: Tensor):
    """``return_types.frexp(mantissa, exponent)``: the mantissa in ``input``'s floating dtype, the exponent int32."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    from .. import return_types

    mantissa, exponent = Frexp.apply(input)
    return return_types.frexp._make((mantissa, exponent))


def check_frexp_out(input: Tensor, out) -> None:
    """PyTorch's checks of ``frexp(input, out=(mantissa, exponent))``'s dtypes, before the result is written."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    names = _dtype.CPP_TYPE_NAMES
    mantissa, exponent = out
    if mantissa.dtype != input.dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {names[input.dtype.name]} but got "
                           f"{names[mantissa.dtype.name]}")
    if exponent.dtype != _dtype.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got {names[exponent.dtype.name]}")


@torch_named("NextafterBackward0")
class Nextafter(Node):
    """The representable value after x toward y; gradient 1 for x, 0 for y (as PyTorch's formula)."""

    diagonal_jacobian = True

    def forward(self, x, y):
        # y itself where x == y, as C's nextafter (NumPy's float16 loop keeps x: -0.0 toward +0.0 stayed -0.0)
        return xp.where(x == y, y, xp.nextafter(x, y))

    def backward(self, g):
        nx, ny = self.needs_input_grad
        return (g if nx else None), (xp.zeros_like(g) if ny else None)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next floating-point value after ``input`` toward ``other``, elementwise with broadcasting, in the
    promoted floating dtype (integer operands: PyTorch's NotImplementedError)."""
    _tensor_other("nextafter", other)
    a, b = promote(input, other)
    if np_kind(a._data.dtype) != "f":
        raise _dtype.not_implemented_for("nextafter_cpu", a.dtype)
    return Nextafter.apply(a, b)
