"""Margin and embedding losses: margin_ranking, hinge_embedding, soft_margin, cosine_embedding and the triplet
losses.

Each is composed of differentiable ember ops, written as PyTorch computes it (the same terms in the same order,
clamps that pass the gradient at the boundary), so first and higher-order gradients follow from those ops'.
"""

from __future__ import annotations

from collections.abc import Callable

from ..._autocast import full_precision
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES
from ..._tensor import Tensor
from ...autograd.graph import shown_as, version_checked
from ...ops.distance import pairwise_distance
from ...ops.elementwise import minimum
from ...ops.indexing import where
from .loss import _check_reduction, checked_reduction, legacy_reduction, reduce_loss, refuse_grad


@full_precision
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin): ``target`` (1 or -1) says which input should rank higher.

    The three tensors must have one number of dimensions and broadcast together (RuntimeError otherwise)."""
    reduction = checked_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return ranking_loss(input1, input2, target, margin, reduction)


@full_precision
def ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float, reduction: str) -> Tensor:
    """``margin_ranking_loss`` without the functional's check of the dimensions (PyTorch's native
    ``torch.margin_ranking_loss`` broadcasts operands of any number of dimensions)."""
    return reduce_loss((-target * (input1 - input2) + margin).clamp(min=0), reduction)


@full_precision
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where target is 1, max(0, margin - input) where it is -1 (a target of any other value takes
    both terms, as in PyTorch); input and target broadcast together. ``target`` receives no gradient."""
    reduction = checked_reduction(size_average, reduce, reduction)
    below_margin = where(target != 1, (margin - input).clamp(min=0), 0)
    return reduce_loss(below_margin + where(target != -1, input, 0), reduction)


@full_precision
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), the logistic loss of targets 1 / -1, in ``input``'s dtype and shape (the
    target broadcasts to it). As in PyTorch, ``target`` may not require grad."""
    reduction = checked_reduction(size_average, reduce, reduction)
    refuse_grad("soft_margin_loss", "target", target)
    margin = -input * target
    if margin.shape != input.shape:
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                           f"{list(margin.shape)}")
    if not input.is_floating_point():  # PyTorch computes in place, in the input's dtype
        result = SCALAR_TYPE_NAMES[margin.dtype.name] if margin.is_floating_point() else "Float"
        raise RuntimeError(f"result type {result} can't be cast to the desired output type "
                           f"{SCALAR_TYPE_NAMES[input.dtype.name]}")
    loss = shown_as(reduce_loss(margin.to(input.dtype).exp().log1p(), reduction), "SoftMarginLossBackward0")
    return version_checked(loss, input, target)  # (PyTorch's node saves both: a change in place is refused)


# added to each squared norm, as PyTorch does: its EPSILON is a float constant, so a float64 loss adds 1e-12 rounded
# to float32 (9.99999996e-13)
_COSINE_EPSILON = float(xp.float32(1e-12))


@full_precision
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (0 for any other target).

    Rows of (N, D) inputs with an (N,) target, or (D,) vectors with a 0-d target; the cosine divides by
    sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12)). ``target`` receives no gradient."""
    reduction = checked_reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + _COSINE_EPSILON
    squares2 = (input2 * input2).sum(dim) + _COSINE_EPSILON
    cos = dot / (squares1 * squares2).sqrt()
    loss = where(target == 1, 1 - cos, 0) + where(target == -1, (cos - margin).clamp(min=0), 0)
    return reduce_loss(loss, reduction)


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, distance: Callable[[Tensor, Tensor], Tensor],
             margin: float, swap: bool, reduction: str) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)), d(a, n) replaced by d(p, n) where smaller when ``swap``."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = anchor.dim(), positive.dim(), negative.dim()
    if len(set(dims)) > 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    to_negative = distance(anchor, negative)
    if swap:  # the positive as the anchor, where it is nearer the negative (Balntas et al. 2016)
        to_negative = minimum(to_negative, distance(positive, negative))
    return reduce_loss((margin + distance(anchor, positive) - to_negative).clamp(min=0), reduction)


@full_precision
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d = ``pairwise_distance(., ., p, eps)`` over
    the last dimension; ``swap`` takes d(positive, negative) for the second distance where it is smaller.
    ``margin`` must be positive (ValueError)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps), margin, swap,
                    reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance ``distance_function(x1, x2)`` (a tensor of distances; by default
    ``pairwise_distance``). Runs in the inputs' dtype, under autocast too (it is not one of autocast's ops)."""
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)
