"""``ember.utils.tensorboard``: importable, so programs that import ``SummaryWriter`` load; ember writes no
TensorBoard event files, so constructing a ``SummaryWriter`` raises NotImplementedError saying what to do.
"""

from __future__ import annotations

from ..._missing import module_getattr

__all__ = ["SummaryWriter"]


class SummaryWriter:
    """Raises NotImplementedError on construction: ember cannot write TensorBoard logs."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError(
            "torch.utils.tensorboard.SummaryWriter is not implemented in ember: ember does not write "
            "TensorBoard event files. Log with print() or the csv module instead, or create the writer "
            "only when running under PyTorch (e.g. writer = SummaryWriter() if use_tensorboard else None)."
        )


__getattr__ = module_getattr(__name__)
