"""Lazy modules: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d``,
``LazyInstanceNorm1d/2d/3d``, which infer their input size
(``in_features``, ``in_channels``, ``num_features``) from the first input they are called on, create their
parameters then and initialise them as the module they stand for would (the same draws under the same seed).

Before the first forward their parameters are uninitialised (``nn.parameter.UninitializedParameter``): an optimizer
may be built on them, a ``state_dict`` holds them as they are, and ``load_state_dict`` of a real state dict gives them
its shapes, as in PyTorch.

After the first forward the module becomes the one it stands for (``cls_to_become``: ``LazyLinear`` becomes
``Linear``), as PyTorch's does, so ``type(m) == nn.Linear`` tests (d2l's ``init_weights``) see it as one. A lazy
module is a subclass of that one from the start (``isinstance(m, nn.Linear)`` holds before and after).
"""

from __future__ import annotations

from typing import Any

from ... import _creation
from ..._dtype import int64
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy, materialize
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


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

    def state_dict(self: Any, *args, **kwargs):
        """As the module's, except that an uninitialised parameter or buffer goes in as it is (not detached), so
        loading it into another lazy module leaves that one uninitialised, as PyTorch's."""
        destination = super().state_dict(*args, **kwargs)  # type: ignore[misc]
        prefix = kwargs.get("prefix", args[1] if len(args) > 1 else "")
        for name, tensor in (*self._parameters.items(), *self._buffers.items()):
            if is_lazy(tensor) and prefix + name in destination:
                destination[prefix + name] = tensor
        return destination



class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype) if bias else None)
        self._start_lazy()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                materialize(self.weight, (self.out_features, self.in_features))
                if self.bias is not None:
                    materialize(self.bias, (self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (loaded from a state dict before the first forward)
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is its first input's channel dimension."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)  # type: ignore
        self._lazy_weight_and_bias(out_channels, bias, device, dtype)

    def _lazy_weight_and_bias(self: Any, out_channels: int, bias: bool, device, dtype) -> None:
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype) if bias else None)
        self._start_lazy()

    def reset_parameters(self: Any) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self: Any, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                batched, unbatched = self._nd + 2, self._nd + 1
                if input.dim() not in (batched, unbatched):
                    raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to "
                                       f"{type(self).__name__}, but got input of size: {input.shape}")
                self.in_channels = input.shape[1] if input.dim() == batched else input.shape[0]
                if self.in_channels % self.groups:
                    raise ValueError("in_channels must be divisible by groups")
                shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                         else (self.out_channels, self.in_channels // self.groups))
                materialize(self.weight, (*shape, *self.kernel_size))
                if self.bias is not None:
                    materialize(self.bias, (self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """``Conv1d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """``Conv2d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """``Conv3d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = Conv3d


class _LazyConvTransposeXdMixin(_LazyConvXdMixin):
    """A transposed convolution whose ``in_channels`` is its first input's channel dimension."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super(_LazyConvXdMixin, self).__init__(0, 0, kernel_size, stride, padding, output_padding,  # type: ignore
                                               groups, False, dilation, padding_mode)
        self._lazy_weight_and_bias(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvTransposeXdMixin, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeXdMixin, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeXdMixin, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` is its first input's channel dimension."""

    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin):
    """A batch norm whose ``num_features`` is its first input's channel dimension (dimension 1)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False)  # type: ignore[call-arg]
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64, device=device))
        self._start_lazy()

    def reset_parameters(self: Any) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self: Any, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.num_features = input.shape[1]
                for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
                    if tensor is not None:
                        materialize(tensor, (self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is its first input's dimension 1."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is its first input's dimension 1."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is its first input's dimension 1."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """``InstanceNorm1d`` whose ``num_features`` is its first input's dimension 1 (as PyTorch's, of an unbatched
    input too); affine with running statistics by default, as PyTorch's lazy one."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """``InstanceNorm2d`` whose ``num_features`` is its first input's dimension 1."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """``InstanceNorm3d`` whose ``num_features`` is its first input's dimension 1."""

    cls_to_become = InstanceNorm3d
