"""torchvision.models._utils: ``IntermediateLayerGetter``, the backbone wrapper detection models are built with."""

from __future__ import annotations

from collections import OrderedDict

from ... import nn
from ..._tensor import Tensor

__all__ = ["IntermediateLayerGetter"]


class IntermediateLayerGetter(nn.ModuleDict):
    """The direct children of ``model`` up to the last one named in ``return_layers``, run in registration order;
    ``forward`` returns an OrderedDict ``{return_layers[name]: output of child name}``.

    As torchvision's, it assumes the children are used in the order they were registered, each once (a model
    whose ``forward`` does more than chain its children, e.g. ResNet's ``flatten``, is cut before that point).
    The children keep their names, so ``state_dict()`` keys are the model's own (``layer1.0.conv1.weight``).
    """

    def __init__(self, model: nn.Module, return_layers: dict[str, str]) -> None:
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = return_layers
        remaining = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            remaining.pop(name, None)
            if not remaining:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x: Tensor) -> OrderedDict:
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
