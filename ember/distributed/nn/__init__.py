"""``torch.distributed.nn``: collectives that autograd differentiates (see ``functional``).

    import ember.distributed.nn as dist_nn
    total = dist_nn.all_reduce(x)                  # a new tensor; its gradient is all-reduced back
    every = dist_nn.all_gather(embedding)          # a tuple, one per rank; gradients reduce-scattered (sum)

PyTorch's ``RemoteModule`` (``torch.distributed.nn.api``) is not part of ember.
"""

from .functional import (
    all_gather,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    scatter,
)

__all__ = ["all_gather", "all_reduce", "all_to_all", "all_to_all_single", "broadcast", "gather", "reduce",
           "reduce_scatter", "scatter"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name (RemoteModule) says which torch feature ember lacks
