"""Tensor methods for the arithmetic, comparison and logical ops and operators (``ember/ops/elementwise.py``)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import _deprecated_overloads as _deprecated
from .._arg_aliases import method_refusal, operator_refusal
from .._dtype import method_scalars

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)

# ``x + y``, ``x - y``, ``x * y`` and ``x / y`` of two plain tensors (not a subclass: a Parameter, vmap's
# BatchedTensor) go from the operator straight to the op's common case (``graph.apply_same``: one float dtype and
# shape), one Python call and a keyword argument fewer than through ``ops.elementwise``'s function (about 0.2 of a
# recorded ``x + y``'s 2.3 µs). Where it declines (None) and for anything else (a number, a subclass, ``alpha``,
# ``rounding_mode``) the method calls that function through ``ops``, whose binding vmap's and fx's stand-ins
# replace while they run. Bound with ``ops`` by ``bind_ops`` (``bind_fast_paths``); None until then.
_Tensor = _same = _Add = _Sub = _Mul = _Div = None
_add = operator.add
_sub = operator.sub
_mul = operator.mul
_truediv = operator.truediv


def _named(function: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``function`` (a method made by a factory below) named as the Tensor method it becomes."""
    function.__name__, function.__qualname__ = name, f"ElementwiseMethods.{name}"
    return function


def _operator_refused(name: str, error: TypeError, other):
    """The operator's refusal (``operator_refusal``; ``name`` unused) in the factories' form."""
    return operator_refusal(error, other)


def _method_refused(name: str, error: TypeError, other):
    """The method's refusal: raises PyTorch's TypeError naming ``name`` (``method_refusal``)."""
    raise method_refusal(name, error, other)


def _add_like(name: str, refuse: Callable) -> Callable[..., Tensor]:
    def add(self, other, *number_first, alpha=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.add(alpha, other) (ember/_deprecated_overloads.py)
            other, alpha = _deprecated.alpha_first("add", other, number_first, alpha)
        if other.__class__ is _Tensor and self.__class__ is _Tensor and alpha.__class__ is int and alpha == 1 and \
                (out := _same(_Add, _add, self, other)) is not None:
            return out
        try:
            return ops.elementwise.add(self, other, alpha=alpha)
        except TypeError as error:
            return refuse("add", error, other)
    return _named(add, name)


def _sub_like(name: str, refuse: Callable) -> Callable[..., Tensor]:
    def sub(self, other, *number_first, alpha=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.sub(alpha, other) (ember/_deprecated_overloads.py)
            other, alpha = _deprecated.alpha_first("sub", other, number_first, alpha)
        if other.__class__ is _Tensor and self.__class__ is _Tensor and alpha.__class__ is int and alpha == 1 and \
                (out := _same(_Sub, _sub, self, other)) is not None:
            return out
        try:
            return ops.elementwise.sub(self, other, alpha=alpha)
        except TypeError as error:
            return refuse("sub", error, other)
    return _named(sub, name)


def _mul_like(name: str, refuse: Callable) -> Callable[..., Tensor]:
    def mul(self, other) -> Tensor:
        if other.__class__ is _Tensor and self.__class__ is _Tensor and \
                (out := _same(_Mul, _mul, self, other, True)) is not None:
            return out
        try:
            return ops.elementwise.mul(self, other)
        except TypeError as error:
            return refuse("mul", error, other)
    return _named(mul, name)


def _div_like(name: str, refuse: Callable) -> Callable[..., Tensor]:
    def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
        if other.__class__ is _Tensor and self.__class__ is _Tensor and rounding_mode is None and \
                (out := _same(_Div, _truediv, self, other, True)) is not None:
            return out
        try:
            return ops.elementwise.div(self, other, rounding_mode=rounding_mode)
        except TypeError as error:
            return refuse("div", error, other)
    return _named(div, name)


def bind_fast_paths(ops_package) -> None:
    """Bind the operators' common case to ``ember.ops``'s (called once, as it finishes loading)."""
    global _Tensor, _same, _Add, _Sub, _Mul, _Div
    ew = ops_package.elementwise
    _Tensor, _same, _Add, _Sub, _Mul, _Div = ew.Tensor, ew.apply_same, ew.Add, ew.Sub, ew.Mul, ew.Div


class ElementwiseMethods:
    __slots__ = ()

    # The operator and the method share one body (made by ``_add_like`` ... ``_div_like`` below) and differ only in
    # how they refuse an operand that is no tensor or number: the operator returns NotImplemented, so Python words
    # its TypeError (``unsupported operand type(s) for +``) as for PyTorch's operators, the method raises PyTorch's
    # ``add(): argument 'other' (position 1) must be Tensor``; neither calls the other (a frame more on every call).
    __add__ = _add_like("__add__", _operator_refused)
    add = _add_like("add", _method_refused)

    def __radd__(self, other) -> Tensor:
        try:  # (PyTorch's ``other + x`` is x.add(other): x first among the inputs)
            return ops.elementwise.add(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    __sub__ = _sub_like("__sub__", _operator_refused)
    sub = _sub_like("sub", _method_refused)

    def __rsub__(self, other) -> Tensor:
        try:
            return ops.elementwise.rsub(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    __mul__ = _mul_like("__mul__", _operator_refused)
    mul = _mul_like("mul", _method_refused)

    def __rmul__(self, other) -> Tensor:
        try:
            return ops.elementwise.mul(self, other)  # (as __radd__)
        except TypeError as error:
            return operator_refusal(error, other)

    __truediv__ = _div_like("__truediv__", _operator_refused)
    div = _div_like("div", _method_refused)

    def __rtruediv__(self, other) -> Tensor:
        # PyTorch's ``number / x`` is ``x.reciprocal() * number``: its values, and its saved tensor (the
        # reciprocal, not x, which may then change in place before backward)
        try:
            return ops.elementwise.mul(self.reciprocal(), other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __floordiv__(self, other) -> Tensor:
        try:
            return ops.elementwise.floor_divide(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rfloordiv__(self, other) -> Tensor:
        try:
            return ops.elementwise.floor_divide(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __mod__(self, other) -> Tensor:
        try:
            return ops.elementwise.remainder(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rmod__(self, other) -> Tensor:
        try:
            return ops.elementwise.remainder(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __pow__(self, exponent) -> Tensor:
        try:
            return ops.elementwise.pow(self, exponent)
        except TypeError as error:
            return operator_refusal(error, exponent)

    def __rpow__(self, other) -> Tensor:
        try:
            return ops.elementwise.pow(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __eq__(self, other) -> Tensor:  # type: ignore[override]
        return ops.elementwise.operator_eq(self, other)

    def __ne__(self, other) -> Tensor:  # type: ignore[override]
        return ops.elementwise.operator_ne(self, other)

    def __lt__(self, other) -> Tensor:
        return ops.elementwise.operator_lt(self, other)

    def __le__(self, other) -> Tensor:
        return ops.elementwise.operator_le(self, other)

    def __gt__(self, other) -> Tensor:
        return ops.elementwise.operator_gt(self, other)

    def __ge__(self, other) -> Tensor:
        return ops.elementwise.operator_ge(self, other)

    def __and__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_and(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __or__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_or(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __xor__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_xor(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rand__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_and(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __ror__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_or(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rxor__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_xor(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __lshift__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_left_shift(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rshift__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_right_shift(self, other)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rlshift__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_left_shift(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __rrshift__(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_right_shift(other, self)
        except TypeError as error:
            return operator_refusal(error, other)

    def __invert__(self) -> Tensor:
        return ops.elementwise.bitwise_not(self)

    # (PyTorch's other spellings: their own functions, as their errors name them)
    def subtract(self, other, *, alpha=1) -> Tensor:
        try:
            return ops.elementwise.sub(self, other, alpha=alpha)
        except TypeError as error:
            raise method_refusal("subtract", error, other) from None

    def multiply(self, other) -> Tensor:
        try:
            return ops.elementwise.mul(self, other)
        except TypeError as error:
            raise method_refusal("multiply", error, other) from None

    def divide(self, other, *, rounding_mode: str | None = None) -> Tensor:
        try:
            return ops.elementwise.div(self, other, rounding_mode=rounding_mode)
        except TypeError as error:
            raise method_refusal("divide", error, other) from None

    def true_divide(self, other) -> Tensor:
        try:
            return ops.elementwise.true_divide(self, other)
        except TypeError as error:
            raise method_refusal("true_divide", error, other) from None

    def floor_divide(self, other) -> Tensor:
        try:
            return ops.elementwise.floor_divide(self, other)
        except TypeError as error:
            raise method_refusal("floor_divide", error, other) from None

    def remainder(self, other) -> Tensor:
        try:
            return ops.elementwise.remainder(self, other)
        except TypeError as error:
            raise method_refusal("remainder", error, other) from None

    def pow(self, exponent) -> Tensor:
        try:
            return ops.elementwise.pow(self, exponent)
        except TypeError as error:
            raise method_refusal("pow", error, exponent) from None

    def maximum(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("maximum", other, 1)
        return ops.elementwise.maximum(self, other)

    def minimum(self, other: Tensor) -> Tensor:
        ops.elementwise.require_tensor("minimum", other, 1)
        return ops.elementwise.minimum(self, other)

    def eq(self, other) -> Tensor:
        try:
            return ops.elementwise.eq(self, other)
        except TypeError as error:
            raise method_refusal("eq", error, other) from None

    def ne(self, other) -> Tensor:
        try:
            return ops.elementwise.ne(self, other)
        except TypeError as error:
            raise method_refusal("ne", error, other) from None

    def lt(self, other) -> Tensor:
        try:
            return ops.elementwise.lt(self, other)
        except TypeError as error:
            raise method_refusal("lt", error, other) from None

    def le(self, other) -> Tensor:
        try:
            return ops.elementwise.le(self, other)
        except TypeError as error:
            raise method_refusal("le", error, other) from None

    def gt(self, other) -> Tensor:
        try:
            return ops.elementwise.gt(self, other)
        except TypeError as error:
            raise method_refusal("gt", error, other) from None

    def ge(self, other) -> Tensor:
        try:
            return ops.elementwise.ge(self, other)
        except TypeError as error:
            raise method_refusal("ge", error, other) from None

    def greater(self, other) -> Tensor:
        try:
            return ops.elementwise.gt(self, other)
        except TypeError as error:
            raise method_refusal("greater", error, other) from None

    def greater_equal(self, other) -> Tensor:
        try:
            return ops.elementwise.ge(self, other)
        except TypeError as error:
            raise method_refusal("greater_equal", error, other) from None

    def less(self, other) -> Tensor:
        try:
            return ops.elementwise.lt(self, other)
        except TypeError as error:
            raise method_refusal("less", error, other) from None

    def less_equal(self, other) -> Tensor:
        try:
            return ops.elementwise.le(self, other)
        except TypeError as error:
            raise method_refusal("less_equal", error, other) from None

    def not_equal(self, other) -> Tensor:
        try:
            return ops.elementwise.ne(self, other)
        except TypeError as error:
            raise method_refusal("not_equal", error, other) from None

    def logical_and(self, other) -> Tensor:
        ops.elementwise.require_tensor("logical_and", other, 1)
        return ops.elementwise.logical_and(self, other)

    def logical_or(self, other) -> Tensor:
        ops.elementwise.require_tensor("logical_or", other, 1)
        return ops.elementwise.logical_or(self, other)

    def logical_not(self) -> Tensor:
        return ops.elementwise.logical_not(self)

    def logical_xor(self, other) -> Tensor:
        ops.elementwise.require_tensor("logical_xor", other, 1)
        return ops.elementwise.logical_xor(self, other)

    def isnan(self) -> Tensor:
        return ops.elementwise.isnan(self)

    def isinf(self) -> Tensor:
        return ops.elementwise.isinf(self)

    def isfinite(self) -> Tensor:
        return ops.elementwise.isfinite(self)

    def isposinf(self) -> Tensor:
        return ops.elementwise.isposinf(self)

    def isneginf(self) -> Tensor:
        return ops.elementwise.isneginf(self)

    def isreal(self) -> Tensor:
        return ops.elementwise.isreal(self)

    def signbit(self) -> Tensor:
        return ops.elementwise.signbit(self)

    def float_power(self, exponent) -> Tensor:
        return ops.elementwise.float_power(self, exponent)

    def equal(self, other: Tensor) -> bool:
        return ops.elementwise.equal(self, other)

    @method_scalars
    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return ops.elementwise.allclose(self, other, rtol, atol, equal_nan)

    @method_scalars
    def isclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        ops.elementwise.require_tensor("isclose", other, 1)
        return ops.elementwise.isclose(self, other, rtol, atol, equal_nan)

    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.addcmul(value, tensor1, tensor2)
            tensor1, tensor2, value = _deprecated.value_first("addcmul", tensor1, tensor2, number_first, value)
        return ops.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
        if number_first:  # PyTorch's deprecated x.addcdiv(value, tensor1, tensor2)
            tensor1, tensor2, value = _deprecated.value_first("addcdiv", tensor1, tensor2, number_first, value)
        return ops.addcdiv(self, tensor1, tensor2, value=value)

    def bitwise_and(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_and(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("bitwise_and", error, other) from None

    def bitwise_or(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_or(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("bitwise_or", error, other) from None

    def bitwise_xor(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_xor(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("bitwise_xor", error, other) from None

    def bitwise_left_shift(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_left_shift(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("bitwise_left_shift", error, other) from None

    def bitwise_right_shift(self, other) -> Tensor:
        try:
            return ops.elementwise.bitwise_right_shift(self, other)
        except TypeError as error:  # (a non-operand: PyTorch's words, on the error path only)
            raise method_refusal("bitwise_right_shift", error, other) from None

    bitwise_not = __invert__
