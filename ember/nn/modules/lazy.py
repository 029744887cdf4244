"""``LazyModuleMixin``, what the lazy modules add to the layer they stand for. The lazy modules are defined beside
that layer, as in PyTorch: ``LazyLinear`` in ``linear.py``, ``LazyConv1d/2d/3d`` and ``LazyConvTranspose1d/2d/3d`` in
``conv.py``, ``LazyBatchNorm1d/2d/3d`` in ``batchnorm.py``, ``LazyInstanceNorm1d/2d/3d`` in ``instancenorm.py``. Each
infers its input size (``in_features``, ``in_channels``, ``num_features``) from the first input it is called on,
creates its parameters then and initialises them as the module it stands for would (the same draws under the same
seed).

Before the first forward their parameters are uninitialised (``nn.parameter.UninitializedParameter``): an optimizer
may be built on them, a ``state_dict`` holds them as they are, and ``load_state_dict`` of a real state dict gives them
its shapes, as in PyTorch.

After the first forward the module becomes the one it stands for (``cls_to_become``: ``LazyLinear`` becomes
``Linear``), as PyTorch's does, so ``type(m) == nn.Linear`` tests (d2l's ``init_weights``) see it as one. A lazy
module is a subclass of that one from the start (``isinstance(m, nn.Linear)`` holds before and after).
"""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy, materialize
from .module import Module

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """What a lazy module adds to the module it stands for (``cls_to_become``): a forward pre-hook that calls
    ``initialize_parameters(*args, **kwargs)`` on the first call and removes itself, and a load pre-hook that gives
    uninitialised parameters the shapes of the state dict's tensors. Put it first among the bases."""

    cls_to_become: type[Module] | None = None

    def _start_lazy(self: Any) -> None:
        """Called at the end of ``__init__``, once the uninitialised parameters are in place."""
        self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)
        self._register_load_state_dict_pre_hook(self._lazy_load_hook)

    def has_uninitialized_params(self: Any) -> bool:
        """Whether a parameter or buffer of this module (not its children) is still uninitialised."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Infer the sizes from the forward's arguments and materialise and initialise the parameters."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self: Any, module: Module, args: tuple, kwargs: dict) -> None:
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        for key, hook in list(self._forward_pre_hooks.items()):
            if hook == self._infer_parameters:
                del self._forward_pre_hooks[key]
                self._forward_pre_hooks_with_kwargs.pop(key, None)
        load_hooks = self.__dict__.get("_load_state_dict_pre_hooks") or {}
        for key, hook in list(load_hooks.items()):  # (both hooks go, as PyTorch's)
            if hook == self._lazy_load_hook:
                del load_hooks[key]
        if self.cls_to_become is not None:
            # PyTorch's rule: the initialised module is the plain layer, hooks and lazy overrides gone
            self.__class__ = self.cls_to_become

    def _lazy_load_hook(self: Any, state_dict, prefix: str, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        """Give each uninitialised parameter or buffer the shape of its entry in ``state_dict`` (an uninitialised
        entry, from a lazy module's state dict, leaves it as it is)."""
        for name, tensor in (*self._parameters.items(), *self._buffers.items()):
            key = prefix + name
            if is_lazy(tensor) and key in state_dict and not is_lazy(state_dict[key]):
                with no_grad():
                    materialize(tensor, state_dict[key].shape)
