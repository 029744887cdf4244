"""``torch.distributed.tensor.parallel``: tensor parallelism for Linear and Embedding layers on DTensor.

    tp = init_device_mesh("cpu", (2,))
    parallelize_module(mlp, tp, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})

What is supported, and what raises: docs/api.md ("DeviceMesh, DTensor and tensor parallel").
"""

from .api import parallelize_module
from .style import ColwiseParallel, ParallelStyle, RowwiseParallel, SequenceParallel

__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel", "SequenceParallel", "parallelize_module"]

from ...._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
