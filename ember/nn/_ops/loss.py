"""Loss functions, each one node: pointwise losses share ``PointwiseLoss``; cross-entropy is a
fused log-softmax + NLL node.

Reductions: 'mean' (over elements; for class losses, over the summed target
weights), 'sum', 'none' (and 'batchmean' for kl_div). Legacy ``size_average`` /
``reduce`` arguments map to a reduction as in PyTorch.
"""

from __future__ import annotations

import sys

from ... import _dtype, _warnings
from ..._arg_aliases import _refuse_non_tensor
from ..._autocast import full_precision
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...autograd.graph import Node, torch_named, version_checked
from ...autograd.recorded import RecordedArray, is_recorded
from ...autograd.saved_attributes import checked_argument
from ...ops.elementwise import cast, not_implemented_for, promoted, result_dtype
from .activation import sigmoid_array

_REDUCTIONS = ("mean", "sum", "none")
# PyTorch's number of a reduction (torch.nn._reduction.get_enum), its nodes' ``_saved_reduction``
REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}
# a loss module's forward calling the functional: PyTorch's warnings from there name its loss modules' module
_LOSS_MODULES = {"ember.nn.modules.loss": "torch.nn.modules.loss"}


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction named by PyTorch's deprecated size_average/reduce flags (when either is given)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    # at the user's line, naming PyTorch's module whose code issues it: its loss modules' constructors, its
    # functional (torch.nn._reduction for the functionals that read the flags through ``legacy_get_enum``)
    functional = "torch.nn._reduction" if _called_from(_LEGACY_ENUM) else "torch.nn.functional"
    _warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                   through={"ember.nn.modules": "torch.nn.modules.loss", "": functional})
    return reduction


# PyTorch's functionals whose legacy size_average/reduce warning is issued from torch.nn._reduction's own frame
_LEGACY_ENUM = frozenset({"kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "margin_ranking_loss",
                          "hinge_embedding_loss", "multilabel_margin_loss", "soft_margin_loss",
                          "cosine_embedding_loss", "multi_margin_loss", "triplet_margin_loss"})


def _called_from(names: frozenset[str]) -> bool:
    """Whether a function of one of ``names`` is on the stack above the caller (its ember frames)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ember."):
        if frame.f_code.co_name in names:
            return True
        frame = frame.f_back
    return False


def _check_reduction(reduction: str, allowed=_REDUCTIONS) -> None:
    if reduction not in allowed:  # (PyTorch's message)
        raise ValueError(f"{reduction} is not a valid value for reduction")


def checked_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction the arguments name (the legacy flags, when given, first); ValueError if not one of PyTorch's."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return reduction


def refuse_grad(op: str, argument: str, t: Tensor | None) -> None:
    """PyTorch's error for an argument its op has no derivative for, when that argument requires grad."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{argument}'. This "
                           "input cannot have requires_grad True.")


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """A composed loss's elementwise terms reduced: their mean, their sum, or themselves ('none')."""
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def scalar_result(total, dtype):
    """A reduced loss as a 0-d array of ``dtype`` (as it is, when recorded: a rerun forward under create_graph)."""
    return total if is_recorded(total) else xp.asarray(total, dtype=dtype)


class PointwiseLoss(Node):
    """reduce(f(x, t)) where ``fn(x, t, need_x, need_t, *params)`` returns (f, df/dx, df/dt).

    The derivatives are computed with the loss (they share its terms); under create_graph the forward runs again
    on recorded inputs, so that they are recorded functions of x and t (every ``fn`` is plain array math).
    PyTorch's node saves x and t instead: ``_saved_self``/``_saved_target`` are the arrays held to check their
    versions (``_pointwise``'s ``saved``, in that order: input, target, then the weights given)."""
    float32_compute = True
    rerun_for_higher_order = True
    # whether ``fn`` takes a rounding function after its flags and PyTorch's kernel rounds each step of a half
    # precision loss to that precision (its scalar_t arithmetic); the others compute in float32, rounded once.
    # Given one (a half precision operand; None otherwise), ``fn`` returns its derivatives as functions of the
    # upstream gradient, which apply it where PyTorch's backward does (g (x - t) / den, not g ((x - t) / den))
    rounds_steps = False
    half_dtype = None

    def forward(self, x, t, fn, reduction, params, out_dtype=None):
        need = self.needs_input_grad or (False, False)
        self.params = params  # (the loss's own: PyTorch's saved beta, delta, weights)
        if self.rounds_steps:
            params = (None if self.half_dtype is None else _step_rounding(self.half_dtype), *params)
        loss, dx, dt = fn(x, t, need[0], need[1], *params)
        self.saved, self.reduction, self.shape = (dx, dt), reduction, loss.shape
        if reduction == "none":
            return loss if out_dtype is None else loss.astype(out_dtype)
        total = loss.sum(dtype=loss.dtype)
        if reduction != "sum":
            total = total / loss.dtype.type(loss.size)  # (kl_div's 'batchmean' divides outside this node)
        return scalar_result(total if out_dtype is None else total.astype(out_dtype), out_dtype or loss.dtype)

    def backward(self, g):
        dx, dt = self.saved
        if self.rounds_steps and self.half_dtype is not None:  # PyTorch's: d(g), then its division by n
            r = _step_rounding(self.half_dtype)
            n = xp.float32(max(1, int(xp.prod(self.shape))) if self.reduction == "mean" else 1)
            return tuple(None if d is None else r(d(g) / n) for d in (dx, dt))
        if self.reduction == "mean":
            g = g / max(1, int(xp.prod(self.shape)))
        return (g * dx if dx is not None else None), (g * dt if dt is not None else None)

    # PyTorch's saved arguments (its formula reads them; this node keeps the derivatives they give)
    _saved_self = property(lambda node: checked_argument(node, 0, 0))
    _saved_target = property(lambda node: checked_argument(node, 1, 1))
    _saved_reduction = property(lambda node: REDUCTION_ENUM[node.reduction])


def _step_rounding(half):
    """A function rounding a float32 array to the half precision ``half`` (kept as float32), or the identity."""
    if half is None:
        return lambda a: a
    return lambda a: a.astype(half).astype(xp.float32)


def _named_loss(torch_name: str) -> type:
    """A ``PointwiseLoss`` whose node reads as PyTorch's (``MseLossBackward0``)."""
    return torch_named(torch_name)(type(torch_name[:-len("Backward0")], (PointwiseLoss,), {"__module__": __name__}))


MseLoss = _named_loss("MseLossBackward0")
SmoothL1Loss = _named_loss("SmoothL1LossBackward0")
BinaryCrossEntropy = _named_loss("BinaryCrossEntropyBackward0")
BinaryCrossEntropyWithLogits = _named_loss("BinaryCrossEntropyWithLogitsBackward0")
BinaryCrossEntropy.rounds_steps = BinaryCrossEntropyWithLogits.rounds_steps = True
SmoothL1Loss._saved_beta = property(lambda node: node.params[0])
# the class weights (params[0]), as PyTorch's binary_cross_entropy saves them: expanded to the target's shape
BinaryCrossEntropy._saved_weight = property(lambda node: None if node.params[0] is None else
                                            checked_argument(node, 2).expand(node.shape))
BinaryCrossEntropyWithLogits._saved_weight = property(lambda node: None if node.params[0] is None else
                                                      checked_argument(node, 2))
BinaryCrossEntropyWithLogits._saved_pos_weight = property(
    lambda node: None if node.params[1] is None else checked_argument(node, 2 + (node.params[0] is not None)))


@torch_named("HuberLossBackward0")
class HuberLoss(PointwiseLoss):
    """huber_loss's node: PyTorch's backward kernel refuses a target of a dtype other than the input's (its
    forward casts it), so this one does too (``mismatch``: the error, set by ``huber_loss``)."""
    mismatch: str | None = None
    _saved_delta = property(lambda node: node.params[0])

    def backward(self, g):
        if self.mismatch is not None:
            raise RuntimeError(self.mismatch)
        return super().backward(g)


def _type_name(t: Tensor) -> str:
    """PyTorch's name of a tensor's scalar type in its messages: 'Float', 'Long'."""
    return SCALAR_TYPE_NAMES[t.dtype.name]


def _same_size(input: Tensor, target: Tensor) -> None:
    if input._data.shape != target._data.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def optional_tensor(kernel: str, argument: str, position: int, value) -> None:
    """PyTorch's TypeError for an optional tensor argument (a loss's ``weight``) given a float, a list or a NumPy
    value; ``kernel`` is the name PyTorch's message gives (its ATen operator's, not always the Python function's)."""
    if value is not None:
        _refuse_non_tensor(kernel, argument, value, position)


def _broadcast_weight(weight: Tensor | None, target: Tensor):
    """A loss's ``weight`` array, refused as PyTorch refuses it when it does not broadcast with the target."""
    if weight is None:
        return None
    try:
        xp.broadcast_shapes(weight._data.shape, target._data.shape)
    except ValueError:
        raise RuntimeError(f"the weight of shape {tuple(weight.shape)} does not broadcast to the target's shape "
                           f"{tuple(target.shape)}") from None
    return weight._data


def _warn_size(input: Tensor, target: Tensor) -> None:
    """PyTorch's warning for a regression loss's target of another shape (at the user's line, through a loss
    module too, where it names PyTorch's loss modules' module)."""
    if input._data.shape != target._data.shape:
        _warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                       f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
                       "Please ensure they have the same size.", through=_LOSS_MODULES)


def _pointwise(name: str, input: Tensor, target, fn, reduction: str, *params, same_shape: bool = False,
               warn_size: bool = False, kernel: str | None = None, saved: tuple = (), dtype_of: str = "promoted",
               node: type | None = None) -> Tensor:
    """The loss node (``node``, a ``PointwiseLoss`` named as PyTorch's) on ``input`` and ``target``, after PyTorch's
    checks: a target of another shape is an error (``same_shape``), or warned about (``warn_size``: the regression
    losses). The dtype it computes in and returns, as PyTorch's kernel (``dtype_of``): ``"promoted"``, the two
    operands' result type (a float32 input with a float64 target gives float64; each gradient is cast back to its
    operand's dtype), ``"input"`` (the target cast to the input's dtype) or ``"target"`` (computed in the result
    type, returned in the target's dtype). A non-floating dtype to compute in is PyTorch's NotImplementedError
    naming its CPU ``kernel`` (RuntimeError where it has none). ``saved``: the tensors PyTorch saves for this loss's
    backward (the input, the target, the weights), whose change in place before backward is its error (the node
    keeps derivatives computed in forward, so they are checked, not read)."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    if input._data.shape != target._data.shape:
        if same_shape:
            _same_size(input, target)
        if warn_size:
            _warn_size(input, target)
    if dtype_of == "target" and not input.is_floating_point() and kernel is not None:
        raise not_implemented_for(kernel, input.dtype)
    if input.dtype == target.dtype or dtype_of == "input":
        dtype = input.dtype
    else:  # (a loss that broadcasts its operands, as PyTorch's broadcast_tensors first, promotes a 0-d one fully)
        dtype = _dtype.promote_types(input.dtype, target.dtype) if warn_size else result_dtype(input, target)
    if dtype_of == "input" and result_dtype(input, target)._category > dtype._category:
        raise RuntimeError(f"result type {SCALAR_TYPE_NAMES[result_dtype(input, target).name]} can't be cast to "
                           f"the desired output type {_type_name(input)}")
    if not dtype.is_floating_point:
        if kernel is not None:
            raise not_implemented_for(kernel, dtype)
        raise RuntimeError(f"{name}: expected a floating point input, got {dtype}")
    out_dtype = target._data.dtype if dtype_of == "target" and target.dtype != dtype else None
    out = (node or PointwiseLoss).apply(promoted(input, dtype), promoted(target, dtype), fn=fn, reduction=reduction,
                                        params=params, out_dtype=out_dtype)
    return version_checked(out, *saved)


def _mse(x, t, nx, nt):
    d = x - t
    return d * d, (2 * d if nx else None), (-2 * d if nt else None)


def _huber(x, t, nx, nt, delta, scale):
    """Huber loss (quadratic within |d| < delta, linear from delta on) times ``scale``; smooth L1 is huber/beta."""
    d = x - t
    ad = xp.abs(d)
    # both sides agree at |d| = delta in value and gradient; PyTorch's kernels take the linear side there, so the
    # gradient's own derivative (under create_graph) is 0 at the boundary, as PyTorch's double backward
    small = ad < delta
    loss = xp.where(small, 0.5 * d * d, delta * (ad - 0.5 * delta)) * scale
    grad = xp.where(small, d, delta * xp.sign(d)) * scale if nx or nt else None
    return loss, grad, (-grad if nt else None)


def _clamped_log(a):
    with xp.errstate(divide="ignore"):
        return xp.maximum(xp.log(a), a.dtype.type(-100))  # PyTorch clamps BCE's logs at -100


def _unrounded(a):
    return a


# The clamp of binary_cross_entropy's derivative's denominator: PyTorch's kernel holds it as a float constant, so a
# float64 loss divides by 1e-12 rounded to float32 (9.99999996e-13), 4e-9 relatively off 1e-12
_BCE_EPSILON = float(xp.float32(1e-12))


class _BceSlope(Node):
    """binary_cross_entropy's slope (x - t) / max(x (1 - x), 1e-12) as a function of x and t, for the loss's
    derivative under create_graph: its own derivatives are PyTorch's double-backward formulas, not the slope's
    (which the clamp would make 1e12 where x is 0 or 1): (x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2) in x,
    zero at x = t = 0 and x = t = 1, and -1 / max(x (1 - x), eps) in t (eps = 1e-12, in x's dtype)."""
    diagonal_jacobian = True

    def forward(self, x, t):
        self.saved = (x, t)
        return (x - t) / xp.maximum((1 - x) * x, x.dtype.type(_BCE_EPSILON))

    def backward(self, g):
        x, t = self.saved
        eps = x.dtype.type(1e-12)
        dx = g * (x * x - 2 * x * t + t) / ((x + eps) ** 2 * (1 - x + eps) ** 2) if self.needs_input_grad[0] else None
        dt = -g / xp.maximum((1 - x) * x, eps) if self.needs_input_grad[1] else None
        return dx, dt


def _recorded_slope(x, t):
    """``_BceSlope`` on the recorded stand-ins of a forward run again under create_graph (a plain array ``t``: a
    constant)."""
    def tensor(a):
        return a.t if type(a) is RecordedArray else Tensor._make(xp.asarray(a))

    return RecordedArray(_BceSlope.apply(tensor(x), tensor(t)))


def _recorded_logit(x):
    """logit(x) of a recorded stand-in, by ember's logit (PyTorch's derivative 1 / (x (1 - x)))."""
    from ...ops.pointwise import logit

    return RecordedArray(logit(x.t))


def _bce(x, t, nx, nt, r, w):
    """PyTorch's kernel, each step rounded by ``r`` (a half precision's scalar arithmetic; None: no rounding):
    (t - 1) max(log1p(-x), -100) - t max(log x, -100); its gradient (x - t) / max((1 - x) x, 1e-12), and the
    target's -logit(x) = -log(x / (1 - x)) (unclamped: +-inf at x = 0 and 1).

    Rounded, the derivatives are functions of the upstream gradient g in PyTorch's order: its backward kernel's
    g (x - t) / max(...), and the target's -logit(x) g (logit in the half precision's arithmetic, unclamped),
    each then times the weight."""
    steps, r = r is not None, r or _unrounded
    one = x.dtype.type(1)
    with xp.errstate(divide="ignore"):
        log_1mx = xp.maximum(r(xp.log1p(-x)), x.dtype.type(-100))  # PyTorch clamps BCE's logs at -100
    log_x = _clamped_log(x)
    loss = r(r(r(t - one) * log_1mx) - r(t * r(log_x)))
    num, den = r(x - t), xp.maximum(r(r(one - x) * x), r(x.dtype.type(_BCE_EPSILON)))
    # the target's derivative is PyTorch's -logit(x), unclamped: +-inf at x = 0 and 1, where the loss's logs are
    # clamped at -100
    with xp.errstate(divide="ignore"):
        if nt and not steps and is_recorded(x):  # (under create_graph: PyTorch's -logit(x), whose derivative at 0
            neg_logit = -_recorded_logit(x)  # and 1 is its logit's, infinite, where log(x / (1 - x))'s is NaN)
        else:
            neg_logit = -r(xp.log(r(x / r(one - x)))) if nt else None
    if not steps:  # (under create_graph, the slope whose derivatives are PyTorch's double backward)
        slope = (_recorded_slope(x, t) if is_recorded(x, t) else num / den) if nx else None
        return _weighted(loss, slope, neg_logit, w)
    dx = (lambda g: _times(r(r(g * num) / den), w, r)) if nx else None
    dt = (lambda g: _times(r(neg_logit * g), w, r)) if nt else None
    return _times(loss, w, r), dx, dt


def _bce_logits(x, t, nx, nt, r, w, pos_weight):
    """PyTorch's composition, each tensor op rounded by ``r`` (None: no rounding): (1 - t) x - log_sigmoid(x),
    log_sigmoid(x) weighed by 1 + (pw - 1) t with ``pos_weight``; its gradient sigmoid(x) - t, or
    (pw t + 1 - t) sigmoid(x) - pw t, and the target's -x, or log_sigmoid(-x) - pw log_sigmoid(x). Rounded, the
    derivatives are functions of the upstream gradient: PyTorch's d * g, then times the weight."""
    steps, r = r is not None, r or _unrounded
    one = x.dtype.type(1)
    log_sigmoid = r(xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))))  # (stable; one rounding, as its kernel)
    if pos_weight is None:
        loss = r(r(r(one - t) * x) - log_sigmoid)
        dx = r(r(sigmoid_array(x)) - t) if nx else None
        dt = -x if nt else None
    else:  # l = (1 - t) x + (1 + (pw - 1) t) log(1 + e^-x)
        pos_weight = pos_weight.astype(x.dtype, copy=False)
        lw = r(r(r(pos_weight - one) * t) + one)
        loss = r(r(r(one - t) * x) - r(log_sigmoid * lw))
        pt = r(pos_weight * t)
        dx = r(r(r(r(pt + one) - t) * r(sigmoid_array(x))) - pt) if nx else None
        if steps:  # PyTorch's log_sigmoid(-x) - log_sigmoid(x) pw, each rounded
            dt = r(r(xp.minimum(-x, 0) - xp.log1p(xp.exp(-xp.abs(x)))) - r(log_sigmoid * pos_weight)) if nt else None
        else:
            dt = -x - (pos_weight - one) * log_sigmoid if nt else None
    if not steps:
        return _weighted(loss, dx, dt, w)
    return (_times(loss, w, r), None if dx is None else (lambda g: _times(r(dx * g), w, r)),
            None if dt is None else (lambda g: _times(r(dt * g), w, r)))


def _times(a, w, r):
    """``a`` times the weights ``w`` (in a's dtype, as PyTorch's in-place product), rounded by ``r``; ``a`` itself
    when there are none."""
    return a if w is None else r(a * w.astype(a.dtype, copy=False))


def _weighted(loss, dx, dt, w):
    """The loss and its gradients times ``w``."""
    if w is None:
        return loss, dx, dt
    return _times(loss, w, _unrounded), _times(dx, w, _unrounded) if dx is not None else None, \
        _times(dt, w, _unrounded) if dt is not None else None


@full_precision
def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Mean squared error (x - y)^2."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _pointwise("mse_loss", input, target, _mse, reduction, warn_size=True, kernel="mse_cpu",
                      saved=(input, target), node=MseLoss)


@full_precision
def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Mean absolute error |x - y| (gradient sign(x - y), 0 at ties). As PyTorch's, ``(input - target).abs()``
    reduced: its dtypes, errors (bool operands) and graph (``MeanBackward0`` over ``AbsBackward0``) are the
    subtraction's, ``abs``'s and the reduction's; complex operands give a real loss."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not isinstance(target, Tensor):
        raise TypeError(f"l1_loss: target must be a Tensor, got {type(target).__name__}")
    _warn_size(input, target)
    if input.dtype != target.dtype and (input.ndim == 0) != (target.ndim == 0) and xp.bool_ not in (
            input._data.dtype, target._data.dtype):  # (PyTorch broadcasts the two first: a 0-d one promotes fully)
        dtype = _dtype.promote_types(input.dtype, target.dtype)
        input, target = cast(input, dtype), cast(target, dtype)
    return reduce_loss((input - target).abs(), reduction)


@full_precision
def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere; beta=0 is L1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)  # (as PyTorch's)
    return _pointwise("smooth_l1_loss", input, target, _huber, reduction, beta, 1 / beta, warn_size=True,
                      kernel="smooth_l1_cpu", saved=(input, target), node=SmoothL1Loss)


@full_precision
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere."""
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got {delta}")
    out = _pointwise("huber_loss", input, target, _huber, reduction, delta, 1.0, warn_size=True,
                     kernel="huber_cpu", saved=(input, target), dtype_of="input", node=HuberLoss)
    if target.dtype != input.dtype and type(out.grad_fn) is HuberLoss:
        out.grad_fn.mismatch = f"Found dtype {_type_name(target)} but expected {_type_name(input)}"
    return out


def _within_unit_interval(a) -> bool:
    return bool(((a >= 0) & (a <= 1)).all())


@full_precision
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x in [0, 1]; logs clamped at -100. Half precision
    operands are computed as PyTorch's kernel does, each step rounded to their dtype (bfloat16: PyTorch's bits)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _same_size(input, target)
    w = _broadcast_weight(weight, target)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target)} but expected {_type_name(input)}")
    # PyTorch's kernel checks each value (so a NaN fails too): a target outside [0, 1] would give a loss silently
    if not _within_unit_interval(input._data):
        raise RuntimeError("all elements of input should be between 0 and 1 (binary_cross_entropy takes "
                           "probabilities; use binary_cross_entropy_with_logits for raw scores)")
    if not _within_unit_interval(target._data):
        raise RuntimeError("all elements of target should be between 0 and 1 (binary_cross_entropy's targets are "
                           "probabilities: labels 0 and 1, or soft labels between them)")
    return _pointwise("binary_cross_entropy", input, target, _bce, reduction, w, same_shape=True,
                      kernel="binary_cross_entropy", saved=(input, target, weight), node=BinaryCrossEntropy)


@full_precision
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross-entropy in one stable formula; ``pos_weight`` weighs positive targets
    (broadcast along the last dim). ``weight`` and ``pos_weight`` receive no gradient. Half precision operands
    round each of PyTorch's tensor steps to their dtype, as PyTorch (bfloat16: PyTorch's bits)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input._data.shape != target._data.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if input.is_floating_point() and not target.is_floating_point():
        raise RuntimeError(f"result type {_type_name(input)} can't be cast to the desired output type "
                           f"{_type_name(target)}")
    optional_tensor("binary_cross_entropy_with_logits", "weight", 3, weight)
    optional_tensor("binary_cross_entropy_with_logits", "pos_weight", 4, pos_weight)
    w = _broadcast_weight(weight, target)
    pw = pos_weight._data if pos_weight is not None else None
    return _pointwise("binary_cross_entropy_with_logits", input, target, _bce_logits, reduction, w, pw,
                      kernel="log_sigmoid_cpu", saved=(input, target, weight, pos_weight), dtype_of="target",
                      node=BinaryCrossEntropyWithLogits)


@full_precision
def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """target * (log target - input), input being log-probabilities; 'batchmean' divides the sum by the batch size.

    Composed as PyTorch's: ``xlogy(t, t) - t * x`` (``exp(t) * (t - x)`` with ``log_target``), then reduced, so
    its dtypes, graph (``SubBackward0``/``MulBackward0`` under ``MeanBackward0``, ``SumBackward0`` or, for
    'batchmean', ``DivBackward0``) and gradients are those ops' (a zero target's own gradient is NaN, 0/0 in
    xlogy's derivative, as PyTorch's).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, _REDUCTIONS + ("batchmean",))
    if reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                       "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                       "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                       through=_LOSS_MODULES)
    return kl_div_reduced(input, target, reduction, log_target)


def kl_div_reduced(input: Tensor, target: Tensor, reduction: str, log_target: bool) -> Tensor:
    """``kl_div`` with a checked ``reduction``, without the functional's warning for 'mean' (PyTorch's native
    ``torch.kl_div`` gives none)."""
    from ...ops.gamma_fns import xlogy

    if not isinstance(target, Tensor):
        raise TypeError(f"kl_div: target must be a Tensor, got {type(target).__name__}")
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    loss = target.exp() * (target - input) if log_target else xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return reduce_loss(loss, reduction)
