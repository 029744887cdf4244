"""torchvision.ops.boxes: box arithmetic on ``(N, 4)`` tensors, and non-maximum suppression.

Boxes are ``(x1, y1, x2, y2)`` with ``0 <= x1 < x2`` and ``0 <= y1 < y2`` unless a function says otherwise. The
arithmetic is written with tensor ops, so gradients flow through ``box_iou`` and friends as in torchvision;
``nms`` / ``batched_nms`` return indices (no gradient) and run as a NumPy loop in place of torchvision's compiled
kernel, with the same result: kept indices in decreasing score order, a box suppressed when its IoU with a kept,
higher-scoring box is strictly greater than ``iou_threshold``, equal scores kept in input order.
"""

from __future__ import annotations

import ember

from ..._backend import xp
from ..._tensor import Tensor

__all__ = ["batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "generalized_box_iou",
           "nms", "remove_small_boxes"]


def _upcast(t: Tensor) -> Tensor:
    """As torchvision: compute in float32/float64 or int32/int64, so products of coordinates do not overflow."""
    if t.is_floating_point():
        return t if t.dtype in (ember.float32, ember.float64) else t.float()
    return t if t.dtype in (ember.int32, ember.int64) else t.int()


def box_area(boxes: Tensor) -> Tensor:
    """Areas ``(x2 - x1) * (y2 - y1)`` of ``(N, 4)`` boxes in ``(x1, y1, x2, y2)`` format, shape ``(N,)``."""
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = ember.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = ember.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Pairwise intersection over union of ``(N, 4)`` and ``(M, 4)`` boxes, shape ``(N, M)``."""
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Pairwise generalized IoU (Rezatofighi et al. 2019): IoU minus the share of the enclosing box neither covers."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = ember.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = ember.max(boxes1[:, None, 2:], boxes2[:, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return iou - (areai - union) / areai


_FORMATS = ("xyxy", "xywh", "cxcywh")


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Convert ``(N, 4)`` boxes between ``'xyxy'``, ``'xywh'`` (corner + size) and ``'cxcywh'`` (centre + size)."""
    if in_fmt not in _FORMATS or out_fmt not in _FORMATS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return ember.stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """Clamp ``(..., 4)`` xyxy boxes into an image of ``size = (height, width)``."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return ember.stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
    """Indices (int64) of the xyxy boxes whose width and height are both at least ``min_size``."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return ember.where((ws >= min_size) & (hs >= min_size))[0]


def _nms_indices(boxes, scores, iou_threshold: float):
    """Greedy NMS over NumPy arrays, in the boxes' own dtype as torchvision's CPU kernel computes."""
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = xp.argsort(-scores, kind="stable")
    suppressed = xp.zeros(len(order), dtype=bool)
    keep = []
    for pos, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[pos + 1:]
        w = xp.maximum(xp.minimum(x2[i], x2[rest]) - xp.maximum(x1[i], x1[rest]), 0)
        h = xp.maximum(xp.minimum(y2[i], y2[rest]) - xp.maximum(y1[i], y1[rest]), 0)
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)  # in the boxes' dtype; compared in double, as the kernel
        suppressed[rest[iou.astype(xp.float64) > iou_threshold]] = True
    return xp.asarray(keep, dtype=xp.int64)


def _check_nms_args(boxes: Tensor, scores: Tensor) -> None:
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise RuntimeError(f"boxes should have 2 dimensions and 4 columns, got {tuple(boxes.shape)}")
    if boxes.dtype != scores.dtype:
        raise RuntimeError("dets should have the same type as scores")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise RuntimeError(f"scores should be 1-d with one score per box, got {tuple(scores.shape)} for "
                           f"{boxes.shape[0]} boxes")


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Indices (int64) of the boxes kept by greedy non-maximum suppression, in decreasing score order.

    ``boxes`` is ``(N, 4)`` xyxy, ``scores`` ``(N,)``; a box is dropped when its IoU with a kept box of higher
    score is greater than ``iou_threshold``.
    """
    _check_nms_args(boxes, scores)
    keep = _nms_indices(boxes.detach().numpy(), scores.detach().numpy(), iou_threshold)
    return ember.from_numpy(keep)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """NMS within each category ``idxs[i]`` independently; kept indices (int64) in decreasing score order."""
    _check_nms_args(boxes, scores)
    box_arr, score_arr = boxes.detach().numpy(), scores.detach().numpy()
    cats = idxs.detach().numpy()
    kept = xp.zeros(len(score_arr), dtype=bool)
    for cat in xp.unique(cats):
        members = xp.nonzero(cats == cat)[0]
        kept[members[_nms_indices(box_arr[members], score_arr[members], iou_threshold)]] = True
    keep = xp.nonzero(kept)[0]
    keep = keep[xp.argsort(-score_arr[keep], kind="stable")]
    return ember.from_numpy(keep.astype(xp.int64))
