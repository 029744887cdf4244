"""``ember.distributed``: PyTorch's ``torch.distributed`` API on MPI (mpi4py).

    import ember.distributed as dist
    dist.init_process_group("gloo")          # "gloo" and "mpi" are the same CPU engine
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Start the ranks with ``python -m ember.distributed.run --nproc-per-node N script.py``
(torchrun's shape) or with ``mpiexec -n N python script.py``; see ``docs/distributed.md``.
Layers: ``comm.py`` (the only mpi4py import; array operations with timeouts, used by
the DDP reducer too), ``process_group.py`` (init, groups, ranks), ``consistency.py``
(cross-rank argument check), ``collectives.py`` and ``p2p.py`` (the tensor API).
Importing this package never needs mpi4py; using it without mpi4py raises a
RuntimeError saying ``pip install mpi4py mpich``.
"""

from . import distributed_c10d  # noqa: F401  (an attribute of the package on import, as in PyTorch)
from .collectives import (
    _all_gather_base as _all_gather_base,  # (PyTorch's deprecated private name)
)
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_single,
    all_reduce,
    all_reduce_coalesced,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_single,
    reduce_scatter_tensor,
    scatter,
)
from .comm import Work
from .consistency import collective_checks_enabled, set_collective_checks
from .debug_level import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from .device_mesh import DeviceMesh, init_device_mesh
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    monitored_barrier,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_group,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
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
from .reduce_op import reduce_op as reduce_op  # (PyTorch's deprecated spelling)
from .store import DistError, DistStoreError, HashStore, PrefixStore

__all__ = [
    "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object",
    "all_reduce", "broadcast_object_list", "gather_object", "monitored_barrier", "scatter_object_list",
    "all_to_all", "barrier", "broadcast", "collective_checks_enabled", "default_group", "destroy_process_group",
    "gather", "get_backend", "get_global_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group",
    "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend",
    "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "send",
    "set_collective_checks",
    "Backend", "get_default_backend_for_device", "new_subgroups", "new_subgroups_by_enumeration", "DeviceMesh",
    "init_device_mesh", "all_to_all_single", "DistError", "DistStoreError", "HashStore", "all_gather_single",
    "reduce_scatter_single", "get_node_local_rank", "P2POp", "batch_isend_irecv", "get_group_rank",
    "send_object_list", "recv_object_list", "all_reduce_coalesced", "DebugLevel", "get_debug_level",
    "set_debug_level", "set_debug_level_from_env", "PrefixStore",
]


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
