"""``torch._functorch.make_functional``: the legacy ``functorch`` package's stateless modules (``make_functional``,
``make_functional_with_buffers``, ``combine_state_for_ensemble``), which public code from before ``torch.func``
uses (PyTorch's ensembling and per-sample-gradient tutorials of 2022).

As PyTorch's: the module is deep-copied, the copy's parameters (and buffers) are taken out of it and returned, and
the copy keeps placeholders on the meta device in their place; calling the returned ``FunctionalModule`` with
tensors runs the copy on them. The call is ``torch.func.functional_call`` (tied weights: one tensor for every name
of the tie), and the stacking of ``combine_state_for_ensemble`` is ``torch.func.stack_module_state``'s, detached
(PyTorch's stacks are new tensors that do not require grad).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from .. import empty_like, nn
from .._tensor import Tensor
from ..func import functional_call, stack_module_state


def _extract(model: nn.Module, named, as_parameter: bool) -> tuple[tuple[Tensor, ...], tuple[str, ...]]:
    """The unique tensors ``named`` lists of ``model`` and their first names; every name of each (tied ones too)
    then holds a placeholder on the meta device, as PyTorch's stateless copy does."""
    unique = tuple(named(remove_duplicate=True))
    placeholders: dict[int, Tensor] = {}
    for name, tensor in named(remove_duplicate=False):
        stand_in = placeholders.get(id(tensor))
        if stand_in is None:
            stand_in = empty_like(tensor, device="meta")
            stand_in = placeholders[id(tensor)] = nn.Parameter(stand_in) if as_parameter else stand_in
        owner_name, _, attr = name.rpartition(".")
        owner = model.get_submodule(owner_name)
        if as_parameter:
            owner._parameters[attr] = stand_in
        else:
            owner._buffers[attr] = stand_in
    if not unique:
        return (), ()
    names, tensors = zip(*unique)
    return tuple(tensors), tuple(names)


class FunctionalModule(nn.Module):
    """What ``make_functional`` returns: ``fmodel(params, *args, **kwargs)`` runs the stateless copy of the module
    with ``params`` (in ``named_parameters()`` order) as its parameters."""

    def __init__(self, stateless_model: nn.Module, param_names: tuple[str, ...]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    @staticmethod
    def _create_from(model: nn.Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, names = _extract(model_copy, model_copy.named_parameters, True)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        return FunctionalModule(model_copy, names), params

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)), args, kwargs)


class FunctionalModuleWithBuffers(nn.Module):
    """What ``make_functional_with_buffers`` returns: ``fmodel(params, buffers, *args, **kwargs)``."""

    def __init__(self, stateless_model: nn.Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    @staticmethod
    def _create_from(model: nn.Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, param_names = _extract(model_copy, model_copy.named_parameters, True)
        buffers, buffer_names = _extract(model_copy, model_copy.named_buffers, False)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        return FunctionalModuleWithBuffers(model_copy, param_names, buffer_names), params, buffers

    def forward(self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        tensors = {**dict(zip(self.param_names, params)), **dict(zip(self.buffer_names, buffers))}
        return functional_call(self.stateless_model, tensors, args, kwargs)


def make_functional(model: nn.Module, disable_autograd_tracking: bool = False
                    ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
    """``(fmodel, params)``: a stateless copy of ``model`` and its parameters (new tensors, requiring grad as the
    originals do unless ``disable_autograd_tracking``); ``fmodel(params, *args)`` is ``model(*args)`` with
    ``params``. A model with buffers is PyTorch's error (``make_functional_with_buffers`` takes it)."""
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking=disable_autograd_tracking)


def make_functional_with_buffers(model: nn.Module, disable_autograd_tracking: bool = False
                                 ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)``: ``make_functional`` for a model with buffers;
    ``fmodel(params, buffers, *args)``."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking=disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[nn.Module]
                               ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)`` for ``vmap(fmodel, (0, 0, None))(params, buffers, x)``: the first model made
    functional, and every model's parameters and buffers stacked along a new first dim (constants, as
    PyTorch's). The models must be of one class and all in training or all in eval mode (PyTorch's errors)."""
    models = list(models)
    try:
        params, buffers = stack_module_state(models)
    except RuntimeError as err:  # the same checks, under this function's name
        raise RuntimeError(str(err).replace("stack_module_state", "combine_state_for_ensemble")) from None
    fmodel, _, _ = make_functional_with_buffers(models[0])
    return (fmodel, tuple(p.detach() for p in params.values()), tuple(b.detach() for b in buffers.values()))
