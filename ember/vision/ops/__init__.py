"""torchvision.ops on ember: box arithmetic, NMS, the focal and box-IoU losses, stochastic depth and the model
building blocks.

Written with tensor ops (differentiable where torchvision's are); ``nms`` / ``batched_nms`` are a NumPy loop in
place of torchvision's compiled kernel, with the same kept indices. The region operators built on compiled
kernels (``roi_align``, ``roi_pool``, ``ps_roi_align``, ``deform_conv2d`` and their modules) are not provided.
"""

from ..._missing import module_getattr as _module_getattr
from . import boxes, misc
from .boxes import (
    batched_nms,
    box_area,
    box_convert,
    box_iou,
    clip_boxes_to_image,
    generalized_box_iou,
    nms,
    remove_small_boxes,
)
from .losses import (
    StochasticDepth,
    complete_box_iou_loss,
    distance_box_iou_loss,
    generalized_box_iou_loss,
    sigmoid_focal_loss,
    stochastic_depth,
)
from .misc import MLP, Conv2dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation

__all__ = ["MLP", "Conv2dNormActivation", "FrozenBatchNorm2d", "Permute", "SqueezeExcitation", "StochasticDepth",
           "batched_nms", "box_area", "box_convert", "box_iou", "boxes", "clip_boxes_to_image",
           "complete_box_iou_loss", "distance_box_iou_loss", "generalized_box_iou", "generalized_box_iou_loss",
           "misc", "nms", "remove_small_boxes", "sigmoid_focal_loss", "stochastic_depth"]

__getattr__ = _module_getattr(__name__, "torchvision.ops")  # missing names (roi_align, ...): torchvision features
