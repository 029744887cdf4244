"""``torch.nn.modules.batchnorm``'s path: the batch-norm layers, defined with the other normalisation layers in
``normalization.py``, importable (and unpickled) from here as in PyTorch."""

from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm, _BatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "_BatchNorm"]
