"""Class-index losses: nll_loss, and cross_entropy composed of log_softmax and nll_loss as PyTorch composes it.

nll_loss takes (C,), (N, C) or (N, C, H, W) scores in one node (PyTorch's NllLossBackward0 and
NllLoss2DBackward0, whose one edge is the input's: the target and the class weights are no differentiable
inputs); other ranks go through that 2-D node on an (N, C, 1, -1) view of the input, as PyTorch's nll_loss_nd.
The node moves the class dim last and flattens to rows (M, C) itself, on arrays. With class weights w and
'mean', the sum is divided by the total weight of the (non-ignored) targets, as in PyTorch. cross_entropy is
log_softmax over the class dim followed by that loss (LogSoftmaxBackward0 under NllLossBackward0); label
smoothing and class-probability targets add the same differentiable ops PyTorch's composition records.
"""

from __future__ import annotations

import math
import operator

from ..._autocast import full_precision
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES, np_kind
from ..._tensor import Tensor
from ...autograd.graph import _RELEASED_MSG, Node, torch_named, version_checked
from ...autograd.recorded import is_recorded
from ...autograd.saved_attributes import checked_argument
from ...ops.activation import log_softmax, note_row_picks
from ...ops.elementwise import TimesNumber, with_number
from .loss import REDUCTION_ENUM, _check_reduction, legacy_reduction, optional_tensor, refuse_grad, scalar_result


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
    """The upstream gradient for each row as a (M,) array; 0 on ignored rows (even when all are ignored)."""
    g = g.reshape(ignored.shape) if reduction == "none" else g  # (a 'none' loss has the target's shape)
    if reduction != "none":
        with xp.errstate(invalid="ignore", divide="ignore"):
            g = xp.broadcast_to((g / denom if reduction == "mean" else g).astype(g.dtype, copy=False), ignored.shape)
    return xp.where(ignored, g.dtype.type(0), g)


_CASCADE_LEVELS = 8  # (PyTorch's CPU nll_loss kernel's cascade_sum_num_levels)
# (its level power, max(4, CeilLog2(batch) / levels): 4 for every batch of at most 2 ** 39 rows, so 4 here)
_CASCADE_POWER = 4
# Fewer rows than this are summed by the loop: a level at a time costs about 0.2 ms whatever the rows (the array
# steps of eight levels), the loop about 0.3 µs a row plus 45 (float16, CPU time; the two even near 600 rows)
_CASCADE_LOOP_ROWS = 640


def _half_cascade(picked, wt, ignored, weighted: bool, half):
    """PyTorch's CPU nll_loss reduction of a half precision (float16, bfloat16) input, in that type: the losses
    ``-x[t] * w[t]`` (each product rounded to it) subtracted one at a time into a cascade of eight partial sums,
    level ``j`` flushed into level ``j + 1`` at each counted row whose index is a multiple of ``16 ** (j + 1)``
    (an ignored row is skipped whole, its flush too), the eight partials then summed in order from 0; every
    operation rounded to the half type. Returns (the summed loss, the total weight): the weights summed by the same
    cascade, or the count of rows not ignored rounded to the half type. ``picked``: the scores ``x[t]`` (float32,
    exact); ``wt``: the weights ``w[t]``."""
    values = picked.astype(half)
    weights = wt.astype(half)
    if weighted:
        values = values * weights
    kept = xp.flatnonzero(~ignored)
    total = _cascade_levels(values[kept], kept, True, half)
    if weighted:
        total_weight = _cascade_levels(weights[kept], kept, False, half)
    else:
        total_weight = half.type(xp.float32(len(kept)))
    return total, total_weight


def _cascade_levels(values, rows, negated: bool, half):
    """``_half_cascade_loop``'s sum of ``values`` (the rows not ignored, numbered ``rows``), a level at a time: level
    ``j``'s partial sum runs from zero over the values it receives (level 0: the rows' values, subtracted where
    ``negated``; level ``j + 1``: level ``j``'s partials at its flushes) and is flushed at each received row whose
    index is a multiple of ``16 ** (j + 1)`` (``_CASCADE_POWER`` bits a level): each run between flushes a group, summed
    in order for all groups at once (a column of a (groups, longest run) array per step, the short runs padded
    with zeros that change no sum: +0 subtracted, -0 added), so the roundings are the loop's. A level whose runs
    are long (ignored rows at many flush indices merge runs) is summed a value at a time; fewer than
    ``_CASCADE_LOOP_ROWS`` values by the loop."""
    if len(values) < _CASCADE_LOOP_ROWS:
        return _half_cascade_loop(values, rows, negated, half)
    mask = (1 << _CASCADE_POWER) - 1
    zero = half.type(0)
    leftovers = []
    for j in range(_CASCADE_LEVELS):
        m = len(values)
        if not m:  # (the levels above receive nothing: their zeros change no sum, which is never -0)
            break
        if j == _CASCADE_LEVELS - 1:  # (the last level is never flushed)
            flush = xp.zeros(m, dtype=bool)
        else:
            flush = (rows & (mask << (j * _CASCADE_POWER))) == 0
        group = xp.cumsum(flush) - flush  # (each value's group: the flushes before it)
        count = int(group[-1]) + 1
        starts = xp.searchsorted(group, xp.arange(count))
        length = int(xp.diff(xp.append(starts, m)).max())
        subtract = negated and not j
        if length > 64:  # (a value at a time, each added into its group's sum)
            acc = [zero] * count
            for g, value in zip(group.tolist(), values):
                acc[g] = acc[g] - value if subtract else acc[g] + value
            sums = xp.array(acc, dtype=half)
        else:
            pad = xp.zeros((count, length), dtype=half)
            if not subtract:
                pad[...] = -zero  # (x + -0 is x, -0 included)
            pad[group, xp.arange(m) - starts[group]] = values
            sums = xp.zeros(count, dtype=half)
            for col in pad.T:
                sums = sums - col if subtract else sums + col
        # the groups closed by a flush move up a level; the last group, where no flush closed it, stays here
        if flush[-1]:
            leftovers.append(zero)
            up = sums
        else:
            leftovers.append(sums[-1])
            up = sums[:-1]
        values = up
        rows = rows[flush]
    total = zero
    for partial in leftovers:
        total = total + partial
    return total


def _half_cascade_loop(values, rows, negated: bool, half):
    """The reference of ``_cascade_levels``: PyTorch's loop, a row at a time."""
    mask = (1 << _CASCADE_POWER) - 1
    zero = half.type(0)
    sums = [zero] * _CASCADE_LEVELS
    for b, value in zip(rows.tolist(), values):
        sums[0] = sums[0] - value if negated else sums[0] + value
        for j in range(_CASCADE_LEVELS - 1):
            if b & (mask << (j * _CASCADE_POWER)):
                break
            sums[j + 1] = sums[j + 1] + sums[j]
            sums[j] = zero
    total = zero
    for partial in sums:
        total = total + partial
    return total


def _class_rows(x):
    """Scores of PyTorch's kernel shapes, (C,), (N, C) or (N, C, H, W), as rows (M, C), one per target."""
    if x.ndim == 2:
        return x
    if x.ndim == 1:
        return x.reshape(1, -1)
    n, c, h, w = x.shape
    return x.transpose(0, 2, 3, 1).reshape(n * h * w, c)


def _from_class_rows(rows, shape: tuple):
    """``_class_rows``' inverse: rows (M, C) back to the scores' shape (contiguous, as PyTorch's gradient)."""
    if len(shape) == 2:
        return rows
    if len(shape) == 1:
        return rows.reshape(shape)
    n, c, h, w = shape
    out = rows.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    return out if is_recorded(out) else xp.ascontiguousarray(out)


@torch_named("NllLossBackward0")
class NLL(Node):
    """-w[t] * x[t] per target, on (C,) or (N, C) scores (PyTorch's nll_loss kernel): the scores are its one
    input, the targets ``t`` and class weights ``w`` parameters. PyTorch's node saves the scores, which this one
    does not keep (its gradient does not read them): ``_saved_self`` is the array held to check their version."""
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)
    float32_compute = True
    total_weight = None  # (a half precision input's summed weights, as PyTorch's kernel sums them)

    def forward(self, x, *, t, w, ignore_index, reduction):
        tt, wt, ignored = _target_weights(t.reshape(-1), w, ignore_index, x.dtype)
        self.denom = wt.sum() if reduction == "mean" else 1
        self.meta = (tt, wt, ignored, reduction, x.shape)
        self.arguments = (t, w, ignore_index)  # (PyTorch's saved target, weight and ignore_index: no copies)
        picked = _picked(_class_rows(x), tt)
        if self.half_dtype is not None and reduction != "none" and len(tt):
            # (PyTorch's kernel sums a half precision input's losses in that type, in a cascade: its bits)
            total, self.denom = _half_cascade(picked, wt, ignored, w is not None, self.half_dtype)
            self.total_weight = self.denom
            if reduction != "mean":
                self.denom = 1
            loss = scalar_result(total if reduction == "sum" else total / self.denom, x.dtype)
            return loss
        rows = -wt * picked
        if ignored.any():  # an ignored target's loss is 0 whatever its score (NaN, inf), as PyTorch's kernel skips it
            rows = xp.where(ignored, rows.dtype.type(0), rows)
        loss = _reduce_rows(rows, self.denom, reduction)
        return loss.reshape(t.shape) if reduction == "none" else loss

    def backward(self, g):
        tt, wt, ignored, reduction, shape = self.meta
        c = shape[1] if len(shape) > 1 else shape[0]
        gx = xp.zeros_like(g, shape=(len(tt), c))
        if c:  # (no classes: no scores)
            half = self.half_dtype
            if half is not None and reduction != "none" and not is_recorded(g):
                # (PyTorch's kernel: -(g / total weight), then times w, each rounded to the half type)
                grad = -(half.type(g) / self.denom if reduction == "mean" else half.type(g))
                picks = xp.where(ignored, half.type(0), wt.astype(half) * grad).astype(gx.dtype)
            else:
                picks = -_row_grad(g, self.denom, reduction, ignored) * wt
            gx[xp.arange(len(tt)), tt] = picks
            if len(shape) == 2 and self._post_hooks is None and not is_recorded(gx):  # (hooks may change gx)
                note_row_picks(gx, tt, picks.astype(gx.dtype, copy=False))
        return (_from_class_rows(gx, shape),)


    def _argument(self, position: int):
        """The target's or the weight's array, as PyTorch's ``_saved_<name>`` (its error once backward freed it)."""
        array = self.arguments[position]
        if array is None:  # (no weight: None, after backward too)
            return None
        if self.saved is None:
            raise RuntimeError(_RELEASED_MSG)
        return Tensor._make(array)

    _saved_self = property(lambda node: checked_argument(node, 0, 0))
    _saved_target = property(lambda node: node._argument(0))
    _saved_weight = property(lambda node: node._argument(1))
    _saved_reduction = property(lambda node: REDUCTION_ENUM[node.meta[3]])
    # (as PyTorch's: its int64 argument read back as an unsigned 64-bit number, -100 as 2**64 - 100)
    _saved_ignore_index = property(lambda node: node.arguments[2] % 2 ** 64)

    @property
    def _saved_total_weight(self) -> Tensor:
        """The summed weights of the targets not ignored, as PyTorch's forward returns them: 0 unreduced, but for
        a single sample's (C,) scores, whose kernel gives the target's weight (0 ignored) whatever the reduction."""
        wt, reduction, shape = self.meta[1], self.meta[3], self.meta[4]
        self._argument(0)  # (PyTorch's error once freed)
        if reduction == "none":
            total = wt.sum() if len(shape) == 1 else 0  # (one target: its weight, nothing summed)
        elif self.half_dtype is not None:  # (a half precision input's: the cascade's sum, in its type)
            total = 0 if self.total_weight is None else self.total_weight
        else:
            total = wt.sum()
        return Tensor._make(xp.asarray(total, dtype=wt.dtype if self.half_dtype is None else self.half_dtype))


@torch_named("NllLoss2DBackward0")
class NLL2D(NLL):
    """NLL on (N, C, H, W) scores with (N, H, W) targets (PyTorch's nll_loss2d kernel)."""


@torch_named("DivBackward1")
class _OverNumber(Node):
    """``x / s`` for a number ``s`` (PyTorch's div.Scalar, as ``ops.elementwise.TimesNumber``)."""
    diagonal_jacobian = True

    def forward(self, x, *, s):
        self.s = s
        return with_number(operator.truediv, x, s)

    def backward(self, g):
        return (with_number(operator.truediv, g, self.s),)


def _picked(x, tt):
    """``x[i, tt[i]]`` for each row i: zeros where there are no classes (then every target is ignored)."""
    if not x.shape[1]:
        return xp.zeros(x.shape[0], dtype=x.dtype)
    return x[xp.arange(x.shape[0]), tt]
def _target_shape_error(input: Tensor, target: Tensor, expected: tuple) -> str:
    """PyTorch's words for class indices of the wrong shape (the batch sizes agree), which depend on the kernel the
    input's rank picks: (N, C) takes a 1-d target only (a (N, 1) target is the usual mistake), (N, C, H, W) a 3-d
    one of its (N, H, W), any other rank the (N, d1, ...) it names."""
    if input._data.ndim == 2:
        return "0D or 1D target tensor expected, multi-target not supported"
    if input._data.ndim == 4:
        if target._data.ndim != 3:
            return ("only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                    f"{target._data.ndim}")
        return f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
    return f"Expected target size {list(expected)}, got {list(target.shape)}"


def _index_target_shape(input: Tensor) -> tuple[int, ...]:
    """The shape of a class-index target for ``input``: (N, d1, ...) for (N, C, d1, ...), () for (C,)."""
    shape = input._data.shape
    return (shape[0], *shape[2:]) if len(shape) > 1 else ()


def _checked(name: str, input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int = -100):
    """(whether ``target`` holds class probabilities, the target (a (1,) one of (C,) input as 0-d), the shape of an
    unreduced loss) after checking shapes and dtypes like PyTorch."""
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
    if soft:
        return True, target, _index_target_shape(input)
    n_in, n_t = input._data.shape[0], target._data.shape[0] if target._data.ndim else 0  # (PyTorch's 0 for 0-d)
    if input._data.ndim > 1 and n_in != n_t:
        raise ValueError(f"Expected input batch_size ({n_in}) to match target batch_size ({n_t}).")
    expected = _index_target_shape(input)
    if input._data.ndim > 1 and target._data.shape != expected:
        raise RuntimeError(_target_shape_error(input, target, expected))
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
    return False, target, expected


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


def _nll_nd(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str) -> Tensor:
    """PyTorch's nll_loss_nd on checked arguments: its 1-D kernel for (C,) and (N, C) input, its 2-D kernel for
    (N, C, H, W), and that kernel on an (N, C, 1, -1) view of a contiguous copy for other ranks (whose unreduced
    loss it views back to the target's shape). The node saves the input, the target and the class weights."""
    w = weight._data.astype(input._data.dtype, copy=False) if weight is not None else None
    nd = input._data.ndim
    if nd in (1, 2, 4):
        out = (NLL if nd < 4 else NLL2D).apply(input, t=target._data, w=w, ignore_index=ignore_index,
                                                reduction=reduction)
        return version_checked(out, input, weight, target)
    n, c = input._data.shape[:2]
    x = input.contiguous()
    x = x.view(n, c, 1, -1) if x._data.size else x.view(n, c, 0, 0)
    t = target._data.reshape(n, 1, -1) if target._data.size else target._data.reshape(n, 0, 0)
    out = NLL2D.apply(x, t=t, w=w, ignore_index=ignore_index, reduction=reduction)
    version_checked(out, x, weight, _saved_target(input, target))
    return out.view(n, *input._data.shape[2:]) if reduction == "none" else out


@full_precision
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over dim 1 (dim 0 for (C,) input) followed by nll_loss, as PyTorch composes it.

    ``target`` holds class indices (int64, input's shape without the class dim) or class
    probabilities (floating, the input's shape).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    label_smoothing = max(label_smoothing, 0.0)  # PyTorch checks only the upper end and ignores a negative value
    optional_tensor("cross_entropy_loss", "weight", 3, weight)
    soft, t, _ = _checked("cross_entropy", input, target, weight, ignore_index)
    class_dim = 0 if input._data.ndim == 1 else 1
    if soft:
        return _probability_loss(log_softmax(input, class_dim), target, weight, reduction, label_smoothing)
    refuse_grad(_kernel(input), "weight", weight)
    c = input._data.shape[class_dim]
    _check_classes(t._data, c, ignore_index)
    logp = log_softmax(input, class_dim)
    nll = _nll_nd(logp, t, weight, ignore_index, reduction)
    if not label_smoothing:
        return nll
    return _smoothed(nll, logp, target, weight, ignore_index, reduction, label_smoothing)


def _smoothed(nll: Tensor, logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
              reduction: str, eps: float) -> Tensor:
    """PyTorch's label-smoothed cross entropy: (1 - eps) * nll + eps / C * the reduced -sum_c w_c logp_c of
    the non-ignored targets ('mean' divides by their total weight)."""
    class_dim = 0 if logp.ndim == 1 else 1
    c = logp.shape[class_dim]
    ignored = target == ignore_index
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = c
        spread = -(logp * weight.view(shape)).sum(class_dim)
    else:
        spread = -logp.sum(class_dim)
    spread.masked_fill_(ignored, 0.0)
    if reduction == "mean":
        total = weight.gather(0, target.masked_select(~ignored).flatten()).sum() if weight is not None else (
            ~ignored).sum()
        spread = spread.sum() / total
    elif reduction == "sum":
        spread = spread.sum()
    # (no classes: eps/0, as PyTorch's double)
    return TimesNumber.apply(nll, s=1 - eps) + TimesNumber.apply(spread, s=eps / c if c else math.inf)


def _probability_loss(logp: Tensor, target: Tensor, weight: Tensor | None, reduction: str, eps: float) -> Tensor:
    """PyTorch's cross entropy of class probabilities: -(logp * target * w).sum over the classes, the target
    smoothed to (1 - eps) * target + eps / C; 'mean' divides by the number of rows (NaN with none)."""
    class_dim = 0 if logp.ndim == 1 else 1
    c = logp.shape[class_dim]
    if eps > 0:
        target = target * (1 - eps) + (eps / c if c else math.inf)
    terms = logp * target
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = c
        terms = terms * (weight.view(shape) if logp.ndim > 1 else weight)
    if reduction == "none":
        return -terms.sum(class_dim)
    if reduction == "sum":
        return -terms.sum()
    if not logp.numel():
        return (-terms.sum()).fill_(math.nan)
    return _OverNumber.apply(-terms.sum(), s=logp.numel() // c)


@full_precision
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-w[t] * input[t]: the negative log-likelihood of log-probabilities ``input`` (class dim 1)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    optional_tensor("nll_loss_nd", "weight", 3, weight)
    _, t, _ = _checked("nll_loss", input, target, weight)
    refuse_grad(_kernel(input), "weight", weight)
    _check_classes(t._data, input._data.shape[1 if input._data.ndim > 1 else 0], ignore_index)
    return _nll_nd(input, t, weight, ignore_index, reduction)
