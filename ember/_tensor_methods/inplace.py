"""Tensor methods for the in-place updates ops (``ember/ops/inplace.py``)."""

from __future__ import annotations

import operator
from types import EllipsisType
from typing import TYPE_CHECKING

from .. import _deprecated_overloads as _deprecated
from .._arg_aliases import is_operand, method_refusal, operator_refusal, refuse_numpy_array
from .._dtype import number_parameters
from .._not_given import NOT_GIVEN

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)



def _bitwise_in_place(x: Tensor, other, op) -> Tensor:
    """``x &= other`` (``bitwise_and_``), ``|=``, ``^=``, ``<<=``, ``>>=``: x <- op(x, other). As PyTorch, a result
    dtype ``x`` cannot hold (a float or complex ``other`` into an integer ``x``) is the cast's RuntimeError, before
    the kernel's "not implemented" for that dtype; an operand of no tensor type is the operator's NotImplemented."""
    ops.inplace.refuse_partial_overlap(x._data, other)
    if not is_operand(other):
        return NotImplemented
    ops.inplace.check_result_cast(x, other)
    return ops.index_update._write_back(x, lambda t: op(t, other), other)

class InplaceMethods:
    __slots__ = ()

    # The operators (``x += "a"``: NotImplemented, Python's error, as PyTorch's) and the methods (``x.add_("a")``:
    # PyTorch's TypeError, which the op raises itself: ops/inplace.py) are separate functions, neither wrapped.
    def __iadd__(self, other) -> Tensor:
        try:
            return ops.inplace.add_(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __isub__(self, other) -> Tensor:
        try:
            return ops.inplace.sub_(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __imul__(self, other) -> Tensor:
        try:
            return ops.inplace.mul_(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __itruediv__(self, other) -> Tensor:
        try:
            return ops.inplace.div_(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    __idiv__ = __itruediv__

    def add_(self, other, *number_first, alpha=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.add_(alpha, other) (ember/_deprecated_overloads.py)
            other, alpha = _deprecated.alpha_first("add_", other, number_first, alpha)
        return ops.inplace.add_(self, other, alpha=alpha)

    def sub_(self, other, *number_first, alpha=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.sub_(alpha, other) (ember/_deprecated_overloads.py)
            other, alpha = _deprecated.alpha_first("sub_", other, number_first, alpha)
        return ops.inplace.sub_(self, other, alpha=alpha)

    def mul_(self, other) -> Tensor:
        return ops.inplace.mul_(self, other)

    def div_(self, other, *, rounding_mode: str | None = None) -> Tensor:
        return ops.inplace.div_(self, other, rounding_mode=rounding_mode)

    subtract_, multiply_, divide_ = sub_, mul_, div_  # (their refusal of a non-operand: _arg_aliases' wrapper)

    def __ipow__(self, exponent) -> Tensor:
        try:
            return ops.inplace.pow_(self, exponent)
        except TypeError as error:  # (``x **= "a"``: Python's error)
            return operator_refusal(error, exponent)

    def pow_(self, exponent) -> Tensor:
        try:
            return ops.inplace.pow_(self, exponent)
        except TypeError as error:
            raise method_refusal("pow_", error, exponent) from None

    def floor_divide_(self, other) -> Tensor:
        try:
            return ops.inplace.floor_divide_(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def float_power_(self, exponent) -> Tensor:
        ops.elementwise.check_float_power_base(self, exponent)
        return ops.inplace.pointwise_(self, ops.elementwise.float_power, exponent)

    def true_divide_(self, other) -> Tensor:
        return ops.inplace.div_(self, other)

    # ``x **= y``, ``x //= y``: in place, as PyTorch's (without them Python would rebind x to a new tensor)
    __ifloordiv__ = floor_divide_

    def gt_(self, other) -> Tensor:
        return ops.inplace.gt_(self, other)

    def ge_(self, other) -> Tensor:
        return ops.inplace.ge_(self, other)

    def lt_(self, other) -> Tensor:
        return ops.inplace.lt_(self, other)

    def le_(self, other) -> Tensor:
        return ops.inplace.le_(self, other)

    def eq_(self, other) -> Tensor:
        return ops.inplace.eq_(self, other)

    def ne_(self, other) -> Tensor:
        return ops.inplace.ne_(self, other)

    greater_, greater_equal_, less_, less_equal_, not_equal_ = gt_, ge_, lt_, le_, ne_

    def logical_not_(self) -> Tensor:
        return ops.inplace.logical_inplace(self, None, "logical_not")

    def logical_and_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("logical_and_", other, 1)
        return ops.inplace.logical_inplace(self, other, "logical_and")

    def logical_or_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("logical_or_", other, 1)
        return ops.inplace.logical_inplace(self, other, "logical_or")

    def logical_xor_(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("logical_xor_", other, 1)
        return ops.inplace.logical_inplace(self, other, "logical_xor")

    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.addcmul_(value, tensor1, tensor2)
            tensor1, tensor2, value = _deprecated.value_first("addcmul_", tensor1, tensor2, number_first, value)
        return ops.inplace.addcmul_(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.addcdiv_(value, tensor1, tensor2)
            tensor1, tensor2, value = _deprecated.value_first("addcdiv_", tensor1, tensor2, number_first, value)
        return ops.inplace.addcdiv_(self, tensor1, tensor2, value=value)

    def __iand__(self, other) -> Tensor:
        return _bitwise_in_place(self, other, operator.and_)

    def __ior__(self, other) -> Tensor:
        return _bitwise_in_place(self, other, operator.or_)

    def __ixor__(self, other) -> Tensor:
        return _bitwise_in_place(self, other, operator.xor)

    def __ilshift__(self, other) -> Tensor:
        return _bitwise_in_place(self, other, operator.lshift)

    def __irshift__(self, other) -> Tensor:
        return _bitwise_in_place(self, other, operator.rshift)

    bitwise_and_, bitwise_or_, bitwise_xor_ = __iand__, __ior__, __ixor__
    bitwise_left_shift_, bitwise_right_shift_ = __ilshift__, __irshift__

    def clamp_(self, min=None, max=None) -> Tensor:
        min, max = ops.unary.overload_bounds("clamp_", min, max, method=True)
        return ops.inplace.clamp_(self, min, max)

    def clip_(self, min=None, max=None) -> Tensor:
        min, max = ops.unary.overload_bounds("clip_", min, max, method=True)
        return ops.inplace.clamp_(self, min, max)

    def relu_(self) -> Tensor:
        return ops.inplace.relu_(self)

    def neg_(self) -> Tensor:
        return ops.inplace.neg_(self)

    def bitwise_not_(self) -> Tensor:
        return ops.inplace.bitwise_not_(self)

    def exp_(self) -> Tensor:
        return ops.inplace.exp_(self)

    def sqrt_(self) -> Tensor:
        return ops.inplace.sqrt_(self)

    def sigmoid_(self) -> Tensor:
        return ops.inplace.sigmoid_(self)

    def tanh_(self) -> Tensor:
        return ops.inplace.tanh_(self)

    def abs_(self) -> Tensor:
        return ops.inplace.abs_(self)

    def fill_(self, value) -> Tensor:
        return ops.inplace.fill_(self, value)

    def zero_(self) -> Tensor:
        return ops.inplace.zero_(self)

    def apply_(self, callable) -> Tensor:
        """``callable`` on each element (a Python number), the results written back in this tensor's dtype; only
        on a tensor that requires no grad, as PyTorch's (one Python call per element, slow there too)."""
        return ops.inplace.apply_(self, callable)

    def copy_(self, other=NOT_GIVEN, non_blocking: bool = False, **unexpected) -> Tensor:
        """``other`` copied into this tensor (PyTorch's one name for it: ``src=`` is its TypeError)."""
        if other.__class__ is not self.__class__ or non_blocking.__class__ is not bool or unexpected:
            # (ember's own code copies arrays in: ops.inplace.copy_); a number is wrapped as PyTorch's parser
            # wraps it, anything else is its TypeError
            from .._sparse import copy_arguments

            if other is not NOT_GIVEN:
                refuse_numpy_array("copy_", other, "other", 1)
            other = copy_arguments(other, non_blocking, unexpected)
        return ops.inplace.copy_(self, other, non_blocking)

    @number_parameters(mean="float", std="float")
    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        return ops.inplace.normal_(self, mean, std, generator=generator)

    @number_parameters(shown_as={"from_": "from"}, from_="float", to="float")
    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
        """(``from_``: PyTorch's ``from``, a Python keyword, given as ``uniform_(**{"from": 0.0})``.)"""
        return ops.inplace.uniform_(self, from_, to, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        return ops.inplace.bernoulli_(self, p, generator=generator)

    def random_(self, low: int | EllipsisType = ..., to: int | None | EllipsisType = ..., *, generator=None,
                from_: int | None | EllipsisType = ...) -> Tensor:
        return ops.inplace.random_(self, low, to, generator=generator, from_=from_)

    @number_parameters(lambd="float")
    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        return ops.inplace.exponential_(self, lambd, generator=generator)

    @number_parameters(mean="float", std="float")
    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
        return ops.inplace.log_normal_(self, mean, std, generator=generator)

    @number_parameters(p="float")
    def geometric_(self, p: float, *, generator=None) -> Tensor:
        return ops.inplace.geometric_(self, p, generator=generator)

    @number_parameters(median="float", sigma="float")
    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
        return ops.inplace.cauchy_(self, median, sigma, generator=generator)

    def log_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.log)

    def log1p_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.log1p)

    def sin_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.sin)

    def cos_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.cos)

    def floor_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.floor)

    def ceil_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.ceil)

    def trunc_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.trunc)

    def round_(self, *, decimals: int = NOT_GIVEN) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.round, decimals=ops.unary.decimals_argument(decimals, "round_"))

    def sign_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.sign)

    def sgn_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.sgn)

    def reciprocal_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.reciprocal)

    def rsqrt_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.rsqrt)

    def square_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.unary.square)

    def tan_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.tan)

    def atan_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.atan)

    def sinh_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.sinh)

    def cosh_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.cosh)

    def erf_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.erf)

    def erfc_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.erfc)

    def asin_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.asin)

    def acos_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.acos)

    def asinh_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.asinh_inplace)  # (PyTorch's node: no derivative)

    def acosh_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.acosh_inplace)  # (PyTorch's node: no derivative)

    def atanh_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.atanh_inplace)  # (PyTorch's node: no derivative)

    def exp2_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.exp2)

    def log2_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.log2)

    def log10_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.log10)

    # PyTorch's NumPy-style aliases of the in-place forms
    arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
    negative_, fix_ = neg_, trunc_

    def erfinv_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.erfinv)

    def expm1_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.expm1)

    def frac_(self) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.frac)

    @number_parameters(nan="float", posinf="float", neginf="float")
    def nan_to_num_(self, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.nan_to_num, nan, posinf, neginf)

    @number_parameters(eps="float")
    def logit_(self, eps: float | None = None) -> Tensor:
        return ops.inplace.pointwise_(self, ops.pointwise.logit, eps)

    def remainder_(self, other) -> Tensor:
        return ops.inplace.remainder_(self, other)

    __imod__ = remainder_  # (``x %= y`` in place, as PyTorch's)
