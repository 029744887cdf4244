"""torchvision.transforms.v2's calling convention over ember's v1 transforms.

A v2 transform takes a whole sample: ``t(img)``, ``t(img, label)``, ``t({"image": img, "label": 3})`` or any nest
of tuples, lists and dicts, and returns the same structure with the image transformed and everything else passed
through unchanged. The image is the sample's first PIL image, or, when it holds none, its first tensor (torchvision's
rule for plain tensors). Each transform draws its random parameters once per call, as the v1 transform it wraps
(the same ``torch.rand``/``torch.randint`` draws in the same order, so ``torch.manual_seed`` gives torchvision's
crops and flips).

Differences from torchvision: there are no ``tv_tensors`` (bounding boxes, masks, videos); ``ToImage`` returns a
plain tensor, and a sample's second PIL image is passed through rather than transformed like the first.
"""

from __future__ import annotations

from typing import Any

from .... import nn
from ....utils._pytree import tree_flatten, tree_unflatten
from .. import _functional_pil as F_pil
from .. import functional as F


def image_index(leaves: list) -> int | None:
    """The position of the sample's image among its leaves: the first PIL image, else the first tensor."""
    for i, leaf in enumerate(leaves):
        if F_pil.is_pil_image(leaf):
            return i
    for i, leaf in enumerate(leaves):
        if F._is_tensor(leaf):
            return i
    return None


def as_sample(inputs: tuple) -> Any:
    """``t(x)`` transforms ``x``; ``t(x, y, ...)`` the tuple ``(x, y, ...)`` (torchvision's packing)."""
    return inputs if len(inputs) > 1 else inputs[0]


def unpacked(outputs: Any, inputs: tuple) -> tuple:
    """The inverse of ``as_sample``: the positional inputs of the next transform in a chain."""
    return outputs if len(inputs) > 1 else (outputs,)


class Transform(nn.Module):
    """The base of v2's transforms: ``forward(*inputs)`` transforms the sample's image with ``transform_image``.

    A subclass that also derives from a v1 transform (listed after this class) gets that transform's
    ``forward`` as its ``transform_image``: one implementation of each transform, v1's.
    """

    def transform_image(self, image: Any) -> Any:
        return super().forward(image)

    def forward(self, *inputs: Any) -> Any:
        sample = as_sample(inputs)
        leaves, spec = tree_flatten(sample)
        index = image_index(leaves)
        if index is not None:
            leaves[index] = self.transform_image(leaves[index])
        return tree_unflatten(leaves, spec)
