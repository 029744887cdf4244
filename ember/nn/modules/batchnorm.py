"""``torch.nn.modules.batchnorm``'s path: the batch-norm layers, defined with the other normalisation layers in
``normalization.py``, importable (and unpickled) from here as in PyTorch, and their lazy forms
(``LazyBatchNorm1d/2d/3d``, defined here as in PyTorch)."""

from __future__ import annotations

from typing import Any

from ... import _creation
from ..._dtype import int64
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, materialize
from .lazy import LazyModuleMixin
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm, _BatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "_BatchNorm", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d"]


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
