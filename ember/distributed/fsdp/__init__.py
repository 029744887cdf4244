"""``ember.distributed.fsdp``: PyTorch's fully sharded data parallelism on ember's MPI process groups.

``FullyShardedDataParallel`` (FSDP1, ``fully_sharded_data_parallel.py``) and ``fully_shard`` (FSDP2,
``_fully_shard.py``) share the shard machinery: ``_layout.py`` (where each parameter lies in a rank's
shard), ``_handle.py`` (gather before use, free, reduce-scatter of gradients), ``_runtime.py`` (the root's
forward and end of backward) and ``_state_dict_utils.py`` (full and local state dicts by FQN).
Policies are in ``wrap.py``, configuration types in ``api.py``. See docs/api.md "FSDP".
"""

from ._fully_shard import FSDPModule, fully_shard, register_fsdp_forward_method
from ._handle import memory as _memory
from .api import (
    BackwardPrefetch,
    CPUOffload,
    CPUOffloadPolicy,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalOptimStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    MixedPrecisionPolicy,
    OffloadPolicy,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictType,
)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = [
    "BackwardPrefetch", "CPUOffload", "CPUOffloadPolicy", "FSDPModule", "FullOptimStateDictConfig",
    "FullStateDictConfig", "FullyShardedDataParallel", "LocalOptimStateDictConfig", "LocalStateDictConfig",
    "MixedPrecision", "MixedPrecisionPolicy", "OffloadPolicy", "OptimStateDictConfig", "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig", "StateDictType", "fully_shard",
    "register_fsdp_forward_method", "reset_peak_unsharded_memory", "unsharded_memory",
]


def unsharded_memory() -> dict:
    """Bytes of gathered (unsharded) parameters alive on this rank now and at most so far (ember extension):
    ``{"unsharded_bytes": ..., "peak_unsharded_bytes": ...}``; ``reset_peak_unsharded_memory()`` restarts the peak."""
    return dict(_memory)


def reset_peak_unsharded_memory() -> None:
    _memory["peak_unsharded_bytes"] = _memory["unsharded_bytes"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
