"""Tensor methods for the more pointwise math ops (``ember/ops/pointwise.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._arg_aliases import method_refusal, refuse_numpy_array
from .._backend import xp
from .._dtype import number_parameters, parsed_number

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


def _in_place(x: Tensor, op, other, **check) -> Tensor:
    """``x.op_(other)``: x <- op(x, other), recorded when x or ``other`` needs a gradient (``_write_back``, which
    takes ``check``: its ``out_names``)."""
    ops.inplace.refuse_partial_overlap(x._data, other)
    return ops.index_update._write_back(x, lambda t: op(t, other), other, **check)


def _cast_checked_in_place(x: Tensor, op, other) -> Tensor:
    """``x.gcd_(other)``, ``fmod_``, ``atan2_``, ...: as PyTorch, a promoted dtype ``x`` cannot hold is refused
    before the kernel's own dtype check (an integer ``x`` with a float ``other``, a real one with a complex
    ``other``: the cast's error, not "not implemented"). A number (a NumPy scalar: the one PyTorch's argument
    parser reads, ``parsed_number``) counts as a 0-d tensor of its category's default dtype, as PyTorch's wrapped
    number (a float: the default float's name in the error), and is computed with as a 0-d tensor of its value."""
    ops.inplace.check_result_cast(x, other)
    if isinstance(other, xp.generic):
        other = parsed_number(other)
    if not isinstance(other, type(x)) and isinstance(other, (bool, int, float, complex)):
        other = type(x)._make(xp.asarray(other))
    return _in_place(x, op, other)


class PointwiseMethods:
    __slots__ = ()

    def tan(self) -> Tensor:
        return ops.pointwise.tan(self)

    def atan(self) -> Tensor:
        return ops.pointwise.atan(self)

    arctan = atan

    def asin(self) -> Tensor:
        return ops.pointwise.asin(self)

    arcsin = asin

    def acos(self) -> Tensor:
        return ops.pointwise.acos(self)

    arccos = acos

    def sinh(self) -> Tensor:
        return ops.pointwise.sinh(self)

    def cosh(self) -> Tensor:
        return ops.pointwise.cosh(self)

    def asinh(self) -> Tensor:
        return ops.pointwise.asinh(self)

    arcsinh = asinh

    def acosh(self) -> Tensor:
        return ops.pointwise.acosh(self)

    arccosh = acosh

    def atanh(self) -> Tensor:
        return ops.pointwise.atanh(self)

    arctanh = atanh

    def log2(self) -> Tensor:
        return ops.pointwise.log2(self)

    def log10(self) -> Tensor:
        return ops.pointwise.log10(self)

    def expm1(self) -> Tensor:
        return ops.pointwise.expm1(self)

    def exp2(self) -> Tensor:
        return ops.pointwise.exp2(self)

    def erf(self) -> Tensor:
        return ops.pointwise.erf(self)

    def erfc(self) -> Tensor:
        return ops.pointwise.erfc(self)

    def erfinv(self) -> Tensor:
        return ops.pointwise.erfinv(self)

    @number_parameters(eps="float")
    def logit(self, eps: float | None = None) -> Tensor:
        return ops.pointwise.logit(self, eps)

    def frac(self) -> Tensor:
        return ops.pointwise.frac(self)

    def sgn(self) -> Tensor:
        return ops.pointwise.sgn(self)

    def atan2(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("atan2", other, 1)
        return ops.pointwise.atan2(self, other)

    def arctan2(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("arctan2", other, 1)
        return ops.pointwise.arctan2(self, other)

    def lerp(self, end: Tensor, weight) -> Tensor:
        return ops.pointwise.lerp(self, end, weight)

    def clamp_min(self, min) -> Tensor:
        return ops.pointwise.clamp_min(self, min)

    def clamp_max(self, max) -> Tensor:
        return ops.pointwise.clamp_max(self, max)

    def lerp_(self, end, weight) -> Tensor:
        if end.__class__ is not self.__class__ or weight.__class__ is not float:  # (an array: PyTorch's TypeError)
            refuse_numpy_array("lerp_", end, "end", 1)
            refuse_numpy_array("lerp_", weight, "weight", 2)
        pw = ops.pointwise
        ops.inplace.refuse_partial_overlap(self._data, end)
        ops.inplace.refuse_partial_overlap(self._data, weight)
        return ops.index_update._write_back(self, lambda t: pw.lerp(t, end, weight), end, weight)

    def clamp_min_(self, min) -> Tensor:
        return _in_place(self, ops.pointwise.clamp_min, min, out_names=ops.inplace.clamp_cast_names(min))

    def clamp_max_(self, max) -> Tensor:
        return _in_place(self, ops.pointwise.clamp_max, max, out_names=ops.inplace.clamp_cast_names(max))

    @number_parameters(nan="float", posinf="float", neginf="float")
    def nan_to_num(self, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        return ops.pointwise.nan_to_num(self, nan, posinf, neginf)

    def logaddexp(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("logaddexp", other, 1)
        return ops.pointwise.logaddexp(self, other)

    def logaddexp2(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("logaddexp2", other, 1)
        return ops.pointwise.logaddexp2(self, other)

    def hypot(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("hypot", other, 1)
        return ops.pointwise.hypot(self, other)

    def fmod(self, other) -> Tensor:
        try:
            return ops.pointwise.fmod(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("fmod", error, other) from None

    def fmax(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("fmax", other, 1)
        return ops.pointwise.fmax(self, other)

    def fmin(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("fmin", other, 1)
        return ops.pointwise.fmin(self, other)

    def copysign(self, other) -> Tensor:
        try:
            return ops.pointwise.copysign(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("copysign", error, other) from None

    def copysign_(self, other) -> Tensor:
        try:
            return _cast_checked_in_place(self, ops.pointwise.copysign, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("copysign_", error, other) from None

    def atan2_(self, other) -> Tensor:
        ops.elementwise.require_tensor("atan2_", other, 1)
        return _cast_checked_in_place(self, ops.pointwise.atan2, other)

    def arctan2_(self, other) -> Tensor:
        ops.elementwise.require_tensor("arctan2_", other, 1)
        return _cast_checked_in_place(self, ops.pointwise.arctan2, other)

    def hypot_(self, other) -> Tensor:
        ops.elementwise.require_tensor("hypot_", other, 1)
        return _in_place(self, ops.pointwise.hypot, other)

    def fmod_(self, other) -> Tensor:
        try:
            return _cast_checked_in_place(self, ops.pointwise.fmod, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("fmod_", error, other) from None

    def heaviside(self, values: Tensor) -> Tensor:
        ops.elementwise.require_tensor("heaviside", values, 1, "values")  # (a method: position 1)
        return ops.pointwise.heaviside(self, values)

    def heaviside_(self, values: Tensor) -> Tensor:
        ops.elementwise.require_tensor("heaviside_", values, 1, "values")  # (a method: position 1)
        return _in_place(self, ops.pointwise.heaviside, values)

    # (the number-theory and floating-point-parts ops, ops/integer_fns.py and ops/float_parts.py, have no mixin
    # of their own: a few methods each)
    def gcd(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("gcd", other, 1)
        return ops.integer_fns.gcd(self, other)

    def gcd_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("gcd_", other, 1)
        return _cast_checked_in_place(self, ops.integer_fns.gcd, other)

    def lcm(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("lcm", other, 1)
        return ops.integer_fns.lcm(self, other)

    def lcm_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("lcm_", other, 1)
        return _cast_checked_in_place(self, ops.integer_fns.lcm, other)

    def ldexp(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("ldexp", other, 1)
        return ops.float_parts.ldexp(self, other)

    def ldexp_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("ldexp_", other, 1)
        return ops.float_parts.ldexp_(self, other)

    def nextafter(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("nextafter", other, 1)
        return ops.float_parts.nextafter(self, other)

    def nextafter_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("nextafter_", other, 1)
        return _in_place(self, ops.float_parts.nextafter, other)

    def frexp(self):
        return ops.float_parts.frexp(self)
