"""More pointwise math: trigonometric and hyperbolic functions and their inverses, log2/log10/expm1/exp2,
erf/erfc/erfinv, logit, frac, sgn, atan2, lerp.

Same conventions as ``unary.py``: integer inputs compute in the default float dtype, the gradient
formula sits next to the forward. NumPy has no erf: ``erf``/``erfc`` use a vectorised kernel for float32 and
float16 (``erf.py``, ~1 ulp) and the C library's function element by element for float64 (exact, slower
than a ufunc); ``erfinv`` refines an approximation with Newton steps.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._arg_aliases import is_operand, operand_type_error, refuse_numpy_numbers
from .._backend import xp
from .._dtype import np_kind
from .._memory_format import astype_result, empty_result
from .._meta import is_meta, iterator_layout, kept_layout, meta_results, strides_like
from .._meta import made as _meta_made
from .._parallel import parallel_blocks
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.forward_ad import has_tangent
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import Node, shape_error, shown_as, torch_named, version_checked
from ..autograd.recorded import RecordedArray, is_recorded
from ..autograd.saved_attributes import saved_tensor
from .elementwise import (
    _float_operands,
    add,
    cast,
    conj_if_complex,
    div,
    mul,
    promote,
    promoted,
    refuse_complex,
    require_tensor,
    result_dtype,
    rounded_division_grads,
    sub,
    times_number,
    without_derivative,
)
from .erf import erf_into, erfc_into
from .statistics import _fused_multiply_add
from .unary import _clamp, _unary


# Complex inputs: each derivative below is an analytic function with real coefficients, so its conjugate
# (PyTorch's gradient is grad * conj(f'(z))) is the same function of conj(z).
@torch_named("TanBackward0")
class Tan(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.tan(x)
        self.saved = (out,)
        return out

    def backward(self, g):  # 1 + tan^2
        out = conj_if_complex(self.saved[0])
        return (g * (1 + out * out),)


@torch_named("AtanBackward0")
class Atan(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arctan(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        return (g / (1 + x * x),)


@torch_named("AsinBackward0")
class Asin(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arcsin(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        return (g / xp.sqrt(1 - x * x),)


@torch_named("AcosBackward0")
class Acos(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arccos(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        return (-g / xp.sqrt(1 - x * x),)


@torch_named("SinhBackward0")
class Sinh(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.sinh(x)

    def backward(self, g):
        return (g * xp.cosh(conj_if_complex(self.saved[0])),)


@torch_named("CoshBackward0")
class Cosh(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.cosh(x)

    def backward(self, g):
        return (g * xp.sinh(conj_if_complex(self.saved[0])),)


@torch_named("AsinhBackward0")
class Asinh(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arcsinh(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        return (g / xp.sqrt(x * x + 1),)


@torch_named("AcoshBackward0")
class Acosh(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arccosh(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        if x.dtype.kind == "c":  # sqrt(z - 1) sqrt(z + 1): the branch of arccosh's derivative, as PyTorch
            return (g / (xp.sqrt(x - 1) * xp.sqrt(x + 1)),)
        return (g / xp.sqrt(x * x - 1),)


@torch_named("AtanhBackward0")
class Atanh(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.arctanh(x)

    def backward(self, g):
        x = conj_if_complex(self.saved[0])
        return (g / (1 - x * x),)


class Log2(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.log2(x)

    def backward(self, g):
        return (g / (conj_if_complex(self.saved[0]) * math.log(2)),)


class Log10(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.log10(x)

    def backward(self, g):
        return (g / (conj_if_complex(self.saved[0]) * math.log(10)),)


class Expm1(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.expm1(x)
        self.saved = (out,)
        return out

    def backward(self, g):
        return (g * (conj_if_complex(self.saved[0]) + 1),)


class Exp2(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.exp2(x)
        self.saved = (out,)
        return out

    def backward(self, g):
        return (g * conj_if_complex(self.saved[0]) * math.log(2),)


_erf = xp.vectorize(math.erf, otypes=[xp.float64])
_erfc = xp.vectorize(math.erfc, otypes=[xp.float64])
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_kernel(x, kernel, exact):
    """erf or erfc of an array: float32/float16 through the vectorised kernel (``erf.py``: ~1 ulp, split among the
    intra-op threads in cache-sized blocks), float64 through the C library's function, element by element."""
    if not x.size:
        return xp.empty_like(x)
    if x.dtype.itemsize > 4:
        return kept_layout(exact(x).astype(x.dtype), x)
    out = xp.empty(x.shape, x.dtype)
    parallel_blocks(kernel, x.reshape(-1), out.reshape(-1))
    return kept_layout(out, x)  # (the input's layout, as PyTorch's)


@torch_named("ErfBackward0")
class Erf(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return _erf_kernel(x, erf_into, _erf)

    def backward(self, g):  # 2/sqrt(pi) exp(-x^2)
        x = self.saved[0]
        return (g * (_TWO_OVER_SQRT_PI * xp.exp(-x * x)),)


@torch_named("ErfcBackward0")
class Erfc(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return _erf_kernel(x, erfc_into, _erfc)

    def backward(self, g):
        x = self.saved[0]
        return (g * (-_TWO_OVER_SQRT_PI * xp.exp(-x * x)),)


def _erfinv(y):
    """The inverse of erf on [-1, 1] (nan outside): Winitzki's closed-form estimate, then Newton steps."""
    shape = y.shape
    y = astype_result(xp.atleast_1d(y), xp.float64)
    a = 0.147
    ln = xp.log1p(-y * y)
    b = 2 / (math.pi * a) + ln / 2
    x = xp.sign(y) * xp.sqrt(xp.sqrt(b * b - ln / a) - b)
    inner = xp.isfinite(x)
    for _ in range(4):  # quadratic convergence from a ~2e-3 start: float64 precision after 3-4 steps
        step = (_erf(x[inner]) - y[inner]) / (_TWO_OVER_SQRT_PI * xp.exp(-x[inner] ** 2))
        x[inner] -= step
    return x.reshape(shape)


@torch_named("ErfinvBackward0")
class Erfinv(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)  # as PyTorch: its input (the output may change in place), erfinv recomputed from it
        return _erfinv(x).astype(x.dtype) if x.size else xp.empty_like(x)

    def backward(self, g):  # sqrt(pi)/2 exp(erfinv(x)^2)
        x = self.saved[0]
        # (under create_graph x is recorded: erfinv(x) is then this op again, differentiable)
        out = RecordedArray(erfinv(x.t)) if type(x) is RecordedArray else _erfinv(x).astype(x.dtype)
        return (g * (xp.exp(out * out) / _TWO_OVER_SQRT_PI),)


@torch_named("LogitBackward0")
class Logit(Node):
    diagonal_jacobian = True

    def forward(self, x, eps):
        self.saved, self.eps = (x,), eps
        if eps is not None:
            x = xp.clip(x, *_logit_bounds(x.dtype, eps)).astype(x.dtype, copy=False)  # (bfloat16's clip: float32)
        return xp.log(x / (1 - x))

    def backward(self, g):
        # PyTorch's kernel: g / (x (1 - x)), g * inf at 0 and 1 (x + 0 makes -0 a +0, whose product is +0), NaN
        # outside [0, 1]; with eps, 0 where the forward clamped x (strictly outside [eps, 1 - eps]), and NaN at NaN
        x = self.saved[0]
        grad = g / ((x + 0) * (1 - x))
        lo, hi = (0, 1) if self.eps is None else _logit_bounds(x.dtype, self.eps)
        return (xp.where((x < lo) | (x > hi), xp.nan if self.eps is None else 0, grad).astype(g.dtype, copy=False),)


def _logit_bounds(dtype, eps: float) -> tuple:
    """logit's clamp bounds (eps, 1 - eps) in the input's dtype, as PyTorch's kernel computes them (bfloat16's
    1 - 0.3 is 0.699219)."""
    lo = dtype.type(eps)
    return lo, dtype.type(1) - lo


@torch_named("Atan2Backward0")
class Atan2(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)  # (PyTorch's names: atan2(self, other))
    _saved_other, _raw_saved_other = saved_tensor(1)

    def forward(self, y, x):
        self.saved = (y, x)
        return xp.arctan2(y, x)

    def backward(self, g):  # d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
        y, x = self.saved
        r2 = x * x + y * y
        # At the origin (r2 == 0) PyTorch takes 1 / r2 as 0: both gradients are zeros (-0 for x), not NaN, so an
        # angle taken of zeros (a complex max-pool's phase of relu'd values) leaves the gradients finite.
        recip = xp.where(r2 == 0, 0, 1 / r2)
        return g * x * recip, -g * y * recip


tan, atan, asin, acos, sinh, cosh, asinh, acosh, atanh = (
    _unary(c) for c in (Tan, Atan, Asin, Acos, Sinh, Cosh, Asinh, Acosh, Atanh)
)
log2, log10, expm1, exp2 = (_unary(c) for c in (Log2, Log10, Expm1, Exp2))
erf, erfc = _unary(Erf, real_kernel="erf_vml_cpu"), _unary(Erfc, real_kernel="erfc_vml_cpu")
erfinv = _unary(Erfinv, real_kernel="erfinv_vml_cpu")
arctan, arcsin, arccos, arcsinh, arccosh, arctanh = atan, asin, acos, asinh, acosh, atanh


class _InplaceWithoutDerivative(Node):
    """PyTorch records ``acosh_``, ``asinh_`` and ``atanh_`` with a node of their own (AcoshBackward1 ...) that has
    no derivative: its backward raises. ``value``: the result, computed outside the graph."""

    diagonal_jacobian = True
    op = ""

    def forward(self, x, value):
        return value

    def backward(self, g):
        raise NotImplementedError(f"the derivative for 'inplace version of {self.op}' is not implemented.")


def _inplace_form(name: str, op):
    """``op`` as ``x.<name>_()`` records it (``ops.inplace.pointwise_`` writes the result into x)."""
    node = torch_named(f"{name.capitalize()}Backward1")(type(f"{name.capitalize()}Inplace",
                                                              (_InplaceWithoutDerivative,), {"op": name}))

    def recorded(x: Tensor) -> Tensor:
        if has_tangent(x):
            raise NotImplementedError(f"Trying to use forward AD with {name}_ that does not support it because it "
                                      "has not been implemented yet.")
        value = op(x.detach())
        return node.apply(x, value=value._data) if x.requires_grad else value

    return recorded


acosh_inplace, asinh_inplace, atanh_inplace = (_inplace_form(n, f) for n, f in
                                               (("acosh", acosh), ("asinh", asinh), ("atanh", atanh)))


def logit(x: Tensor, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)); with ``eps``, x is first clamped to [eps, 1 - eps]."""
    if isinstance(eps, xp.ndarray):  # (a NumPy array is no float to PyTorch's parser)
        refuse_numpy_numbers("logit", "float", eps=(2, eps))
    if x.is_complex():  # (PyTorch's kernel has no complex version)
        raise _dtype.not_implemented_for("logit_cpu", x.dtype)
    if not x.is_floating_point():
        x = cast(x, _dtype.get_default_dtype())
    return Logit.apply(x, eps=eps)


@torch_named("FracBackward0")
class Frac(Node):
    """x - trunc(x), one node as PyTorch's (``FracBackward0``): gradient 1."""
    diagonal_jacobian = True

    def forward(self, x):
        return x - xp.trunc(x)

    def backward(self, g):
        return (g,)


def frac(x: Tensor) -> Tensor:
    """x - trunc(x) (the sign of x kept); gradient 1."""
    if not x.is_floating_point():
        raise _dtype.not_implemented_for("frac_cpu", x.dtype)
    return Frac.apply(x)


def sgn(x: Tensor) -> Tensor:
    """sign(x) for real tensors, z / |z| (0 at 0) for complex ones."""
    from .complex import sgn as complex_sgn

    return complex_sgn(x)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point (other, input), elementwise with broadcasting, in (-pi, pi]."""
    return _atan2("atan2", input, other)


def arctan2(input: Tensor, other: Tensor) -> Tensor:
    """``atan2``'s other name (its errors name it so, as PyTorch's)."""
    return _atan2("arctan2", input, other)


def _atan2(name: str, input: Tensor, other: Tensor) -> Tensor:
    _tensor_other(name, other)
    y, x = _float_operands(input, other)
    refuse_complex(y, "atan2_cpu")  # (PyTorch's kernel name for both spellings)
    return Atan2.apply(y, x)


def _refuse_lerp_arrays(end, weight) -> None:
    """PyTorch's TypeError for lerp's ``end`` that is no tensor or ``weight`` that is a NumPy array (its parser
    takes a tensor or a number); positions as the method counts them."""
    require_tensor("lerp", end, 1, "end")
    refuse_numpy_numbers("lerp", "Tensor", weight=(2, weight))


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """input + weight * (end - input); ``weight`` a number or a tensor (broadcast) of input's dtype (a 0-d one
    may differ, and takes part in the promotion). Floating and complex results only: PyTorch has no integer or
    bool kernel (NotImplementedError), though integer operands with a floating 0-d weight compute in its type."""
    if weight.__class__ is int:
        _dtype.scalar_int(weight)
    if end.__class__ is not Tensor or isinstance(weight, xp.ndarray):  # (an array: PyTorch's TypeError)
        _refuse_lerp_arrays(end, weight)
    if not isinstance(weight, (Tensor, bool, int, float, complex, xp.generic)):  # (a str, None: matches no overload)
        raise TypeError(f"lerp() received an invalid combination of arguments - got (Tensor, {c_type_name(weight)}), "
                        "but expected one of:\n * (Tensor end, Tensor weight)\n * (Tensor end, Number weight)\n")
    names = _dtype.CPP_TYPE_NAMES
    if input._data.dtype != end._data.dtype:
        raise RuntimeError(f"expected dtype {names[input.dtype.name]} for `end` but got dtype {names[end.dtype.name]}")
    if isinstance(weight, Tensor) and weight._data.ndim and weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {names[input.dtype.name]} for `weight` but got dtype "
                           f"{names[weight.dtype.name]}")
    kernel = result_dtype(input, weight) if isinstance(weight, Tensor) else input.dtype  # (the dtype it computes in)
    if not (kernel.is_floating_point or kernel.is_complex):
        raise _dtype.not_implemented_for("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar",
                                         kernel)
    if kernel != input.dtype:  # (integer operands: computed in the weight's type, not wrapped or refused first)
        input, end = cast(input, kernel), cast(end, kernel)
    if not isinstance(weight, Tensor):
        # the kernel's weight is its opmath type's: a complex one for a real input, or 1e40 for a float32 (or half)
        # one, is PyTorch's RuntimeError
        weight = _dtype.opmath_scalar(weight, kernel)
        if input.is_complex() or isinstance(weight, complex):
            return add(input, mul(weight, sub(end, input)))
        return LerpByNumber.apply(input, end, weight=float(weight))
    if weight.dtype != kernel:  # (a 0-d weight of another dtype: computed in the kernel's)
        weight = cast(weight, kernel)
    # PyTorch's formula saves all three, read as shown by ``saved_for``; those that need no gradient are checked so
    return version_checked(LerpByTensor.apply(input, end, weight), weight, *((input, end) if weight._requires_grad
                                                                               else ()))


@torch_named("LerpBackward1")
class LerpByTensor(Node):
    """``lerp`` with a tensor weight (broadcast), one node as PyTorch's, with its CPU kernel's formula:
    ``start + w * (end - start)`` where |w| < 0.5, ``end - (end - start) * (1 - w)`` elsewhere, half precision
    computed in float32 and rounded once. Gradients ``grad * (1 - w)``, ``grad * w``, ``grad * (end - start)``
    (conjugated for complex), as PyTorch's formula, which saves all three."""
    diagonal_jacobian = True
    saved_for = ((2,), (2,), (0, 1))  # start and end for the weight's gradient, the weight for theirs
    _saved_self, _raw_saved_self = saved_tensor(0)  # (PyTorch's names: lerp(self, end, weight))
    _saved_end, _raw_saved_end = saved_tensor(1)
    _saved_weight, _raw_saved_weight = saved_tensor(2)

    def forward(self, x, y, w):
        self.saved = (x, y, w)
        low = x.dtype if x.dtype.itemsize == 2 and np_kind(x.dtype) == "f" else None
        if low is not None:
            x, y, w = x.astype(xp.float32), y.astype(xp.float32), w.astype(xp.float32)
        diff = y - x
        out = xp.where(xp.abs(w) < 0.5, x + w * diff, y - diff * (1 - w))
        return out.astype(low) if low is not None else out

    def backward(self, g):
        x, y, w = self.saved
        nx, ny, nw = self.needs_input_grad
        wc = None if w is None else conj_if_complex(w)
        return ((g * (1 - wc) if nx else None), (g * wc if ny else None),
                (g * conj_if_complex(y - x) if nw else None))



@torch_named("LerpBackward0")
class LerpByNumber(Node):
    """``lerp`` with a number weight, PyTorch's CPU kernel's formula: ``start + w * (end - start)`` for |w| < 0.5,
    ``end + (w - 1) * (end - start)`` otherwise. Half and bfloat16 to PyTorch's bits: computed in float32, w a
    float32, each branch a fused multiply-add rounded once (emulated exactly in float64). float32 and float64 round
    the product, then the sum, in their own dtype (PyTorch fuses them: the last bit of some elements differs;
    emulating the fused operation made an EMA's ``lerp_`` several times slower). Gradients ``grad * (1 - w)`` and
    ``grad * w``, as PyTorch's formula."""
    diagonal_jacobian = True
    _saved_weight = property(lambda node: node.weight)  # (PyTorch's name; the number as given)

    def forward(self, x, y, weight):
        self.weight = weight
        if x.dtype == xp.float64 or x.dtype == xp.float32:
            w = weight if x.dtype == xp.float64 else xp.float32(weight)
            out = y - x
            if abs(w) < 0.5:  # (w as the kernel has it: 0.49999999 is a float32's 0.5)
                out *= w
                out += x
            else:
                out *= w - 1  # (a float32 for a float32 w)
                out += y
            return out
        w = float(xp.float32(weight))
        wide_x, wide_y = x.astype(xp.float64), y.astype(xp.float64)
        diff = (wide_y - wide_x).astype(xp.float32).astype(xp.float64)
        out = wide_x + w * diff if abs(w) < 0.5 else wide_y + float(xp.float32(w - 1)) * diff  # (w - 1: a float32)
        return out.astype(xp.float32).astype(x.dtype)

    def backward(self, g):  # (under create_graph, PyTorch's MulBackward1 by each number)
        w = self.weight
        return times_number(g, 1 - w), times_number(g, w)


def clamp_min(input: Tensor, min) -> Tensor:
    """``clamp(input, min=min)``, recorded under clamp_min's name."""
    _check_one_bound("min", min)
    return _clamp(input, min, None, "min")


def clamp_max(input: Tensor, max) -> Tensor:
    """``clamp(input, max=max)``, recorded under clamp_max's name."""
    _check_one_bound("max", max)
    return _clamp(input, None, max, "max")


def _check_one_bound(side: str, bound) -> None:
    """A bound of ``clamp_min`` / ``clamp_max`` that is neither a tensor nor a number: the function's wrapper words
    PyTorch's TypeError (``_arg_aliases.function_operand_error``: its overloads)."""
    if not is_operand(bound):
        raise operand_type_error(bound)


@torch_named("NanToNumBackward0")
class NanToNum(Node):
    diagonal_jacobian = True
    own_layout = True  # (PyTorch's result is empty_like(x): x's strides, a size-1 dimension's too)

    def forward(self, x, nan, posinf, neginf):
        self.keep = xp.isfinite(x)
        out = xp.nan_to_num(astype_result(x, x.dtype), copy=False, nan=nan, posinf=posinf, neginf=neginf)
        return strides_like(out, x)

    def backward(self, g):  # replaced elements are constants
        return (g * self.keep,)


def nan_to_num(x: Tensor, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: 0 and the dtype's
    largest and lowest finite values; ``nan=None`` is 0, as PyTorch's), in the real and the imaginary part of a
    complex tensor apart; integer tensors are returned unchanged."""
    if nan is None:
        nan = 0.0
    if isinstance(nan, xp.ndarray) or isinstance(posinf, xp.ndarray) or isinstance(neginf, xp.ndarray):
        refuse_numpy_numbers("nan_to_num", "float", nan=(2, nan), posinf=(3, posinf), neginf=(4, neginf))
    if not (x.is_floating_point() or x.is_complex()):
        return x.clone()
    if x.is_complex() and x.requires_grad and is_grad_enabled():  # (PyTorch defines no complex derivative for it)
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs with complex dtype.")
    return NanToNum.apply(x, nan=nan, posinf=posinf, neginf=neginf)


@torch_named("LogaddexpBackward0")
class LogAddExp(Node):
    """log(exp(a) + exp(b)); ``base=2``: log2(2**a + 2**b). As PyTorch's, the gradients are formulas of the inputs
    (saved), not of the output, which may then change in place before backward."""

    diagonal_jacobian = True

    def forward(self, a, b, base):
        self.saved = (a, b)
        self.base = base
        if a.dtype.kind == "c":
            return _complex_logaddexp(a, b)
        return xp.logaddexp(a, b) if base is None else xp.logaddexp2(a, b)

    def backward(self, g):  # d/da = 1 / (1 + e^(b - a)) (2^(b - a) for base 2), as PyTorch writes it
        a, b = self.saved
        na, nb = self.needs_input_grad
        grow = xp.exp if self.base is None else xp.exp2
        # (conjugated for complex operands: PyTorch's gradients are of the conjugate Wirtinger kind)
        return ((g / conj_if_complex(1 + grow(b - a)) if na else None),
                (g / conj_if_complex(1 + grow(a - b)) if nb else None))


def _complex_logaddexp(a, b):
    """PyTorch's complex logaddexp: log1p(exp(min - max)) + max, min and max by real part; NaN in either operand
    gives NaN + NaN j; equal infinite real parts give the smaller operand (-inf) or log(exp(a) + exp(b)) (+inf)."""
    a, b = xp.broadcast_arrays(a, b)
    a_first = a.real < b.real
    lo, hi = xp.where(a_first, a, b), xp.where(a_first, b, a)
    with xp.errstate(all="ignore"):
        out = xp.log1p(xp.exp(lo - hi)) + hi
        both_inf = ~xp.isfinite(lo.real) & (lo.real == hi.real)
        if both_inf.any():
            out = xp.where(both_inf & (lo.real < 0), lo, out)
            out = xp.where(both_inf & (lo.real > 0), xp.log(xp.exp(lo) + xp.exp(hi)), out)
    nan = xp.isnan(a) | xp.isnan(b)
    if nan.any():
        out = xp.where(nan, xp.asarray(complex(math.nan, math.nan), dtype=out.dtype), out)
    return out.astype(a.dtype, copy=False)


@torch_named("HypotBackward0")
class Hypot(Node):
    diagonal_jacobian = True
    saved_for = ((0,), (1,), (0, 1))  # each input for its own gradient, the output for both
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_other, _raw_saved_other = saved_tensor(1)
    _saved_result, _raw_saved_result = saved_tensor(2)

    def forward(self, a, b):
        out = xp.hypot(a, b)
        self.saved = (a, b, out)
        return out

    def backward(self, g):  # d/da = a / out
        a, b, out = self.saved
        na, nb = self.needs_input_grad
        return (g * a / out if na else None), (g * b / out if nb else None)


@torch_named("CopysignBackward0")
class Copysign(Node):
    diagonal_jacobian = True
    saved_for = ((0,), (0,))  # the input and the result, both for the input's gradient (the sign source gets zeros)
    tangent_free_inputs = (1,)  # (only the sign source's sign is read)
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_result, _raw_saved_result = saved_tensor(1)

    def forward(self, a, b):
        out = xp.copysign(a, b)
        self.saved = (a, out)
        return out

    def backward(self, g):  # d/da = out / a (+-1), 0 where a == 0, as PyTorch; the sign source: zeros
        a, out = self.saved
        na, nb = self.needs_input_grad
        return (g * xp.where(a == 0, 0, out / a) if na else None), (xp.zeros_like(g) if nb else None)


@torch_named("FmodBackward1")  # (a tensor divisor; FmodScalar a number)
class Fmod(Node):
    diagonal_jacobian = True
    saved_for = ((1,), (1,))  # only the divisor's gradient reads them, as PyTorch saves them
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_other, _raw_saved_other = saved_tensor(1)

    def forward(self, a, b):
        self.saved = (a, b)
        return xp.fmod(a, b)

    def backward(self, g):  # a - trunc(a / b) * b
        return rounded_division_grads(self, g, "trunc")


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """log(exp(input) + exp(other)), computed without overflow; floating or complex operands (after promotion)."""
    a, b = _floating_kernel_operands("logaddexp", input, other)
    return LogAddExp.apply(a, b, base=None)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """log2(2**input + 2**other), computed without overflow; floating operands (after promotion) only."""
    a, b = _floating_kernel_operands("logaddexp2", input, other)
    return LogAddExp2.apply(a, b, base=2)


@torch_named("Logaddexp2Backward0")
class LogAddExp2(LogAddExp):
    """``logaddexp2``: LogAddExp's formula in base 2, PyTorch's node of its own."""


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """sqrt(input^2 + other^2), computed without overflow; floating operands (after promotion) only."""
    a, b = _floating_kernel_operands("hypot", input, other)
    return Hypot.apply(a, b)


def _tensor_other(name: str, other) -> None:
    """PyTorch's TypeError for a number as the second operand of an op whose signature takes tensors only."""
    require_tensor(name, other)


def _floating_kernel_operands(name: str, input: Tensor, other: Tensor) -> tuple:
    """The operands of an op PyTorch computes in floating dtypes only, promoted: integer or bool operands (both:
    an integer and a float tensor promote to float) are its NotImplementedError, not a float result."""
    _tensor_other(name, other)
    a, b = promote(input, other)
    if np_kind(a._data.dtype) not in ("fc" if name == "logaddexp" else "f"):  # (PyTorch's logaddexp takes complex)
        raise _dtype.not_implemented_for(f"{name}_cpu", a.dtype)
    return a, b


def copysign(input: Tensor, other) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (a tensor or a number; -0.0 counts as negative), in a
    floating dtype (integers and bools give the default one)."""
    a, b = _float_operands(input, other)
    refuse_complex(a if isinstance(a, Tensor) else b, "copysign_cpu")
    out = Copysign.apply(a, b)
    return out if isinstance(b, Tensor) else shown_as(out, "CopysignBackward1")  # (PyTorch's Scalar overload)


def fmod(input: Tensor, other) -> Tensor:
    """The remainder of truncated division: it has the sign of ``input`` (``remainder`` takes ``other``'s)."""
    a, b = promote(input, other)
    refuse_complex(a if isinstance(a, Tensor) else b, "fmod_cpu")  # (before the integer path's division check)
    kind = np_kind((a if isinstance(a, Tensor) else b)._data.dtype)
    if kind == "b":
        raise _dtype.not_implemented_for("fmod_cpu", _dtype.bool_)
    if kind != "f":
        bd = b._data if isinstance(b, Tensor) else b
        if xp.any(xp.asarray(bd) == 0):
            raise RuntimeError("ZeroDivisionError")
        ad = a._data if isinstance(a, Tensor) else a
        return Tensor._make(xp.fmod(ad, bd))
    if not isinstance(b, Tensor):
        return FmodScalar.apply(a, number=b)
    return Fmod.apply(a, b)


@torch_named("FmodBackward0")
class FmodScalar(Node):
    """``fmod`` by a number, PyTorch's overload of its own: the number is no input; the gradient passes as it is."""

    diagonal_jacobian = True
    number_operand = True

    def forward(self, a, number):
        return xp.fmod(a, number)

    def backward(self, g):
        return (g,)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum, ignoring NaN: NaN only where both are NaN (``maximum`` propagates NaN)."""
    _tensor_other("fmax", other)
    _refuse_complex_extreme("fmax", input, other)
    return _nan_ignoring(input, other, xp.greater_equal, "FmaxBackward0")


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, ignoring NaN (``minimum`` propagates NaN)."""
    _tensor_other("fmin", other)
    _refuse_complex_extreme("fmin", input, other)
    return _nan_ignoring(input, other, xp.less_equal, "FminBackward0")


def _refuse_complex_extreme(name: str, a: Tensor, b: Tensor) -> None:
    """PyTorch's error for fmax/fmin with a complex operand (complex numbers have no order)."""
    if a.is_complex() or b.is_complex():
        raise RuntimeError(f"{name} not implemented for complex tensors.")


def _nan_ignoring(a: Tensor, b: Tensor, keeps_a, name: str) -> Tensor:
    """``a`` where ``keeps_a(a, b)`` or ``b`` is NaN, else ``b``: PyTorch's fmax/fmin, whose gradient goes wholly
    to ``a`` at a tie (and where both are NaN), as its derivative masks ``self >= other`` (``<=`` for fmin). A
    select, under PyTorch's node ``name``; its formula reads both operands, which PyTorch saves: a change in place
    to either before backward is its error."""
    from .indexing import where

    arrays = (a._data, b._data)  # (the condition laid out by the operands, so the result is, as PyTorch's)
    out = where(Tensor._make(iterator_layout(keeps_a(*arrays) | xp.isnan(b._data), arrays)), a, b)
    return shown_as(version_checked(out, a, b), name)


def _heaviside(x, values):
    out = empty_result(x, values)
    xp.greater(x, 0, out=out, casting="unsafe")
    xp.copyto(out, values, where=x == 0)
    return iterator_layout(out, (x, values))  # (laid out as PyTorch's: by both operands' layouts)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where ``input`` < 0 (and NaN), 1 where > 0, ``values`` (broadcast) where == 0. As
    PyTorch's, both tensors must have one dtype (no promotion), not complex."""
    require_tensor("heaviside", values, argument="values")
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    # PyTorch records heaviside with no derivative: a NotImplemented node (an edge per input requiring grad)
    arrays = (input._data, values._data)
    try:
        out = _heaviside(*arrays)
    except ValueError as err:  # (NumPy's broadcast error as PyTorch's)
        raise shape_error("heaviside", arrays, err) from None
    out = Tensor._make(meta_results(arrays, out, True) if _meta_made[0] else out)
    return without_derivative(out, "heaviside", input, values)


# --------------------------------------------------------------------- addcmul, addcdiv
def _addc_operands(input, tensor1, tensor2, value):
    """addcmul's and addcdiv's three tensors promoted together and ``value`` in their dtype, as PyTorch's kernels
    read them; None where the composed ops' own rules apply (integers, bools, a value that is no real number, meta
    tensors)."""
    if not (input.__class__ is Tensor and tensor1.__class__ is Tensor and tensor2.__class__ is Tensor) or \
            value.__class__ not in (int, float) or \
            _meta_made[0] and (is_meta(input._data) or is_meta(tensor1._data) or is_meta(tensor2._data)):
        return None
    dtype = result_dtype(input, tensor1, tensor2)
    if np_kind(dtype.np) not in "fc":
        return None
    return promoted(input, dtype), promoted(tensor1, dtype), promoted(tensor2, dtype)


@torch_named("AddcmulBackward0")
class Addcmul(Node):
    """input + value * tensor1 * tensor2, one node as PyTorch's, its kernel's order: (value * t1) * t2 + input;
    half precision computed in float32 and rounded once."""

    diagonal_jacobian = True
    float32_compute = True
    saved_for = ((2,), (1,))  # tensor1 for tensor2's gradient, tensor2 for tensor1's
    # PyTorch's ``_saved_*`` (tensor1, tensor2; value as the number given)
    _saved_tensor1, _raw_saved_tensor1 = saved_tensor(0)
    _saved_tensor2, _raw_saved_tensor2 = saved_tensor(1)
    _saved_value = property(lambda node: node.value)

    def forward(self, x, t1, t2, value):
        self.saved, self.value = (t1, t2), value
        if x.dtype.kind == "c" or is_recorded(x, t1, t2):
            return x + value * t1 * t2
        # PyTorch's kernel: its vectorised self + (value * t1) * t2 is a fused multiply-add, rounded once
        return _fused_multiply_add(x.dtype.type(value) * t1, t2, x)

    def backward(self, g):  # PyTorch's: grad, grad * conj(t2 * value), grad * conj(t1 * value)
        t1, t2 = self.saved
        _, n1, n2 = self.needs_input_grad
        r = _step_rounding(self, g)
        return (g, r(g * r(conj_if_complex(t2 * self.value))) if n1 else None,
                r(g * r(conj_if_complex(t1 * self.value))) if n2 else None)


@torch_named("AddcdivBackward0")
class Addcdiv(Node):
    """input + value * tensor1 / tensor2, one node as PyTorch's: (value * t1) / t2 + input."""

    diagonal_jacobian = True
    float32_compute = True
    saved_for = ((2,), (1, 2))  # tensor1 for tensor2's gradient, tensor2 for both
    _saved_tensor1, _raw_saved_tensor1 = Addcmul._saved_tensor1, Addcmul._raw_saved_tensor1  # (the same entries)
    _saved_tensor2, _raw_saved_tensor2 = Addcmul._saved_tensor2, Addcmul._raw_saved_tensor2
    _saved_value = Addcmul._saved_value

    def forward(self, x, t1, t2, value):
        self.saved, self.value = (t1, t2), value
        v = value if x.dtype.kind == "c" else x.dtype.type(value)
        return x + v * t1 / t2

    def backward(self, g):  # PyTorch's: grad, grad * conj(value / t2), -grad * conj(value * t1 / (t2 * t2))
        t1, t2 = self.saved
        _, n1, n2 = self.needs_input_grad
        r = _step_rounding(self, g)
        value = self.value if r is _as_is else r(xp.float32(self.value))  # (its value / t2 fills a tensor first)
        return (g, r(g * r(conj_if_complex(value / t2))) if n1 else None,
                r(-g * r(conj_if_complex(r(self.value * t1) / r(t2 * t2)))) if n2 else None)


def _as_is(a):
    return a


def _step_rounding(node: Node, g):
    """How addcmul's and addcdiv's gradient formulas round each step. Their forward computes half precision in
    float32 and rounds once (PyTorch's kernel), so their backward gets float32 copies (``float32_compute``); but
    PyTorch's formulas are composed of ops, each of which rounds its result to the half dtype: so is each step
    here (a float32 array rounded to the half dtype and back). Nothing to do in any other dtype, or under
    create_graph (the recorded half-precision ops round as they go)."""
    low = node.half_dtype
    if low is None or type(g) is RecordedArray:
        return _as_is
    return lambda a: a.astype(low).astype(xp.float32)


def addc(node: type[Node], input: Tensor, tensor1: Tensor, tensor2: Tensor, value) -> Tensor:
    """``addcmul`` (``node`` Addcmul) or ``addcdiv`` (Addcdiv) with ``value`` already taken as PyTorch's kernel takes
    it (``elementwise.addc_value``): one node for floating tensors, the composed ops' otherwise."""
    if (operands := _addc_operands(input, tensor1, tensor2, value)) is not None:
        return node.apply(*operands, value=value)
    combined = mul(tensor1, tensor2) if node is Addcmul else div(tensor1, tensor2)
    return add(input, combined if value == 1 else mul(combined, value))
