"""v2's transform classes: v1's transforms under v2's calling convention (``_transform.Transform``), plus the
classes v2 adds (``ToImage``, ``ToDtype``) and those whose draws or reach differ from v1's (``Compose``,
``RandomApply``, ``RandomChoice``, ``RandomOrder``, ``RandomCrop``, ``Lambda``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember

from .... import nn
from ....utils._pytree import tree_flatten, tree_unflatten
from .. import _functional_pil as F_pil
from .. import _point
from .. import functional as F
from .. import transforms as v1
from ._transform import Transform, as_sample, unpacked


# ------------------------------------------------------------------------------------------- containers
class Compose(Transform):
    """Apply ``transforms`` in order to the whole sample."""

    def __init__(self, transforms: Sequence[Callable]):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs: Any) -> Any:
        outputs = as_sample(inputs)
        for transform in self.transforms:
            outputs = transform(*inputs)
            inputs = unpacked(outputs, inputs)
        return outputs

    def extra_repr(self) -> str:
        return "\n".join(str(t) for t in self.transforms)


class RandomApply(Transform):
    """Apply all ``transforms`` to the sample with probability ``p`` (one ``torch.rand(1)`` draw)."""

    def __init__(self, transforms: Sequence[Callable], p: float = 0.5):
        super().__init__()
        if not isinstance(transforms, (Sequence, nn.ModuleList)):
            raise TypeError("Argument transforms should be a sequence of callables or a `nn.ModuleList`")
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms, self.p = transforms, p

    def forward(self, *inputs: Any) -> Any:
        outputs = as_sample(inputs)
        if ember.rand(1).item() >= self.p:
            return outputs
        for transform in self.transforms:
            outputs = transform(*inputs)
            inputs = unpacked(outputs, inputs)
        return outputs


class RandomChoice(Transform):
    """Apply one of ``transforms``, picked by ``torch.multinomial`` with weights ``p`` (uniform by default)."""

    def __init__(self, transforms: Sequence[Callable], p: list[float] | None = None):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        self.transforms = transforms
        self.p = [w / sum(p) for w in p]

    def forward(self, *inputs: Any) -> Any:
        index = int(ember.multinomial(ember.tensor(self.p), 1))
        return self.transforms[index](*inputs)


class RandomOrder(Transform):
    """Apply ``transforms`` to the sample in an order drawn by ``torch.randperm``."""

    def __init__(self, transforms: Sequence[Callable]):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs: Any) -> Any:
        outputs = as_sample(inputs)
        for i in ember.randperm(len(self.transforms)).tolist():
            outputs = self.transforms[i](*inputs)
            inputs = unpacked(outputs, inputs)
        return outputs


class Lambda(Transform):
    """Apply ``lambd`` to every leaf of the sample whose type is one of ``types`` (every leaf by default)."""

    def __init__(self, lambd: Callable, *types: type):
        super().__init__()
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd, self.types = lambd, types or (object,)

    def forward(self, *inputs: Any) -> Any:
        leaves, spec = tree_flatten(as_sample(inputs))
        return tree_unflatten([self.lambd(x) if isinstance(x, self.types) else x for x in leaves], spec)


# ------------------------------------------------------------------------------------------- conversions
def to_image(inpt) -> ember.Tensor:
    """PIL image, ``(H, W[, C])`` ndarray or tensor -> ``(C, H, W)`` tensor of the same dtype, unscaled."""
    if F_pil.is_pil_image(inpt):
        return F.pil_to_tensor(inpt)
    if isinstance(inpt, np.ndarray):
        array = inpt[:, :, None] if inpt.ndim == 2 else inpt
        return ember.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
    if F._is_tensor(inpt):
        return inpt
    raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but got {type(inpt)} instead.")


class ToImage(Transform):
    """PIL image or ndarray -> ``(C, H, W)`` tensor, unscaled (torchvision returns a ``tv_tensors.Image``; ember
    a plain tensor). The sample's ndarray counts as its image when it holds no PIL image or tensor."""

    def forward(self, *inputs: Any) -> Any:
        leaves, spec = tree_flatten(as_sample(inputs))
        if not any(F_pil.is_pil_image(x) or F._is_tensor(x) for x in leaves):
            arrays = [i for i, x in enumerate(leaves) if isinstance(x, np.ndarray)]
            if arrays:
                leaves[arrays[0]] = to_image(leaves[arrays[0]])
            return tree_unflatten(leaves, spec)
        return super().forward(*inputs)

    def transform_image(self, image: Any) -> Any:
        return to_image(image)


def to_dtype(inpt: ember.Tensor, dtype=ember.float32, scale: bool = False) -> ember.Tensor:
    """``inpt.to(dtype)``; with ``scale`` the values are rescaled to the dtype's range as ``convert_image_dtype``."""
    return F.convert_image_dtype(inpt, dtype) if scale else inpt.to(dtype)


class ToDtype(Transform):
    """Convert the sample's tensor image to ``dtype`` (``scale=True``: rescaled to its value range; a dict
    ``dtype`` is torchvision's per-``tv_tensors`` form, which ember does not have). PIL images pass through."""

    def __init__(self, dtype, scale: bool = False):
        super().__init__()
        if not isinstance(dtype, ember.dtype):
            raise TypeError(f"dtype must be a torch.dtype (ember has no tv_tensors for a dict), got {type(dtype)}")
        self.dtype, self.scale = dtype, scale

    def transform_image(self, image: Any) -> Any:
        return to_dtype(image, self.dtype, self.scale) if F._is_tensor(image) else image


class ToPILImage(Transform):
    def __init__(self, mode: str | None = None):
        super().__init__()
        self.mode = mode

    def transform_image(self, image: Any) -> Any:
        return F.to_pil_image(image, self.mode)


class PILToTensor(Transform):
    def transform_image(self, image: Any) -> Any:
        return F.pil_to_tensor(image) if F_pil.is_pil_image(image) else image


# ------------------------------------------------------------------------------------------- v1's transforms
class RandomCrop(Transform, v1.RandomCrop):
    """v1's ``RandomCrop``, drawing an offset only along an axis the crop does not fill (v2's draws)."""

    @staticmethod
    def get_params(img, output_size) -> tuple[int, int, int, int]:
        h, w, th, tw = v1.RandomCrop.crop_bounds(img, output_size)
        top = int(ember.randint(0, h - th + 1, size=()).item()) if h > th else 0
        left = int(ember.randint(0, w - tw + 1, size=()).item()) if w > tw else 0
        return top, left, th, tw


class ConvertImageDtype(Transform, v1.ConvertImageDtype):
    pass


class Normalize(Transform, v1.Normalize):
    pass


class Resize(Transform, v1.Resize):
    pass


class CenterCrop(Transform, v1.CenterCrop):
    pass


class Pad(Transform, v1.Pad):
    pass


class RandomHorizontalFlip(Transform, v1.RandomHorizontalFlip):
    pass


class RandomVerticalFlip(Transform, v1.RandomVerticalFlip):
    pass


class RandomResizedCrop(Transform, v1.RandomResizedCrop):
    pass


class ColorJitter(Transform, v1.ColorJitter):
    pass


class Grayscale(Transform, v1.Grayscale):
    pass


class RandomGrayscale(Transform, v1.RandomGrayscale):
    pass


class RandomRotation(Transform, v1.RandomRotation):
    pass


class GaussianBlur(Transform, v1.GaussianBlur):
    pass


class RandomErasing(Transform, _point.RandomErasing):
    pass


class RandomInvert(Transform, _point.RandomInvert):
    pass


class RandomSolarize(Transform, _point.RandomSolarize):
    pass
