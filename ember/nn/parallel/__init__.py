"""ember.nn.parallel: DataParallel (the module as PyTorch runs it without a GPU), DistributedDataParallel, and
the multi-GPU helpers that code imports (``replicate``, ``scatter``, ``gather``, ``parallel_apply``), which stop on
CPU tensors as PyTorch's do."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
