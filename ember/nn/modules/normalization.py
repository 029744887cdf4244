"""Normalisation layers: BatchNorm1d/2d/3d (running statistics), LayerNorm, GroupNorm, LocalResponseNorm, RMSNorm."""

from __future__ import annotations

from ... import _creation
from ..._dtype import int64
from ..._tensor import Tensor
from .. import init
from .._ops.norm import batch_norm, group_norm, layer_norm, local_response_norm, rms_norm
from ..parameter import Parameter
from .module import Module


def _affine(module: Module, shape, enabled: bool, bias: bool, dtype, device) -> None:
    """Register weight (ones) and bias (zeros) of ``shape``, or None placeholders."""
    make = lambda fill: Parameter(fill(*shape, dtype=dtype, device=device))  # noqa: E731
    module.register_parameter("weight", make(_creation.ones) if enabled else None)
    module.register_parameter("bias", make(_creation.zeros) if enabled and bias else None)


class _BatchNorm(Module):
    _dims: tuple = ()
    _version = 2  # (PyTorch's, since num_batches_tracked: a state dict of version 1 or none may lack it)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine(self, (num_features,), affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def _load_local(self, state_dict, prefix: str, assign: bool, missing: list, errors: list) -> None:
        """As Module's, except that a state dict from before PyTorch added ``num_batches_tracked`` (its
        ``_metadata`` gives this module a version below 2, or no version: old checkpoints such as early
        pretrained weights, and dicts rebuilt key by key, which lose ``_metadata``) loads without it, the count
        staying as it is, as in PyTorch."""
        before = len(missing)
        super()._load_local(state_dict, prefix, assign, missing, errors)
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key in missing[before:]:
            metadata = getattr(state_dict, "_metadata", None) or {}
            version = metadata.get(prefix[:-1], {}).get("version")
            if version is None or version < 2:
                missing.remove(key)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked._data += 1
            self.num_batches_tracked._bump_version()
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked._data)
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                          self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) input, per channel C.

    Training: batch statistics, running stats updated with ``momentum`` (None: cumulative
    average) using the unbiased variance; eval: the running statistics.
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) input, per channel C."""

    _dims = (4,)


def _reset_affine(module: Module) -> None:
    """A normalisation's ``reset_parameters``: weight ones, bias zeros (what a model built on the meta device
    and given storage by ``to_empty`` calls to initialise them)."""
    if getattr(module, "weight", None) is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims; weight ones, bias zeros."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _affine(self, shape, elementwise_affine, bias, dtype, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, times a weight (ones).
    ``eps=None``: the input dtype's machine epsilon, as PyTorch."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _affine(self, shape, elementwise_affine, False, dtype, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalise (N, C, *) over groups of C/num_groups channels; per-channel weight ones, bias zeros."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine(self, (num_channels,), affine, bias, dtype, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) input, per channel C."""

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose training statistics cover the whole global batch: every rank of
    ``process_group`` (default: the whole job) contributes its part of each channel.

    Use it under DistributedDataParallel when each rank's batch is small; 2 ranks with batch B then normalise and
    update running statistics exactly as one process with batch 2B. In eval mode, or when no process group of
    more than one rank is initialised, it is ordinary batch normalisation. Input: (N, C, *). Every rank must call
    forward (and backward) the same number of times, as with any collective.

    Differences from PyTorch: PyTorch's SyncBatchNorm runs on GPUs only and raises for CPU tensors; ember's runs on
    the CPU over MPI.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _sync_group(self):
        """The process group to synchronise over, or None when there is nothing to synchronise with."""
        from ... import distributed

        if not (self.training and distributed.is_initialized()):
            return None
        group = self.process_group if self.process_group is not None else distributed.default_group()
        return group if distributed.get_world_size(group) > 1 else None

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        group = self._sync_group()
        if group is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked._data += 1
            self.num_batches_tracked._bump_version()
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked._data)
        from .._ops.sync_batch_norm import sync_batch_norm

        return sync_batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias, factor, self.eps,
                               group)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """Return ``module`` with every BatchNorm*d layer in it replaced by a SyncBatchNorm that holds the same
        parameters, running statistics and training flag (a BatchNorm given directly is itself replaced)."""
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group)
            if module.affine:
                output.weight, output.bias = module.weight, module.bias
            output.running_mean, output.running_var = module.running_mean, module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta (AlexNet's normalisation)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
