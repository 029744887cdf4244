"""Weights enums and the refusal of pretrained weights (ember has no network access to torchvision's files)."""

from __future__ import annotations

from enum import Enum
from typing import Any


class Weights(Enum):
    """A torchvision weights entry: the checkpoint's URL (``.url``) and the builder's class count."""

    @property
    def url(self) -> str:
        return self.value[0]

    @property
    def num_classes(self) -> int:
        return self.value[1]

    @classmethod
    def verify(cls, obj: Any):
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            return cls[obj.replace(cls.__name__ + ".", "")]
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received {type(obj).__name__}.")


def weights_enum(name: str, url: str) -> type[Weights]:
    """``<Model>_Weights`` with IMAGENET1K_V1 (``url``) and DEFAULT, as torchvision names them."""
    checkpoint = ("https://download.pytorch.org/models/" + url, 1000)
    return Weights(name, {"IMAGENET1K_V1": checkpoint, "DEFAULT": checkpoint})  # DEFAULT: an alias


def refuse_pretrained(builder: str, weights: Any, pretrained: bool, enum: type[Weights]) -> None:
    """Raise for ``pretrained=True`` or a weights entry: ember cannot download torchvision's checkpoints."""
    if pretrained:
        weights = enum.IMAGENET1K_V1
    weights = enum.verify(weights)
    if weights is not None:
        raise RuntimeError(
            f"{builder}(weights={weights}) needs torchvision's pretrained checkpoint ({weights.url}), which ember "
            f"does not download. Build the model with weights=None, then load a saved state_dict: "
            f"model.load_state_dict(torch.load('{weights.url.rsplit('/', 1)[-1]}'))")


def build(model_class, builder: str, enum: type[Weights], weights: Any, kwargs: dict[str, Any], *args):
    """``model_class(*args, **kwargs)`` after refusing pretrained weights (``pretrained`` is torchvision's
    deprecated keyword for them)."""
    refuse_pretrained(builder, weights, bool(kwargs.pop("pretrained", False)), enum)
    return model_class(*args, **kwargs)
