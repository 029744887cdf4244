"""v2's batch mixing: ``MixUp`` and ``CutMix`` over a batch of images and its class labels."""

from __future__ import annotations

import math
from typing import Any

import ember

from ....nn import functional as nnF
from ....utils._pytree import tree_flatten, tree_unflatten
from ._transform import Transform, as_sample


def _default_labels_index(sample: Any) -> int:
    """Where the labels are among the sample's leaves: the second item of an ``(images, labels)`` pair, or a dict's
    ``"labels"`` entry (any case), as torchvision's default ``labels_getter``."""
    if isinstance(sample, (tuple, list)) and len(sample) > 1 and not isinstance(sample[1], (tuple, list, dict)):
        return len(tree_flatten(sample[0])[0])
    if isinstance(sample, dict):
        keys = list(sample)
        for position, key in enumerate(keys):
            if isinstance(key, str) and key.lower() == "labels":  # dicts flatten in insertion order
                return sum(len(tree_flatten(sample[k])[0]) for k in keys[:position])
    raise ValueError("Could not infer where the labels are in the sample. Try passing a callable as the "
                     "labels_getter parameter?If there are no labels in the sample by design, pass "
                     "labels_getter=None.")


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None):
        super().__init__()
        self.alpha = float(alpha)
        self._dist = ember.distributions.Beta(ember.tensor([alpha]), ember.tensor([alpha]))
        self.num_classes = num_classes

    def forward(self, *inputs: Any) -> Any:
        sample = as_sample(inputs)
        leaves, spec = tree_flatten(sample)
        labels_at = _default_labels_index(sample)
        labels = leaves[labels_at]
        images_at = next(i for i, x in enumerate(leaves) if isinstance(x, ember.Tensor) and i != labels_at)
        images = leaves[images_at]
        if images.ndim != 4:
            raise ValueError(f"Expected a batched input with 4 dims, but got {images.ndim} dimensions instead.")
        if labels.ndim not in (1, 2):
            raise ValueError(f"labels should be index based with shape (batch_size,) or probability based with "
                             f"shape (batch_size, num_classes), but got a tensor of shape {tuple(labels.shape)}.")
        if labels.shape[0] != images.shape[0]:
            raise ValueError(f"The batch size of the image or video does not match the batch size of the labels: "
                             f"{images.shape[0]} != {labels.shape[0]}.")
        if labels.ndim == 1:
            if self.num_classes is None:
                raise ValueError("num_classes must be passed when the labels are class indices")
            labels = nnF.one_hot(labels, num_classes=self.num_classes)
        lam = float(self._dist.sample(()))
        leaves[images_at], lam = self._mix_images(images, lam)
        # the other sample's share: the batch rolled by one, as torchvision pairs them
        leaves[labels_at] = labels.roll(1, 0).mul(1.0 - lam).add(labels.mul(lam))
        return tree_unflatten(leaves, spec)

    def _mix_images(self, images: ember.Tensor, lam: float) -> tuple[ember.Tensor, float]:
        raise NotImplementedError


class MixUp(_BaseMixUpCutMix):
    """``lam * x + (1 - lam) * x.roll(1, 0)`` for images and one-hot labels, ``lam ~ Beta(alpha, alpha)``."""

    def _mix_images(self, images, lam):
        return images.roll(1, 0).mul(1.0 - lam).add(images.mul(lam)), lam


class CutMix(_BaseMixUpCutMix):
    """A box of the rolled batch pasted into each image; its area ``1 - lam`` (``lam ~ Beta(alpha, alpha)``, then
    recomputed from the box clipped to the image) weighs the rolled batch's labels."""

    def _mix_images(self, images, lam):
        height, width = images.shape[-2:]
        center_x = int(ember.randint(width, size=(1,)))
        center_y = int(ember.randint(height, size=(1,)))
        half = 0.5 * math.sqrt(1.0 - lam)
        half_w, half_h = int(half * width), int(half * height)
        x1, y1 = max(center_x - half_w, 0), max(center_y - half_h, 0)
        x2, y2 = min(center_x + half_w, width), min(center_y + half_h, height)
        out = images.clone()
        out[..., y1:y2, x1:x2] = images.roll(1, 0)[..., y1:y2, x1:x2]
        return out, 1.0 - (x2 - x1) * (y2 - y1) / (width * height)
