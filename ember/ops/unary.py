"""Unary math: exp, log, sqrt, tanh, sigmoid, relu, abs, clamp, sign/floor/ceil/round ...

Integer inputs to the floating functions are computed in the default float dtype,
as PyTorch does. Piecewise-constant functions (sign, floor, ...) pass a zero gradient.
Complex inputs follow PyTorch's convention: the gradient of a holomorphic f is
grad * conj(f'(z)) (``conj_if_complex`` costs nothing on real arrays).
"""

from __future__ import annotations

from .. import _dtype
from .._arg_aliases import clamp_bounds_error, is_number
from .._backend import xp
from .._kernels import activation as compiled
from .._kernels.policy import policy
from .._memory_format import empty_result, half_number
from .._meta import iterator_layout
from .._not_given import NOT_GIVEN
from .._parallel import parallel_flat
from .._size import c_type_name, int_argument
from .._tensor import Tensor
from ..autograd import graph as _graph
from ..autograd.graph import Node, apply_one, torch_named, version_checked
from ..autograd.recorded import RecordedArray, formula_tensor, is_recorded, reading
from ..autograd.saved_attributes import saved_tensor
from ..autograd.selected import selected_gradient, selected_product, zero_of
from .elementwise import Pow, cast, conj_if_complex, is_inexact, mul, result_dtype
from .elementwise import pow as power


@torch_named("NegBackward0")
class Neg(Node):
    diagonal_jacobian = True

    def forward(self, x):
        return -x

    def backward(self, g):
        return (-g,)


@torch_named("ExpBackward0")
class Exp(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.exp(x)
        self.saved = (out,)
        return out

    def backward(self, g):
        return (g * conj_if_complex(self.saved[0]),)


@torch_named("LogBackward0")
class Log(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.log(x)

    def backward(self, g):
        return (g / conj_if_complex(self.saved[0]),)


@torch_named("Log1PBackward0")
class Log1p(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.log1p(x)

    def backward(self, g):
        return (g / conj_if_complex(1 + self.saved[0]),)


@torch_named("SqrtBackward0")
class Sqrt(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.sqrt(x)
        self.saved = (out,)
        return out

    def backward(self, g):
        return (g / conj_if_complex(2 * self.saved[0]),)


@torch_named("RsqrtBackward0")
class Rsqrt(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = 1 / xp.sqrt(x)
        self.saved = (out,)
        return out

    def backward(self, g):  # d(x^-1/2)/dx = -1/2 x^-3/2
        out = conj_if_complex(self.saved[0])
        # (the cube first, as PyTorch's -0.5 * grad * result.pow(3): the gradient's node reads the cube, not the
        # output, so the output changed in place after a create_graph backward is no error for d/dgrad)
        return (-0.5 * g * (out * out * out),)


@torch_named("SinBackward0")
class Sin(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.sin(x)

    def backward(self, g):
        return (g * conj_if_complex(xp.cos(self.saved[0])),)


@torch_named("CosBackward0")
class Cos(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.cos(x)

    def backward(self, g):
        return (-g * conj_if_complex(xp.sin(self.saved[0])),)


@torch_named("TanhBackward0")
class Tanh(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = xp.tanh(x)
        self.saved = (out,)
        return out

    def backward(self, g):
        out = conj_if_complex(self.saved[0])
        # (PyTorch's tanh_backward saves the output; its TensorIterator of (grad, output) lays the gradient out)
        return (reading(backward_layout(g * (1 - out * out), (g, out)), self.saved[0]),)


@torch_named("SigmoidBackward0")
class Sigmoid(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        # split by sign so exp never overflows
        out = empty_result(x)
        pos = x >= 0
        out[pos] = 1 / (1 + xp.exp(-x[pos]))
        e = xp.exp(x[~pos])
        out[~pos] = e / (1 + e)
        self.saved = (out,)
        return out

    def backward(self, g):
        out = conj_if_complex(self.saved[0])
        return (backward_layout(g * out * (1 - out), (g, out)),)  # (sigmoid_backward's operands: grad, output)


def refuse_relu(x) -> None:
    """PyTorch's errors for relu (and relu_) of a bool or complex array."""
    if x.dtype.kind in "bc":
        raise (RuntimeError("Boolean inputs not supported for relu") if x.dtype == xp.bool_ else
               NotImplementedError("clamp is not supported for complex types"))


_RELU_COMPILED = (xp.dtype(xp.float32), xp.dtype(xp.float64))  # the dtypes of ReLU's compiled kernel

# dtype -> whether NumPy's maximum returns its second operand of two equal ones (``relu_max``), found once per dtype
_TIES_TO_SECOND: dict = {}


def relu_max(x, out=None):
    """``max(x, 0)`` of an array as PyTorch's relu (``clamp_min(x, 0)``): ``x`` itself unless it is below 0, so
    -0.0 stays -0.0 (its sign bit kept) and NaN propagates. Of two equal operands NumPy's maximum returns one or the
    other by dtype (the second for float32/float64/bfloat16 on x86's max instructions, the first in float16's loop):
    the operands go in the order that returns ``x``, found once per dtype (``_ties_to_second``), so the common call
    is still one ``maximum``."""
    zero = zero_of(x.dtype)
    second = _TIES_TO_SECOND.get(x.dtype)
    if second is None:
        second = _ties_to_second(x.dtype)
    return xp.maximum(zero, x, out=out) if second else xp.maximum(x, zero, out=out)


def _ties_to_second(dtype) -> bool:
    """Whether NumPy's maximum of +0.0 and -0.0 (in that order) gives -0.0 in ``dtype`` (its vector loop and its
    scalar tail: 67 elements); False for a dtype without signed zeros (integers)."""
    second = False
    if _dtype.np_kind(dtype) in "fV":  # (bfloat16's NumPy kind is "V")
        negative_zeros = xp.full(67, -0.0, dtype=dtype)
        second = bool(xp.signbit(xp.maximum(zero_of(dtype), negative_zeros).astype(xp.float32)).all())
    _TIES_TO_SECOND[dtype] = second
    return second


@torch_named("ReluBackward0")
class Relu(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)
    # Both passes keep the input's memory order and are split over threads (parallel_flat).
    def forward(self, x):
        refuse_relu(x)
        least = policy.min_parallel_pass_elements
        if x.size < least and (x.size < policy.omp_min_elements or x.dtype not in _RELU_COMPILED
                               or not policy.use_omp()):
            # one chunk (as parallel_flat would make), without its calls; x's memory order
            if (x.size >= policy.min_compiled_elements and x.dtype in _RELU_COMPILED and type(x) is xp.ndarray
                    and x.flags.c_contiguous and policy.use_compiled()):
                # the compiled pass, the same bits: NumPy's maximum (its NaN handling) takes about 4x as long at
                # these sizes (one thread, float32: 262 144 elements 108 against 26 us; 131 072: 54 against 13)
                out = xp.empty(x.shape, x.dtype)
                compiled.relu(x.reshape(-1), out.reshape(-1))
            else:
                out = relu_max(x)
        else:
            out = empty_result(x)
            kern = compiled.relu if x.dtype in _RELU_COMPILED else None
            # one NumPy call per chunk (not a kernel of many short passes): threads from the one-pass kernels' size
            # (the compiled kernel as one OpenMP region from a smaller one under ``omp``: ``policy.omp_min_elements``)
            parallel_flat(relu_max, x, out,
                          min_elements=least, kern=kern)
        self.saved = (out,)
        return out

    def backward(self, g):
        out = self.saved[0]
        if is_recorded(g, out):  # create_graph: the in-place kernel below as one recorded product, which reads the
            return (reading(piecewise_linear_grad(g, out != 0, out, selects=True), out),)  # output as PyTorch's
            # threshold_backward
        # one compiled pass (the same bits) for float arrays of one dtype; it pays threads from a smaller size
        fast = (out.size >= policy.min_compiled_elements and g.dtype == out.dtype
                and g.dtype in (xp.float32, xp.float64) and policy.use_compiled())
        if not fast and out.size < policy.min_elementwise_elements:  # (one chunk: the reference)
            return (backward_layout(selected_gradient(g, out != 0), (out, g)),)
        gx = xp.empty_like(out, dtype=g.dtype)

        def grad(go, o, d):
            if fast and go.ndim == 1:  # (parallel_flat's pieces; arrays it cannot flatten come whole)
                compiled.relu_grad(go, o, d)
                return
            # g where out != 0, else +0.0 (PyTorch's threshold_backward selects: not g * 0, -0.0 for a negative g,
            # NaN for an infinite one); out != 0 is PyTorch's "not out <= 0" since out >= 0 or NaN: the gradient
            # passes where the output is NaN
            xp.copyto(d, selected_gradient(go, o != 0))

        least = policy.min_parallel_pass_elements if fast else None
        parallel_flat(grad, g, out, gx, min_elements=least,
                      kern=compiled.relu_grad if fast else None, flat=fast and out.ndim > 0)
        return (backward_layout(gx, (out, g)),)  # (threshold_backward's operands: the output, then grad)


def backward_layout(gx, operands):
    """A pointwise node's input gradient ``gx`` in the layout PyTorch's backward kernel gives it: its
    TensorIterator's for ``operands`` (the gradient and the saved tensor, in that kernel's order), a copy only where
    that differs from ``gx``'s (a transposed input with a row-major gradient, a broadcast ``y.sum()`` gradient).
    Plain arrays only (a recorded one, under create_graph, as computed)."""
    if gx.__class__ is not xp.ndarray:
        return gx
    a, b = operands
    if a.__class__ is not xp.ndarray or b.__class__ is not xp.ndarray or a.shape != gx.shape or b.shape != gx.shape:
        return gx
    if a.flags.c_contiguous and b.flags.c_contiguous and gx.size and 1 not in gx.shape:
        return gx  # (the common case: row-major operands of no size-1 dimension, TensorIterator's row-major result)
    return iterator_layout(gx, operands)


class PiecewiseLinearGrad(Node):
    """``g * d``, ``d`` the derivative of a piecewise-linear function of ``x`` (relu, leaky_relu, hardtanh ...):
    that function's gradient under create_graph. Linear in ``g``; ``x`` (or the function's output, which relu's
    formula reads) is an input only so that the gradient depends on it, with derivative zero. As PyTorch's
    ThresholdBackwardBackward0 and kin: the gradient requires grad even for a constant ``g``, and its own
    gradient with respect to ``x`` is zeros (not None). A half-precision ``g`` is multiplied in float32 and rounded
    once, as PyTorch's kernels (``float32_compute``; ``d``, f', as forward computed it in float32)."""

    diagonal_jacobian = True
    float32_compute = True

    def forward(self, g, x, d, selects):
        self.d, self.selects = d, selects  # (not in ``saved``: no input's array, nothing to version-check)
        return self._times_d(g)

    def _times_d(self, g):
        # (``selects``: PyTorch's kernel selects 0 where d is 0, threshold_backward's and kin's, ``selected_product``)
        return selected_product(g, self.d) if self.selects else g * self.d

    def backward(self, gg):
        need_g, need_x = self.needs_input_grad
        return (self._times_d(gg) if need_g else None, xp.zeros_like(gg) if need_x else None)


def piecewise_linear_grad(g, d, x, selects: bool = False):
    """Under create_graph: the recorded ``g * d`` (``PiecewiseLinearGrad``), depending on ``x`` (a recorded array
    or a tensor of the graph) with derivative zero; ``selects``: +0.0 where ``d`` is 0 (``selected_product``), as
    the PyTorch kernels that select rather than multiply."""
    from ..autograd.recorded import RecordedArray

    g = g.t if type(g) is RecordedArray else Tensor._make(g)
    x = x.t if type(x) is RecordedArray else x
    return RecordedArray(PiecewiseLinearGrad.apply(g, x, d=d, selects=selects))


@torch_named("AbsBackward0")
class Abs(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x):
        self.saved = (x,)
        return xp.abs(x)

    def backward(self, g):  # complex: |z|' is sgn(z) = z / |z| (0 at 0), as PyTorch
        x = self.saved[0]
        if is_recorded(g, x):  # create_graph: PyTorch's grad * self.sgn() (sgn's own derivative: 0 for real x)
            return (RecordedArray(formula_tensor(g) * formula_tensor(x).sgn()),)
        if x.dtype.kind == "c":
            return (g * sgn_array(x),)
        return (g * sign_array(x),)


@torch_named("ReciprocalBackward0")
class Reciprocal(Node):
    diagonal_jacobian = True
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, x):
        out = 1 / x
        self.saved = (out,)
        return out

    def backward(self, g):  # PyTorch's -grad * (result * result): the square first (its rounding, in half precision)
        out = conj_if_complex(self.saved[0])
        return (-g * (out * out),)


def clamp_by_numbers(x, lo, hi):
    """``x`` (an array) within the number bounds ``lo``/``hi`` (None: that side open) as PyTorch's kernels give it:
    ``min(max(x, lo), hi)`` keeping x where it ties a bound, so a zero keeps its sign (``clamp(-0.0, min=0.0)`` is
    -0.0), a NaN x stays NaN, min > max gives max, and a NaN bound gives NaN everywhere.

    NumPy's clip, one pass, gives the same except at a tie with a one-sided bound (``np.maximum``: the bound), which
    only a zero bound of a floating x can tell from x: that case alone takes the slower, explicit selection."""
    if x.dtype.kind in "iub" or not _ties_a_zero(lo, hi):
        return xp.clip(x, lo, hi).astype(x.dtype, copy=False)  # (ml_dtypes' bfloat16 clip gives float32)
    out = x.copy(order="K")  # (x's memory order, as clip's result and PyTorch's)
    if lo is not None:
        xp.copyto(out, lo, where=x < lo)  # (a NaN x compares False: kept, as a tie)
    if hi is not None:
        xp.copyto(out, hi, where=out > hi)
    return out


def _ties_a_zero(lo, hi) -> bool:
    """A bound is a zero (either sign) and neither is NaN (a NaN bound is NumPy's clip's NaN result, PyTorch's)."""
    return (lo == 0 or hi == 0) and lo == lo and hi == hi


class _ClampByNumbers(Node):
    """clamp's number overload (``clamp_min``'s, ``clamp_max``'s): x's gradient where it lies within the bounds.
    Saves x (``_saved_self``) and reads the bounds as numbers (``_saved_min``/``_saved_max`` where PyTorch's
    node has them, kept after backward as PyTorch's numbers are)."""

    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, x, lo, hi):
        self.saved = (x,)
        self.lo, self.hi = lo, hi
        return clamp_by_numbers(x, lo, hi)

    def backward(self, g):
        x = self.saved[0]
        keep = xp.ones(x.shape, dtype=bool)
        if self.lo is not None:
            keep &= x >= self.lo
        if self.hi is not None:
            keep &= x <= self.hi
        return (selected_gradient(g, keep),)  # (selected, as PyTorch's: +0.0 outside, whatever g)


class _ClampByTensors(Node):
    """clamp's Tensor overload (``clamp_min``'s, ``clamp_max``'s): the bound tensors are inputs, an edge each (None
    for an absent one), as PyTorch's node; ``lo``/``hi`` are their arrays in x's dtype. PyTorch's formula: x's
    gradient where it lies within the bounds, a bound's where it is the result (max's where min > max)."""

    diagonal_jacobian = True
    # saved: x and both bounds (None for an absent one), as PyTorch's node saves them (``_saved_self``,
    # ``_saved_min``, ``_saved_max`` below): saved-tensor hooks pack them

    def forward(self, x, *bounds, lo, hi, dtype):
        x = x.astype(dtype, copy=False)  # (the result type of x and its bounds)
        self.saved = (x, lo, hi)
        return xp.clip(x, lo, hi).astype(x.dtype, copy=False)

    def backward(self, g):
        x, lo, hi = self.saved
        needs = self.needs_input_grad
        keep = x >= lo if hi is None else x <= hi if lo is None else (x >= lo) & (x <= hi)
        gx = selected_gradient(g, keep) if needs[0] else None  # (selected, as PyTorch's: +0.0 elsewhere)
        # a min bound's gradient where it clamps x and is not past max; max's where it clamps x or is below min
        # (its slot: 2 in clamp's node, which has one for each bound, 1 in clamp_max's)
        glo = selected_gradient(g, x < lo if hi is None else (x < lo) & (lo < hi)) if lo is not None and needs[1] \
            else None
        ghi = selected_gradient(g, x > hi if lo is None else (x > hi) | (hi < lo)) \
            if hi is not None and needs[len(needs) - 1] else None
        return (gx, glo, ghi) if len(needs) == 3 else (gx, glo if lo is not None else ghi)


def _saved_of_clamp(*names: str) -> dict:
    """The ``_saved_<name>``/``_raw_saved_<name>`` attributes of a tensor-bound clamp node that saves ``names``
    (``self``, ``min``, ``max``: positions 0, 1, 2 of its ``saved``): clamp_min's and clamp_max's save one bound."""
    attributes = {}
    for name in names:
        position = ("self", "min", "max").index(name)
        attributes[f"_saved_{name}"], attributes[f"_raw_saved_{name}"] = saved_tensor(position)
    return attributes


ClampTensors = torch_named("ClampBackward0")(type("ClampTensors", (_ClampByTensors,),
                                                  _saved_of_clamp("self", "min", "max")))
ClampMinTensor = torch_named("ClampMinBackward1")(type("ClampMinTensor", (_ClampByTensors,),
                                                       _saved_of_clamp("self", "min")))
ClampMaxTensor = torch_named("ClampMaxBackward1")(type("ClampMaxTensor", (_ClampByTensors,),
                                                       _saved_of_clamp("self", "max")))
_SAVED_MIN = property(lambda node: node.lo)
_SAVED_MAX = property(lambda node: node.hi)
Clamp = torch_named("ClampBackward1")(type("Clamp", (_ClampByNumbers,), {"_saved_min": _SAVED_MIN,
                                                                          "_saved_max": _SAVED_MAX}))
ClampMin = torch_named("ClampMinBackward0")(type("ClampMin", (_ClampByNumbers,), {"_saved_min": _SAVED_MIN}))
ClampMax = torch_named("ClampMaxBackward0")(type("ClampMax", (_ClampByNumbers,), {"_saved_max": _SAVED_MAX}))


class ZeroGrad(Node):
    """Piecewise-constant ops (sign, floor, ceil, round, trunc): gradient zero, as in PyTorch."""
    diagonal_jacobian = True

    def forward(self, x, fn):
        self.shape = x.shape
        return fn(x)

    def backward(self, g):
        return (xp.zeros_like(g),)


# each op's node under PyTorch's name (``round`` with ``decimals``: its second overload's)
@torch_named("FloorBackward0")
class Floor(ZeroGrad):
    pass


@torch_named("CeilBackward0")
class Ceil(ZeroGrad):
    pass


@torch_named("TruncBackward0")
class Trunc(ZeroGrad):
    pass


@torch_named("SignBackward0")
class Sign(ZeroGrad):
    pass


@torch_named("RoundBackward0")
class Round(ZeroGrad):
    pass


@torch_named("RoundBackward1")
class RoundDecimals(ZeroGrad):
    pass


def sign_array(x):
    """The sign of a real array, PyTorch's: -1, 0 or 1, and 0 at NaN (NumPy's sign gives NaN), in x's dtype."""
    return xp.subtract(x > 0, x < 0, dtype=x.dtype)


def sgn_array(z):
    """``z / |z|`` (0 where ``z`` is 0): the complex sign. (Divided by 1 where ``|z|`` is 0, not by 0 and the
    NaN masked: recorded under create_graph, the masked quotient's gradient would be 0 / 0 there.)"""
    r = xp.abs(z)
    zero = r == 0
    return xp.where(zero, 0, z / xp.where(zero, 1, r)).astype(z.dtype)


def _unary(cls, float_only: bool = True, real_kernel: str | None = None):
    """The function of a one-input node ``cls``: integers and bools computed in the default float dtype
    (``float_only``); ``real_kernel``: PyTorch's kernel has no complex version, its NotImplementedError."""
    def op(x: Tensor) -> Tensor:
        if (out := apply_one(cls, x)) is not None:  # a plain float32/float64 tensor: apply's common case at once
            return out
        if real_kernel is not None and x.is_complex():
            raise _dtype.not_implemented_for(real_kernel, x.dtype)
        if float_only and not is_inexact(x):
            x = cast(x, _dtype.get_default_dtype())
        return cls.apply(x)

    op.__name__ = op.__qualname__ = cls.__qualname__.lower()  # (the name Python's own TypeErrors give: relu())
    return op


exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, reciprocal = (
    _unary(c) for c in (Exp, Log, Log1p, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Reciprocal)
)
relu = _unary(Relu, float_only=False)


def abs(x: Tensor) -> Tensor:
    if x._data.dtype == xp.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return Abs.apply(x)


def neg(x: Tensor) -> Tensor:
    if (out := apply_one(Neg, x)) is not None:  # (as _unary's)
        return out
    if x._data.dtype == xp.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return Neg.apply(x)


def positive(x: Tensor) -> Tensor:
    """``x`` itself (no copy, no node), as PyTorch's; a bool tensor is refused, as by its unary plus."""
    if x._data.dtype == xp.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def _piecewise(fn, node: type[ZeroGrad]):
    def op(x: Tensor) -> Tensor:
        if x._data.dtype.kind == "c":
            raise NotImplementedError(f"{fn.__name__} is not supported for complex inputs")
        if x._data.dtype == xp.bool_:  # (NumPy keeps the bools; PyTorch's kernels have no bool version)
            raise _dtype.not_implemented_for(f"{fn.__name__}_vml_cpu", x.dtype)
        return node.apply(x, fn=fn)

    return op


floor, ceil, trunc = (_piecewise(f, n) for f, n in ((xp.floor, Floor), (xp.ceil, Ceil), (xp.trunc, Trunc)))


def sign(x: Tensor) -> Tensor:
    if x._data.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    if x._data.dtype == xp.bool_:  # NumPy has no sign for bool; PyTorch returns the values
        return Tensor._make(x._data.copy(order="K"))  # (in the input's memory order, as every pointwise result)
    return Sign.apply(x, fn=sign_array)


def decimals_argument(decimals, method: str):
    """``round``'s ``decimals`` as the method ``method`` (``round``, ``round_``) reads it: an int (a float, bool or
    None is PyTorch's "argument 'decimals' must be int" TypeError); NOT_GIVEN as it is."""
    return decimals if decimals is NOT_GIVEN else int_argument(decimals, method, "decimals", array_ok=False)


def round(x: Tensor, *, decimals: int = NOT_GIVEN) -> Tensor:
    """Round half to even; to ``decimals`` decimal places (negative: tens, hundreds, ...) when given. PyTorch's two
    overloads: ``round(x)`` keeps an integer tensor, the ``decimals`` one (``decimals=0`` too) refuses it, and a bool
    tensor is refused by both; a ``decimals`` that is no int matches neither (PyTorch's TypeError listing them; the
    methods' is "must be int": ``decimals_argument``). To places as PyTorch's kernel: ``rint(x * 10**d) / 10**d``
    (``rint(x / 10**-d) * 10**-d`` for d < 0), a float16 or bfloat16 input computed in float32 and rounded to its
    dtype once (NumPy's round computes in float16: -2.65 to one place is -2.6 there, -2.7 in PyTorch)."""
    given = decimals is not NOT_GIVEN
    if given and decimals.__class__ is not int:
        try:
            decimals = decimals_argument(decimals, "round")
        except TypeError:
            raise TypeError(f"round() received an invalid combination of arguments - got (Tensor, "
                            f"decimals={c_type_name(decimals)}), but expected one of:\n"
                            " * (Tensor input, *, Tensor out = None)\n"
                            " * (Tensor input, *, int decimals, Tensor out = None)\n") from None
    # (NumPy's round of bool is float16; PyTorch's kernels have no bool or complex version, nor an integer one with
    # decimals)
    if x.dtype == _dtype.bool_ or x.is_complex() or (given and not x.is_floating_point()):
        raise _dtype.not_implemented_for("round_vml_cpu" if not given or decimals == 0 else "round_cpu", x.dtype)
    if not given:
        return Round.apply(x, fn=xp.round)
    if decimals == 0:  # (PyTorch's decimals overload, computed as the plain rounding)
        return RoundDecimals.apply(x, fn=xp.round)
    return RoundDecimals.apply(x, fn=lambda a: _round_to_places(a, decimals))


def _round_to_places(a, decimals: int):
    wide = a.astype(xp.float32) if a.dtype.itemsize == 2 else a  # (PyTorch's opmath type for half precision)
    scale = wide.dtype.type(xp.float64(10.0) ** (-decimals if decimals < 0 else decimals))  # (inf past the range)
    out = xp.rint(wide / scale) * scale if decimals < 0 else xp.rint(wide * scale) / scale
    return out.astype(a.dtype, copy=False)


def clamp(x: Tensor, min=None, max=None) -> Tensor:
    """Each element kept within [min, max] (either bound None: that side open). The bounds are both numbers or both
    tensors (broadcast against x), as PyTorch's two overloads take them (``overload_bounds``)."""
    return _clamp(x, *overload_bounds("clamp", min, max))


def clip(x: Tensor, min=None, max=None) -> Tensor:
    """``clamp``'s other name."""
    return _clamp(x, *overload_bounds("clip", min, max))


def overload_bounds(name: str, min, max, *, method: bool = False) -> tuple:
    """The bounds as PyTorch's clamp overloads take them: a tensor bound with a number one (``clamp(x, t, 1.0)``)
    matches its Number overload when the tensor is 0-d and needs no gradient (PyTorch's parser takes such a
    tensor for a number: it is read as its value, so the result's dtype and node are the Number overload's),
    else neither overload, PyTorch's TypeError. ``method``: the message of ``x.clamp(...)`` (and of the in-place
    forms), whose overloads list no input. A bound that is neither a tensor nor a number (a str, a NumPy array) is
    refused so too (read as given positionally: PyTorch words a keyword bound otherwise)."""
    # (a NumPy array, even a 0-d one, is neither to PyTorch's parser: ember's binary ops take one, clamp does not;
    # a Python float or int, the common bound, is looked at first)
    if not ((min is None or min.__class__ in _PLAIN_NUMBERS or isinstance(min, Tensor) or is_number(min))
            and (max is None or max.__class__ in _PLAIN_NUMBERS or isinstance(max, Tensor) or is_number(max))):
        raise _bounds_error(name, (min,) if max is None else (min, max), method)
    if min is None or max is None or isinstance(min, Tensor) == isinstance(max, Tensor):
        return min, max
    tensor = min if isinstance(min, Tensor) else max
    if tensor.ndim == 0 and not tensor.requires_grad:
        value = tensor.item()
        return (value, max) if tensor is min else (min, value)
    raise _bounds_error(name, (min, max), method)


_PLAIN_NUMBERS = (float, int)


def _bounds_error(name: str, bounds: tuple, method: bool) -> TypeError:
    """PyTorch's TypeError for clamp's ``bounds`` that match neither overload, worded as if they were given by
    position (the method's or function's wrapper words it for the call as made: ``clamp_bounds_error``)."""
    error = clamp_bounds_error(name, bounds, {}, method)
    error.clamp_bounds = (name, method)  # type: ignore[attr-defined]
    return error


def _clamp(x: Tensor, min, max, one_sided: str | None = None) -> Tensor:
    """clamp; ``one_sided`` "min" or "max": ``clamp_min``/``clamp_max`` (their nodes' names)."""
    if x._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo, hi = _bound(min), _bound(max)
    if type(lo) is complex or type(hi) is complex:
        # PyTorch's: clamp_min/clamp_max, and clamp of a non-floating x, promote to a complex result, which clamp
        # refuses; clamp of a floating x reads the number as a double (an imaginary part: its conversion error)
        if one_sided is not None or not x.is_floating_point():
            raise NotImplementedError("clamp is not supported for complex types")
        if any(type(b) is complex and b.imag for b in (lo, hi)):
            raise RuntimeError("value cannot be converted to type double without overflow")
        lo, hi = (b.real if type(b) is complex else b for b in (lo, hi))
    if isinstance(lo, float) or isinstance(hi, float):
        if not x.is_floating_point():
            x = cast(x, _dtype.get_default_dtype())
    elif x.dtype == _dtype.bool_ and any(type(b) is int for b in (lo, hi)):  # (PyTorch's result type: int64)
        x = cast(x, _dtype.int64)
    elif tensors := [b for b in (min, max) if isinstance(b, Tensor)]:
        # PyTorch's Tensor overload: the result type of x and its bounds (a float64 bound of a float32 x gives
        # float64, an int32 one of a uint8 x int32; 0-d bounds count by category only)
        target = result_dtype(x, *tensors).np  # (x is cast in the node, as PyTorch's: no node of its own)
        if target.kind == "c":  # (a complex bound of a real x: PyTorch's kernels have no complex clamp)
            kernel = "clamp" if min is not None and max is not None else "maximum" if max is None else "minimum"
            raise _dtype.not_implemented_for(f"{kernel}_cpu", _dtype.from_np(target))
        # the bounds compared in that dtype too (a 0-d int64 bound of 300 for an int8 x is 44 there, as PyTorch's)
        lo, hi = (b.astype(target) if b.__class__ is xp.ndarray and b.dtype != target else b for b in (lo, hi))
        node = ClampTensors if one_sided is None else ClampMinTensor if one_sided == "min" else ClampMaxTensor
        inputs = (min, max) if one_sided is None else tensors
        # tensor bounds are inputs (their gradients), their arrays in x's dtype reach the formula: version-checked,
        # as PyTorch saves them for the masks
        out = version_checked(node.apply(x, *inputs, lo=lo, hi=hi, dtype=target), *tensors)
        if _graph._dual_level is not None:
            _clamp_tangent(out, x, min, max, lo, hi, one_sided)
        return out
    for b in (lo, hi):  # (a number beyond a floating x's range: PyTorch's error)
        _dtype.checked_fill(b, x._data.dtype)
    if x._data.dtype.kind in "iu":  # integer bounds converted to x's dtype as PyTorch's (wrapping: -1 -> 255)
        lo, hi = (int(_dtype.integer_scalar(b, x._data.dtype)) if type(b) is int else b for b in (lo, hi))
    elif x._data.dtype.itemsize == 2:  # float bounds of a half precision x: through float32, as PyTorch's kernel
        lo, hi = (float(half_number(b, x._data.dtype)) if type(b) is float else b for b in (lo, hi))
    return (Clamp if one_sided is None else ClampMin if one_sided == "min" else ClampMax).apply(x, lo=lo, hi=hi)


def _clamp_tangent(out: Tensor, x: Tensor, min, max, lo, hi, one_sided: str | None) -> None:
    """``out``'s tangent (forward AD) as PyTorch's explicit formulas give it for clamp's Tensor overload
    (``clamp_jvp``) and clamp_min's/clamp_max's, not its backward transposed: they differ where ``x`` ties a bound
    or is NaN (clamp(min=) takes the bound's tangent at a tie, clamp_min x's; a NaN x passes its own tangent between
    two bounds, a one-sided bound's otherwise)."""
    level = _graph._dual_level
    tangents = [None if t is None else level.get(t) for t in (x, min, max)]
    if all(t is None for t in tangents):
        return
    dtype = out._data.dtype
    xt, lot, hit = (xp.zeros((), dtype) if t is None else t._data.astype(dtype, copy=False) for t in tangents)
    xv = x._data.astype(dtype, copy=False)
    if lo is not None and hi is not None:
        t = xp.where(lo > hi, hit, xp.where(xv < lo, lot, xp.where(xv > hi, hit, xt)))
    elif lo is not None:
        t = xp.where(xv >= lo if one_sided else xv > lo, xt, lot)
    else:
        t = xp.where(xv <= hi if one_sided else xv < hi, xt, hit)
    level.set(out, Tensor._make(xp.ascontiguousarray(xp.broadcast_to(t, out._data.shape))))


def _bound(v):
    """A clamp bound as an array or a Python scalar (NumPy scalars would widen float32 results)."""
    if isinstance(v, Tensor):
        return v._data
    return v.item() if isinstance(v, xp.generic) else v


def square(x: Tensor) -> Tensor:
    """PyTorch's square is pow(x, 2): recorded, its node is PowBackward0 with one edge (the exponent is a number).
    Unrecorded, x * x (the same values) takes mul's faster path."""
    if x._requires_grad and (out := apply_one(Pow, x, 2)) is not None:  # a plain float32/float64 tensor at once
        return out
    if x._data.dtype == xp.bool_:  # (a bool tensor's is int64)
        x = cast(x, _dtype.int64)
    return power(x, 2) if x._requires_grad else mul(x, x)


