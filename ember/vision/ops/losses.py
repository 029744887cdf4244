"""torchvision.ops' losses and stochastic depth: pure tensor functions, differentiable."""

from __future__ import annotations

import math

import ember

from ... import nn
from ..._tensor import Tensor
from ...nn import functional as F

__all__ = ["StochasticDepth", "complete_box_iou_loss", "distance_box_iou_loss", "generalized_box_iou_loss",
           "sigmoid_focal_loss", "stochastic_depth"]


def sigmoid_focal_loss(inputs: Tensor, targets: Tensor, alpha: float = 0.25, gamma: float = 2,
                       reduction: str = "none") -> Tensor:
    """Focal loss (Lin et al. 2017) on logits: BCE-with-logits scaled by ``(1 - p_t) ** gamma``.

    ``alpha`` in ``[0, 1]`` weights positives against negatives (a negative ``alpha`` turns weighting off);
    ``reduction`` is ``'none'`` (the default, as torchvision), ``'mean'`` or ``'sum'``.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
                         "'none', 'mean', 'sum'")
    p = ember.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
                     "'none', 'mean', 'sum'")


def _float(t: Tensor) -> Tensor:
    return t if t.dtype in (ember.float32, ember.float64) else t.float()


def _paired_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    """Intersection and union of each box with the box at the same position (zero where they do not overlap)."""
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xk1, yk1, xk2, yk2 = ember.max(x1, x1g), ember.max(y1, y1g), ember.min(x2, x2g), ember.min(y2, y2g)
    overlap = (yk2 > yk1) & (xk2 > xk1)
    inter = ember.where(overlap, (xk2 - xk1) * (yk2 - yk1), ember.zeros_like(x1))
    return inter, (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter


def _enclosing(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    return ember.min(x1, x1g), ember.min(y1, y1g), ember.max(x2, x2g), ember.max(y2, y2g)


def generalized_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7) -> Tensor:
    """``1 - GIoU`` of each box in ``boxes1`` with the box at the same position in ``boxes2`` (``(..., 4)``,
    ``(x1, y1, x2, y2)``), as torchvision: ``eps`` added to the union and the enclosing area; ``reduction``
    ``'none'`` (the default), ``'mean'`` or ``'sum'``."""
    boxes1, boxes2 = _float(boxes1), _float(boxes2)
    inter, union = _paired_inter_union(boxes1, boxes2)
    iou = inter / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return _reduce(1 - (iou - (area_c - union) / (area_c + eps)), reduction)


def _distance_iou_loss(boxes1: Tensor, boxes2: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    inter, union = _paired_inter_union(boxes1, boxes2)
    iou = inter / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    diagonal = (xc2 - xc1) ** 2 + (yc2 - yc1) ** 2 + eps
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    centres = ((x2 + x1) / 2 - (x1g + x2g) / 2) ** 2 + ((y2 + y1) / 2 - (y1g + y2g) / 2) ** 2
    return 1 - iou + centres / diagonal, iou


def distance_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7) -> Tensor:
    """``1 - IoU + d^2 / c^2`` (Zheng et al. 2020): the squared distance of the boxes' centres over the squared
    diagonal of their enclosing box, for boxes paired by position, as torchvision."""
    boxes1, boxes2 = _float(boxes1), _float(boxes2)
    return _reduce(_distance_iou_loss(boxes1, boxes2, eps)[0], reduction)


def complete_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7) -> Tensor:
    """The distance-IoU loss plus ``alpha * v``, ``v`` the squared difference of the boxes' aspect-ratio angles
    (times 4 / pi^2) and ``alpha = v / (1 - IoU + v + eps)`` held constant in the gradient, as torchvision."""
    boxes1, boxes2 = _float(boxes1), _float(boxes2)
    diou, iou = _distance_iou_loss(boxes1, boxes2, eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (math.pi ** 2)) * ember.pow(ember.atan((x2g - x1g) / (y2g - y1g)) - ember.atan((x2 - x1) / (y2 - y1)), 2)
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou + alpha * v, reduction)


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Randomly zero whole residual branches (Huang et al. 2016) and scale the rest by ``1 / (1 - p)``.

    ``mode='row'`` draws one keep/drop per sample (first dimension), ``'batch'`` one for the whole batch. The
    identity when not ``training`` or ``p == 0``. Draws torchvision's ``bernoulli_`` from ember's generator:
    torchvision's drops for the same seed.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.dim() - 1) if mode == "row" else [1] * input.dim()
    noise = ember.empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """``stochastic_depth`` as a module, active in training mode."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p, self.mode = p, mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
