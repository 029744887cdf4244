"""``ember.distributed.distributed_c10d``: the module PyTorch defines the process-group API in.

Library code reaches ``torch.distributed``'s names through it (``dist.distributed_c10d.GroupMember.WORLD`` as a
default argument, ``distributed_c10d._get_default_group()``), so it is there as an attribute of
``ember.distributed`` as soon as that is imported, as in PyTorch. Its names are the very objects
``ember.distributed`` exports: ``GroupMember.WORLD`` is the default group once ``init_process_group`` has run
(None before), as ``group.WORLD`` is.
"""

from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    monitored_barrier,
    scatter_object_list,
)
from .p2p import irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
    new_subgroups,
    new_subgroups_by_enumeration,
)
from .reduce_op import ReduceOp

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_default_backend_for_device", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "new_subgroups",
    "new_subgroups_by_enumeration", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send",
]


def _get_default_group() -> ProcessGroup:
    """The default (world) group that ``init_process_group`` created; PyTorch's ValueError before it has run."""
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return group.WORLD


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
