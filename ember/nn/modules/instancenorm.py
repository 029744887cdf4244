"""Instance normalisation: InstanceNorm1d/2d/3d (each sample's channels normalised over their own positions) and
their lazy forms (``LazyInstanceNorm1d``...: ``num_features`` from the first input)."""

from __future__ import annotations

from ..._tensor import Tensor
from ..._warnings import warn
from .._ops.norm import instance_norm
from .batchnorm import _LazyNormBase
from .normalization import _BatchNorm


class _InstanceNorm(_BatchNorm):
    """PyTorch's defaults differ from BatchNorm's: affine=False, track_running_stats=False. The buffers, when
    tracked, are BatchNorm's (running_mean, running_var, num_batches_tracked; the last is never advanced, as in
    PyTorch)."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        d = self._no_batch_dim
        if input.ndim not in (d, d + 1):
            raise ValueError(f"expected {d}D or {d + 1}D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by "
                 "not passing in num_features, which is not used because affine=False",
                 through={"ember.nn.modules.module": "torch.nn.modules.module"})  # PyTorch's reaches Module's call
        unbatched = input.ndim == self._no_batch_dim
        out = instance_norm(input.unsqueeze(0) if unbatched else input, self.running_mean, self.running_var,
                            self.weight, self.bias, self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over (N, C, L) or unbatched (C, L) input."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over (N, C, H, W) or unbatched (C, H, W) input (style transfer, pix2pix, CycleGAN)."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over (N, C, D, H, W) or unbatched (C, D, H, W) input."""

    _no_batch_dim = 4


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
