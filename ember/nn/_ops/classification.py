"""Class-index losses: cross_entropy (fused log-softmax + NLL, one node) and nll_loss.

Inputs are (N, C), (C,) or (N, C, d1, ...); the wrappers move the class dim
last and flatten to rows (M, C), so the nodes only see 2-D scores and 1-D
targets. With class weights w and 'mean', the sum is divided by the total
weight of the (non-ignored) targets, as in PyTorch.
"""

from __future__ import annotations

import math

from ..._autocast import full_precision
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES, np_kind
from ..._parallel import parallel_rows
from ..._tensor import Tensor
from ...autograd.graph import Node, show_node_as, version_checked
from ...autograd.recorded import is_recorded
from ...ops.activation import exp_into, log_softmax_array
from .loss import _check_reduction, legacy_reduction, optional_tensor, refuse_grad, scalar_result


def _target_weights(t, w, ignore_index: int, dtype):
    """(safe targets, per-row weight w[t] (0 where ignored), ignored mask). With no classes every target is
    ignored (``_check_classes``), and the safe targets index nothing."""
    ignored = t == ignore_index
    tt = xp.where(ignored, 0, t)
    wt = w[tt] if w is not None and w.size else xp.ones(t.shape, dtype=dtype)
    return tt, xp.where(ignored, dtype.type(0), wt), ignored


def _reduce_rows(loss, denom, reduction: str):
    if reduction == "none":
        return loss
    total = loss.sum(dtype=loss.dtype)
    with xp.errstate(invalid="ignore", divide="ignore"):  # every target ignored: NaN, as PyTorch
        return scalar_result(total if reduction == "sum" else total / denom, loss.dtype)


def _row_grad(g, denom, reduction: str, ignored):
    g = g.reshape(ignored.shape) if reduction == "none" else g  # (the node may give the loss the target's shape)
    """The upstream gradient for each row as a (M,) array; 0 on ignored rows (even when all are ignored)."""
    if reduction != "none":
        with xp.errstate(invalid="ignore", divide="ignore"):
            g = xp.broadcast_to((g / denom if reduction == "mean" else g).astype(g.dtype, copy=False), ignored.shape)
    return xp.where(ignored, g.dtype.type(0), g)


class _ShownLoss(Node):
    """A class loss's node, named as the node PyTorch's composition of the loss ends in (``shown``, set per call
    by ``_shown_as``: its name and its type's, as ``type(loss.grad_fn).__name__`` reads it); with reduction 'none'
    its output has the target's shape (``shape``) where PyTorch's last node gives it that shape itself."""

    def shaped(self, loss, shown, shape):
        show_node_as(self, shown)
        return loss.reshape(shape) if shape is not None else loss


def _shown_as(nd: int, soft: bool, smoothing: float, reduction: str) -> tuple[str | None, bool]:
    """(the name of the node PyTorch's cross_entropy / nll_loss of an ``nd``-D input ends in, whether that node
    gives a 'none' loss the target's shape). PyTorch computes a class-index loss with nll_loss, 2-D inputs (and
    (C,)) by its 1-D kernel, (N, C, H, W) ones by its 2-D kernel and other ranks by that kernel on a 4-D view
    of the input, whose unreduced loss it views back (``ViewBackward0`` over that NllLoss2DBackward0 node: False
    here); it adds a label-smoothing term to the NLL (``AddBackward0``) and computes class-probability targets as
    -(target * log_softmax).sum(1), divided by N for 'mean'."""
    if soft:
        return ("DivBackward1" if reduction == "mean" else "NegBackward0"), True
    if smoothing:
        return "AddBackward0", True
    if nd <= 2:
        return "NllLossBackward0", True
    if nd == 4 or reduction != "none":
        return "NllLoss2DBackward0", True
    return "NllLoss2DBackward0", False


class _FromLogSoftmax(_ShownLoss):
    """A loss fused with the log-softmax of its scores (input 0), whose backward reads the log-probabilities."""
    float32_compute = True
    rerun_for_higher_order = True  # backward reads log-softmax (not an output): create_graph records it again
    rerun_unchecked = (0,)  # (the scores: rerun_inputs)

    def rerun_inputs(self) -> list:
        """The rerun's scores are the saved log-probabilities, entering the graph where the scores did: log_softmax
        is unchanged by adding a constant to a row, in value and in derivatives of every order, so they give the
        rerun what the scores gave, and the scores may have changed in place since (PyTorch saves log_softmax's
        output, not its input)."""
        from ...autograd.recorded import RecordedArray

        edge = self.next_edges[0]
        logp = self.saved[0]
        if self.half_dtype is not None:  # (computed in float32: the scores' dtype where they enter the graph)
            logp = logp.astype(self.half_dtype)
        logp = Tensor._make(logp) if edge is None else Tensor._make(logp, edge[0], edge[1])
        return [RecordedArray(logp), *super().rerun_inputs()[1:]]


class CrossEntropy(_FromLogSoftmax):

    def forward(self, x, t, w, ignore_index, smoothing, reduction, shown="NllLossBackward0", shape=None):
        m, c = x.shape
        logp = log_softmax_array(x, 1)
        tt, wt, ignored = _target_weights(t, w, ignore_index, x.dtype)
        loss = (smoothing - 1) * wt * _picked(logp, tt)
        if smoothing:  # + eps/C * sum_c w_c (-log p_c), on non-ignored rows
            spread = logp @ w if w is not None else logp.sum(1)
            with xp.errstate(invalid="ignore"):  # no classes: eps/0 times no spread, NaN rows, as PyTorch
                loss -= xp.where(ignored, 0, spread) * (smoothing / c if c else math.inf)
        self.denom = wt.sum() if reduction == "mean" else 1
        self.meta = (tt, wt, ignored, w, smoothing, reduction)
        self.saved = (logp,)
        out = _reduce_rows(loss.astype(x.dtype, copy=False), self.denom, reduction)
        if smoothing and not c and reduction != "none":  # PyTorch scales the reduced spread by eps/0: NaN
            out = scalar_result(xp.nan, x.dtype)        # (with no rows too)
        return self.shaped(out, shown, shape)

    def backward(self, g):
        # d loss_i / dx_i = softmax_i * sum(q_i) - q_i, where q_i = (1-eps) w[t_i] onehot(t_i) + eps/C w (non-ignored)
        (logp,) = self.saved
        tt, wt, ignored, w, eps, reduction = self.meta
        m, c = logp.shape
        if not c:  # no classes: no scores to take a gradient
            return xp.zeros_like(logp), None
        gi = _row_grad(g, self.denom, reduction, ignored)
        keep = ~ignored * gi
        wsum = w.sum() if w is not None else c
        qsum = (1 - eps) * wt + (eps / c) * wsum * (~ignored)
        gx = _softmax_times(logp, (gi * qsum).astype(logp.dtype, copy=False)[:, None])
        gx[xp.arange(m), tt] -= (1 - eps) * gi * wt
        if eps:
            gx -= (keep * (eps / c))[:, None] * (w if w is not None else 1)
        return gx, None


def _picked(x, tt):
    """``x[i, tt[i]]`` for each row i: zeros where there are no classes (then every target is ignored)."""
    if not x.shape[1]:
        return xp.zeros(x.shape[0], dtype=x.dtype)
    return x[xp.arange(x.shape[0]), tt]


def _softmax_times(logp, c):
    """exp(logp) * c (softmax scaled per row), rows split among the intra-op threads (the plain expression when
    recorded, under create_graph)."""
    if is_recorded(logp, c):
        return xp.exp(logp) * c
    out = xp.empty_like(logp)
    parallel_rows(_exp_times, logp, c, out)
    return out


def _exp_times(logp, c, out) -> None:
    exp_into(logp, out)
    out *= c


class SoftCrossEntropy(_FromLogSoftmax):
    """Class-probability targets: loss_i = -sum_c w_c y_ic log p_ic (y smoothed by label_smoothing)."""
    # the log-probabilities for every gradient, the weighted targets (the target itself, unweighted and unsmoothed)
    # for the scores' only: the target is version-checked where PyTorch's product saves it (cross_entropy)
    saved_for = ((0, 1, 2), (0,))

    def forward(self, x, y, w, smoothing, reduction, shown="NegBackward0", shape=None):
        c = x.shape[1]
        logp = log_softmax_array(x, 1)
        self.scale = 1 - smoothing
        ys = y * self.scale + (smoothing / c if c else 0.0) if smoothing else y  # (no classes: nothing to smooth)
        wy = ys * w if w is not None else ys
        self.saved, self.meta = (logp, wy), (w, reduction, ys)
        # 'mean' divides by the input's size over its classes, as PyTorch: NaN with no classes
        rows = x.shape[0] if c else xp.nan
        return self.shaped(_reduce_rows(-(wy * logp).sum(1), rows, reduction), shown, shape)

    def backward(self, g):
        logp, wy = self.saved
        w, reduction, ys = self.meta
        gi = _row_grad(g, logp.shape[0], reduction, xp.zeros(logp.shape[0], dtype=bool))[:, None]
        nx, ny, nw = self.needs_input_grad
        gx = gi * (xp.exp(logp) * wy.sum(1, keepdims=True) - wy) if nx else None
        gy = None
        if ny:  # through the smoothing y -> (1 - eps) y + eps/C
            gy = -gi * self.scale * (logp * w if w is not None else logp)
        gw = -(gi * ys * logp).sum(0) if nw else None  # (the class weights: differentiable here, as PyTorch's)
        return gx, gy, gw


class NLL(_ShownLoss):
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)
    float32_compute = True

    def forward(self, x, t, w, ignore_index, reduction, shown="NllLossBackward0", shape=None):
        tt, wt, ignored = _target_weights(t, w, ignore_index, x.dtype)
        self.denom = wt.sum() if reduction == "mean" else 1
        self.meta = (tt, wt, ignored, reduction, x.shape)
        return self.shaped(_reduce_rows(-wt * _picked(x, tt), self.denom, reduction), shown, shape)

    def backward(self, g):
        tt, wt, ignored, reduction, shape = self.meta
        gx = xp.zeros_like(g, shape=shape)
        if shape[1]:  # (no classes: no scores)
            gx[xp.arange(shape[0]), tt] = -_row_grad(g, self.denom, reduction, ignored) * wt
        return gx, None


def _index_target_shape(input: Tensor) -> tuple[int, ...]:
    """The shape of a class-index target for ``input``: (N, d1, ...) for (N, C, d1, ...), () for (C,)."""
    shape = input._data.shape
    return (shape[0], *shape[2:]) if len(shape) > 1 else ()


def _rows(name: str, input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int = -100):
    """(scores as (M, C), target rows, original target shape) after checking shapes like PyTorch."""
    x = input
    if np_kind(x._data.dtype) not in "fc":  # PyTorch has no integer kernel (NumPy would fail to cast in place)
        raise NotImplementedError(f"{name}: input must hold floating-point scores (logits or log-probabilities), "
                                  f"got {input.dtype}")
    if x._data.ndim == 0:  # PyTorch's errors: nll_loss's own check; cross_entropy's kernel reads dim 1
        if name == "nll_loss":
            raise ValueError("Expected 1 or more dimensions (got 0): nll_loss's input needs a class dimension")
        if target._data.ndim == 0 and not target.is_floating_point():  # (the input's shape: probabilities)
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{SCALAR_TYPE_NAMES[target.dtype.name]} (cross_entropy's input needs a class "
                               "dimension, and got a 0-d tensor)")
        if target._data.ndim == 0:
            _refuse_ignore_index(ignore_index)
        raise IndexError(("Dimension specified as 1 but tensor has no dimensions" if target._data.ndim == 0 else
                          "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
                         + " (cross_entropy's input needs a class dimension, and got a 0-d tensor)")
    c = x._data.shape[1] if x._data.ndim > 1 else x._data.shape[0]
    if weight is not None and weight._data.shape != (c,):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    # PyTorch's rule: a target of the input's shape holds class probabilities (cross_entropy only), any other
    # holds class indices; the dtype is checked after the shapes, as PyTorch's kernels do
    soft = name == "cross_entropy" and target._data.shape == input._data.shape
    if soft and not target.is_floating_point():
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{SCALAR_TYPE_NAMES[target.dtype.name]} (a target of the input's shape "
                           f"{list(input.shape)} holds class probabilities: call .float() on a one-hot target, or "
                           f"pass class indices of shape {list(_index_target_shape(input))} instead)")
    if soft:
        _refuse_ignore_index(ignore_index)
    if weight is not None and not soft and weight.dtype != input.dtype:  # (PyTorch's kernel takes no other)
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[weight.dtype.name]}")
    if x._data.ndim == 1 and not soft:  # unbatched (C,): one class index, 0-d or of shape (1,) as PyTorch takes
        if target._data.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target._data.size != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target._data.size}")
        target = target.reshape(())
    if x._data.ndim == 1:
        x, target = x.unsqueeze(0), target.unsqueeze(0)
    elif x._data.ndim > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C) (the rows counted: C may be 0)
        rows = x._data.shape[0] * math.prod(x._data.shape[2:])
        x = x.permute(0, *range(2, x._data.ndim), 1).reshape(rows, c)
        if soft:
            target = target.permute(0, *range(2, target._data.ndim), 1).reshape(rows, c)
    if soft:
        return x, target, _index_target_shape(input)
    n_in, n_t = input._data.shape[0], target._data.shape[0] if target._data.ndim else 0  # (PyTorch's 0 for 0-d)
    if input._data.ndim > 1 and n_in != n_t:
        raise ValueError(f"Expected input batch_size ({n_in}) to match target batch_size ({n_t}).")
    expected = _index_target_shape(input)
    if input._data.ndim > 1 and target._data.shape != expected:
        raise RuntimeError(f"{name}: expected target size {list(expected)}, got {list(target.shape)}")
    if not c and n_in and (input._data.ndim == 3 or input._data.ndim > 4):
        # PyTorch views such an input as (N, C, 1, -1) for its 2-D kernel, which has no -1 to infer with no
        # classes, and then finds the target's (N, 1, -1) view another size
        raise RuntimeError(f"size mismatch (got input: [{n_in}, 0, 0, 0] , target: "
                           f"[{n_in}, 1, {math.prod(expected[1:])}]")
    if target._data.dtype not in (xp.int64, xp.uint8):  # PyTorch's kernels take these two only
        hint = "class indices must be int64 (call .long() on the target)"
        if target.is_floating_point() and name == "cross_entropy":
            hint += (f"; a floating target holds class probabilities and then has the input's shape "
                     f"{list(input.shape)}")
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{SCALAR_TYPE_NAMES[target.dtype.name]} ({hint})")
    return x, target.reshape(-1), expected


def _refuse_ignore_index(ignore_index: int) -> None:
    """PyTorch's cross_entropy of class probabilities takes no ``ignore_index`` (a negative one is the default's
    kind, and accepted): checked after the target's dtype, before the kernel reads the input."""
    if ignore_index >= 0:
        raise RuntimeError(f"ignore_index is not supported for floating point target (class probabilities have no "
                           f"class index to ignore; ignore_index={ignore_index})")


def _saved_target(input: Tensor, target: Tensor) -> Tensor | None:
    """The class-index target as PyTorch's loss saves it for backward (None: a copy of it, free to change in
    place before backward). For (N, C, d) input and (N, C, d1, d2, d3, ...) input PyTorch folds the target
    into 2-D positions through ``target.contiguous()``, a copy of a non-contiguous target; (N, C), (C,) and
    (N, C, H, W) input save the target itself."""
    nd = input._data.ndim
    if (nd == 3 or nd > 4) and not target.is_contiguous():
        return None
    return target


def _kernel(input: Tensor) -> str:
    """The forward PyTorch's class-index loss of ``input`` runs: its 2-D kernel for (N, C, d1, ...) input."""
    return "nll_loss_forward" if input._data.ndim <= 2 else "nll_loss2d_forward"


def _check_classes(t, c: int, ignore_index: int) -> None:
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds (expected class indices in [0, {c}) or "
                         f"ignore_index={ignore_index}).")


@full_precision
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over dim 1 (dim 0 for (C,) input) followed by NLL, as one node.

    ``target`` holds class indices (int64, input's shape without the class dim) or class
    probabilities (floating, the input's shape).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    label_smoothing = max(label_smoothing, 0.0)  # PyTorch checks only the upper end and ignores a negative value
    optional_tensor("cross_entropy_loss", "weight", 3, weight)
    x, t, out_shape = _rows("cross_entropy", input, target, weight, ignore_index)
    w = weight._data.astype(x._data.dtype, copy=False) if weight is not None else None
    # the class weights and the target are read by the gradient, as PyTorch's saved ones (a smoothed
    # probability target is a new tensor there)
    soft = t.is_floating_point()
    shown, own_shape = _shown_as(input._data.ndim, soft, label_smoothing, reduction)
    shape = out_shape if reduction == "none" and own_shape else None
    if soft:  # (PyTorch composes this loss of differentiable ops: the class weights take a gradient too)
        wt = weight if weight is None or weight.dtype == x.dtype else weight.to(x.dtype)
        out = SoftCrossEntropy.apply(x, t, wt, smoothing=label_smoothing, reduction=reduction, shown=shown,
                                     shape=shape)
        # PyTorch's -(log_softmax(x) * target).sum(1): its product saves the target for the scores' gradient only
        # (a smoothed target is a new tensor there); the class weights, multiplied in after, always
        version_checked(out, weight)
        version_checked(out, None if label_smoothing else target, reader=0)
    else:
        refuse_grad(_kernel(input), "weight", weight)
        _check_classes(t._data, x._data.shape[1], ignore_index)
        out = CrossEntropy.apply(x, t._data, w, ignore_index=ignore_index, smoothing=label_smoothing,
                                 reduction=reduction, shown=shown, shape=shape)
        version_checked(out, weight, _saved_target(input, target))
    return out.reshape(out_shape) if reduction == "none" and not own_shape else out


@full_precision
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-w[t] * input[t]: the negative log-likelihood of log-probabilities ``input`` (class dim 1)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    optional_tensor("nll_loss_nd", "weight", 3, weight)
    x, t, out_shape = _rows("nll_loss", input, target, weight)
    refuse_grad(_kernel(input), "weight", weight)
    _check_classes(t._data, x._data.shape[1], ignore_index)
    w = weight._data.astype(x._data.dtype, copy=False) if weight is not None else None
    shown, own_shape = _shown_as(input._data.ndim, False, 0.0, reduction)
    shape = out_shape if reduction == "none" and own_shape else None
    # PyTorch's node saves its input (the log-probabilities) too, though its formula reads only their shape
    out = version_checked(NLL.apply(x, t._data, w, ignore_index=ignore_index, reduction=reduction, shown=shown,
                                    shape=shape), input, weight, _saved_target(input, target))
    return out.reshape(out_shape) if reduction == "none" and not own_shape else out
