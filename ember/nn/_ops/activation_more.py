"""The less common activations: hard and shrinking functions, Mish, SELU/CELU, RReLU, PReLU (a learned slope) and
GLU (a gated half).

The pointwise ones are ``fn(x, need_grad, *params) -> (f(x), f'(x) or None)`` run by activation.py's
``Pointwise`` node, like ReLU's relatives there. At a kink the derivative is PyTorch's: the side each function's
kernel assigns the point to (noted per function).
"""

from __future__ import annotations

from ... import _dtype, _warnings
from ..._autocast import lower_precision
from ..._backend import xp
from ..._meta import is_meta, meta_array
from ..._tensor import Tensor, _wrap_dim
from ...autograd.graph import Node, torch_named
from ...autograd.recorded import is_recorded
from ...autograd.saved_attributes import given_argument, keep_as_given, saved_tensor
from ...ops.activation import log_softmax as _log_softmax
from ...ops.activation import softmax as _softmax
from ...ops.elementwise import not_implemented_for
from ...random import default_generator
from .activation import (
    _ELU,
    _apply,
    _leaky_relu,
    _maybe_inplace,
    _scalar,
    exp_linear,
    exp_linear_grad_from_result,
    integer_limits,
    node_named,
    scalar_params,
    sigmoid_array,
)

_HALF = (_dtype.float16, _dtype.bfloat16)  # dtypes whose composed activations round after each step
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

# the nodes, under PyTorch's names (SELU's is ELU's, as PyTorch's selu is an elu with fixed parameters); softsign
# and tanhshrink, which PyTorch composes (x / (1 + |x|), x - tanh(x)), are named as its last node, though ember's
# one node has one next function where that node has two
# (hardswish's node, selecting where x > -3, is defined with its function, below)
_HARDSIGMOID = node_named("HardsigmoidBackward0", smooth=False, saved=(), selects_gradient=True,
                          backward_op_without_derivative="hardsigmoid_backward")  # (PyTorch's has no derivative)
_MISH = node_named("MishBackward0", saved=())
_SOFTSIGN = node_named("DivBackward0", own="Softsign", backward_operands="g(x+1)")
# (PyTorch sums two nodes' gradients for tanhshrink's input: no one backward kernel's layout)
_TANHSHRINK = node_named("SubBackward0", own="Tanhshrink", backward_operands=None)
_SOFTSHRINK = node_named("SoftshrinkBackward0", smooth=False, selects_gradient=True)
_HARDSHRINK = node_named("HardshrinkBackward0", smooth=False, selects_gradient=True)
_THRESHOLD = node_named("ThresholdBackward0", smooth=False, saved=("threshold",), reads_result_in_place=False,
                        selects_gradient=True, backward_operands="xg")
_CELU = node_named("CeluBackward0", saved=("alpha",), derivative_from_result=staticmethod(exp_linear_grad_from_result))
# PyTorch's node saves the slopes drawn (``noise``: 1 above zero); in eval it draws none, and saves the
# uninitialised buffer it allocated for them (of the input's shape and dtype)
# its result row-major (PyTorch's allocates it contiguous); its gradient leaky_relu_backward's in eval (the input's
# order first), grad * noise (row-major) in training
_RRELU = node_named("RreluWithNoiseBackward0", smooth=False, saved=("lower", "upper", "training"),
                    contiguous_result=True,
                    backward_operands=property(lambda node: "contiguous" if node.params[2] else "xg"),
                    _saved_noise=property(lambda node: Tensor._make(
                        node.params[3] if node.params[2] else xp.empty(node.output_meta[0][0],
                                                                        node.output_meta[0][1]))))


def _hardswish(x, need):
    # x * relu6(x + 3) / 6, as PyTorch's kernel: (x * min(max(x + 3, 0), 6)) / 6, a division (x * (1/6) differs
    # in the last bit). Derivative, as PyTorch's backward kernel: x / 3 + 1/2 for -3 < x < 3 (a division too), 1 for
    # x >= 3 (also at NaN, its scalar code; its vectorised code's g * NaN there), 0 for x <= -3, where the gradient is
    # selected (``_hardswish_passes``). Computed as the sum [|x| < 3] (c / 3 + 1/2) + [not x < 3] with c = x
    # clamped to [-3, 3] by fmax/fmin (finite, also for NaN and infinities, so the product with the mask is 0
    # there: masked selects are NumPy's slowest passes here)
    if is_recorded(x):  # create_graph: the same formula out of place
        c = xp.fmin(xp.fmax(x, -3), 3)
        return x * xp.clip(x + 3, 0, 6) / 6, (c / 3 + 0.5) * (xp.abs(x) < 3) + ~(x < 3)
    t = xp.asarray(xp.add(x, _scalar(x, 3)))  # (an array to clip in place: a 0-d x's sum is a scalar)
    xp.clip(t, 0, 6, out=t)
    t *= x
    t /= _scalar(x, 6)
    if not need:
        return t, None
    d = xp.asarray(xp.fmax(x, _scalar(x, -3)))  # (as t: an array)
    xp.fmin(d, _scalar(x, 3), out=d)
    d /= _scalar(x, 3)
    d += _scalar(x, 0.5)
    d *= xp.abs(x) < 3
    d += ~(x < 3)
    return t, d


def _hardswish_passes(x):
    """Where hardswish's gradient passes: PyTorch's kernel writes 0 for x <= -3 (not g * 0: +0.0 whatever g) and
    multiplies elsewhere (g * 0 at x = -1.5 stays -0.0 for a negative g)."""
    return ~(x <= -3)


_HARDSWISH = node_named("HardswishBackward0", saved=(), selects_gradient=True, passes=_hardswish_passes)


def _hardsigmoid(x, need):
    # relu6(x + 3) / 6; derivative 1/6 strictly inside (-3, 3), PyTorch's float32 1/6 in every dtype
    t = xp.asarray(xp.add(x, _scalar(x, 3)))  # (an array to clip in place: a 0-d x's sum is a scalar)
    xp.clip(t, 0, 6, out=t)
    t /= _scalar(x, 6)
    if not need:
        return t, None
    inside = xp.abs(x) < 3
    return t, xp.multiply(inside, _scalar(x, xp.float32(1 / 6)), dtype=x.dtype)


def _mish(x, need):
    # x * tanh(softplus(x)); derivative tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)
    e = xp.exp(-xp.abs(x))
    t = xp.tanh(xp.maximum(x, 0) + xp.log1p(e))  # softplus without overflow
    return x * t, (t + x * sigmoid_array(x, e) * (1 - t * t) if need else None)


def _softsign(x, need):
    # PyTorch composes x / (1 + |x|), so its gradient is that of the composition: 1 / b - |x / b| / b with
    # b = 1 + |x| (0 once x / b rounds to +-1, NaN at +-inf, where x / b is inf / inf)
    b = 1 + xp.abs(x)
    y = x / b
    return y, (1 / b - xp.abs(y) / b if need else None)


def _tanhshrink(x, need):
    t = xp.tanh(x)
    return x - t, (1 - (1 - t * t) if need else None)  # (PyTorch differentiates the composition)


def _softshrink(x, need, lambd):
    # x - lambd above lambd, x + lambd below -lambd, 0 between; derivative 1 outside [-lambd, lambd]. PyTorch's
    # kernels test |x| <= lambd, so NaN is kept (out NaN, gradient passed), as in hardshrink and threshold.
    keep = ~(xp.abs(x) <= lambd)
    out = xp.where(keep, x - xp.copysign(_scalar(x, lambd), x), _scalar(x, 0))
    return out, (keep if need else None)  # (f' as a bool mask: ``selected_product``)


def _hardshrink(x, need, lambd):
    keep = ~(xp.abs(x) <= lambd)
    return xp.where(keep, x, _scalar(x, 0)), (keep if need else None)


def _threshold(x, need, threshold, value):
    keep = ~(x <= threshold)
    return xp.where(keep, x, _scalar(x, value)), (keep if need else None)


def _rrelu(x, need, lower, upper, training, slope=None):
    """RReLU: leaky ReLU of slope (lower + upper) / 2 in eval; in training x * slope for x <= 0 (``slope``: one
    drawn per element), x above. (The bounds and mode are parameters of the node: PyTorch's ``_saved_lower`` ...)"""
    if not training:
        return _leaky_relu(x, need, (lower + upper) / 2)
    pos = x > 0
    return xp.where(pos, x, x * slope), (xp.where(pos, _scalar(x, 1), slope) if need else None)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6 (MobileNetV3)."""
    return _maybe_inplace(input, _apply(input, _hardswish, node=_HARDSWISH, kernel="hardswish_cpu"), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _maybe_inplace(input, _apply(input, _hardsigmoid, node=_HARDSIGMOID, kernel="hardsigmoid_cpu"), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _maybe_inplace(input, _apply(input, _mish, node=_MISH, kernel="mish_cpu"), inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    if input.dtype == _dtype.bool_:  # (PyTorch's composition: abs has no bool kernel)
        raise not_implemented_for("abs_cpu", input.dtype)
    if not (input.is_floating_point() or input.is_complex()) or input.dtype in _HALF:
        # PyTorch's composition, |x| + 1 in x's dtype (a half dtype: each step rounded, as PyTorch's ops round)
        return input / (input.abs() + 1)
    return _apply(input, _softsign, node=_SOFTSIGN)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    if input.dtype == _dtype.bool_:  # (PyTorch's composition: its subtraction's error)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if input.dtype in _HALF:  # PyTorch's composition, tanh rounded to the half dtype before the difference
        return input - input.tanh()
    return _apply(input, _tanhshrink, node=_TANHSHRINK, saves_input=False)


@_dtype.keyword_scalars  # (C functions in PyTorch: a keyword's TypeError names no position)
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd for x > lambd, x + lambd for x < -lambd, 0 otherwise (lambd >= 0)."""
    (lambd,) = scalar_params("softshrink", (2,), lambd=lambd)
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, inf) for input dtype {input.dtype}, but found {lambd}")
    return _apply(input, _softshrink, lambd, node=_SOFTSHRINK, kernel="softshrink_check")


@_dtype.keyword_scalars
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, 0 otherwise."""
    (lambd,) = scalar_params("hardshrink", (2,), lambd=lambd)
    return _apply(input, _hardshrink, lambd, node=_HARDSHRINK, kernel="hardshrink_cpu")


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, ``value`` otherwise."""
    threshold, value = scalar_params("threshold" + "_" * inplace, (2, 3), threshold=threshold, value=value)
    if not (input.is_floating_point() or input.is_complex()):  # integers: in their own dtype, no gradient
        if input.dtype == _dtype.bool_:
            raise not_implemented_for("threshold_cpu", input.dtype)
        limit, fill = integer_limits(input, "threshold", threshold, value)
        return _maybe_inplace(input, Tensor._make(xp.where(input._data > limit, input._data, fill)), inplace)
    return _maybe_inplace(input, _apply(input, _threshold, threshold, value, node=_THRESHOLD), inplace,
                          second_form=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with PyTorch's fixed alpha = 1.6733 and scale = 1.0507 (self-normalising)."""
    out = _apply(input, exp_linear, _SELU_ALPHA, _SELU_SCALE, 1, node=_ELU, kernel="elu_cpu")
    return _maybe_inplace(input, out, inplace, result_saved=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    (alpha,) = scalar_params("celu" + "_" * inplace, (2,), alpha=alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    out = _apply(input, exp_linear, alpha, 1.0, 1 / alpha, node=_CELU, kernel="elu_cpu")
    return _maybe_inplace(input, out, inplace, result_saved=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each element's negative slope is drawn from U(lower, upper) (ember's
    generator, PyTorch's draws: one float64 uniform per element <= 0, in order, from bounds rounded to the input's
    float type); in eval the slope is (lower + upper) / 2."""
    lower, upper = scalar_params("rrelu" + "_" * inplace, (2, 3), lower=lower, upper=upper)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        out = _apply(input, _rrelu, lower, upper, False, node=_RRELU, kernel="leaky_relu_cpu")
        return _maybe_inplace(input, out, inplace, result_saved=True)
    dtype = input._data.dtype if input.is_floating_point() else xp.float32
    op = xp.float64 if dtype == xp.float64 else xp.float32  # PyTorch's opmath type: the bounds are rounded to it
    if is_meta(input._data):  # PyTorch's meta kernel draws no slopes: the generator is left as it was
        slope = meta_array(input._data.shape, dtype)
    else:
        slope = xp.ones(input._data.shape, dtype)
        negative = input._data <= 0
        lo, hi = float(op(lower)), float(op(upper))  # PyTorch's u * (hi - lo) + lo is not fused (plain x86-64)
        slope[negative] = (default_generator.unit64(int(negative.sum())) * (hi - lo) + lo).astype(op).astype(dtype)
    out = _apply(input, _rrelu, lower, upper, True, slope, node=_RRELU, kernel="leaky_relu_cpu")
    return _maybe_inplace(input, out, inplace, result_saved=True)


def _implicit_dim(name: str, input: Tensor, dim: int | None, stacklevel: int) -> int:
    """``dim``, or PyTorch's deprecated implicit choice when it is None (0 for 0-, 1- and 3-D input, else 1),
    with PyTorch's deprecation warning where its ``stacklevel`` puts it (called from the public function)."""
    if dim is not None:
        return dim
    _warnings.warn_above_caller(f"Implicit dimension choice for {name} has been deprecated. "
                                "Change the call to include dim=X as an argument.", UserWarning, stacklevel - 3,
                                through={"ember.nn.modules.module": "torch.nn.modules.module"})  # Module's call
    return 0 if input.ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax along ``dim``; None (deprecated) warns and picks PyTorch's implicit dim. ``_stacklevel``:
    PyTorch's, where the warning points (3: the caller's line)."""
    return _softmax(input, _implicit_dim("softmax", input, dim, _stacklevel), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log softmax along ``dim``; None warns and picks the implicit dim, as ``softmax``."""
    return _log_softmax(input, _implicit_dim("log_softmax", input, dim, _stacklevel), dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``; None warns and picks the implicit dim, as ``softmax``."""
    return _softmax(-input, _implicit_dim("softmin", input, dim, _stacklevel), dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) along ``dim``, ``g`` Gumbel(0, 1) noise from ember's generator; ``hard``: the
    one-hot of its maximum in the forward pass, the soft sample's gradient in backward (straight through).
    ``eps`` is deprecated and unused, as in PyTorch (which warns when it is given)."""

    from ..._creation import empty_like, zeros_like

    if eps != 1e-10:
        _warnings.warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = _softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``."""
    if not input.is_floating_point():
        raise not_implemented_for("glu_cpu", input.dtype)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)  # (out of range: PyTorch's IndexError)
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    return keep_as_given(Glu.apply(input, dim=d), dim=dim)


def _halves(x, dim: int):
    """The first and second halves of ``x`` along ``dim`` (basic slices: views, recorded under create_graph)."""
    h = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[(*lead, slice(0, h))], x[(*lead, slice(h, None))]


@torch_named("GluBackward0")
class Glu(Node):
    """a * sigmoid(b) for the halves a, b of x along ``dim``, as one node, as PyTorch's: the gradient is g s on
    the first half and g a s (1 - s) on the second (s recomputed from the saved input)."""
    float32_compute = True  # (half precision computed in float32, as PyTorch's CPU kernel)
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_dim = given_argument("dim", lambda node: node.dim)

    def forward(self, x, dim):
        a, b = _halves(x, dim)
        self.saved, self.dim = (x,), dim
        return a * sigmoid_array(b)

    def backward(self, g):
        a, b = _halves(self.saved[0], self.dim)
        s = sigmoid_array(b)
        ga = g * s
        return (xp.concatenate([ga, ga * a * (1 - s)], axis=self.dim),)


@torch_named("PreluKernelBackward0")
class PReLU(Node):
    """max(0, x) + w * min(0, x), w one slope or one per channel (dim 1); the weight gradient is the sum of
    g * x over the non-positive x (of each channel)."""

    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_weight, _raw_saved_weight = saved_tensor(1)

    def forward(self, x, w):
        pos = x > 0
        self.saved, self.pos = (x, w), pos
        return xp.where(pos, x, x * _slopes(w, x.ndim))

    def backward(self, g):
        (x, w), pos = self.saved, self.pos
        wb, w_shape = _slopes(w, x.ndim), w.shape
        nx, nw = self.needs_input_grad
        gx = xp.where(pos, g, g * wb) if nx else None
        gw = None
        if nw:
            neg = xp.where(pos, _scalar(g, 0), g * x)
            gw = (neg.sum() if wb.ndim == 0 else neg.sum(axis=(0, *range(2, x.ndim)))).reshape(w_shape)
        return gx, gw


def _slopes(w, ndim: int):
    """PReLU's weight broadcast against the input: one slope, or one per channel (dim 1)."""
    return w.reshape(()) if w.size == 1 else w.reshape((1, -1) + (1,) * (ndim - 2))


@lower_precision
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), weight with 1 element or one per channel (dim 1 of the input)."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype.SCALAR_TYPE_NAMES[input.dtype.name]} "
                           f"and {_dtype.SCALAR_TYPE_NAMES[weight.dtype.name]}")
    n = weight._data.size
    if n != 1:
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                               f"and channel size = {channels}.")
    if input.ndim >= 2:  # as PyTorch's, the kernel gets the weight viewed against the input (1, C, 1, ...): its
        # node saves that view, whose ViewBackward0 leads to the weight
        weight = weight.view((1, n) + (1,) * (input.ndim - 2))
    return PReLU.apply(input, weight)
