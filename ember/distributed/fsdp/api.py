"""FSDP's configuration types (``torch.distributed.fsdp.api``): strategies, precision, state-dict kinds.

Plain values, as PyTorch's: enums and dataclasses that ``FullyShardedDataParallel`` and
``fully_shard`` read. Nothing here communicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto

from ...nn.modules.normalization import _BatchNorm


class ShardingStrategy(Enum):
    """What FSDP shards over the ranks of its group (``torch.distributed.fsdp.ShardingStrategy``).

    - ``FULL_SHARD``: parameters, gradients and optimizer state; parameters are gathered for each
      forward and again for backward, and freed after each.
    - ``SHARD_GRAD_OP``: gradients and optimizer state; the gathered parameters stay from forward
      to the end of backward.
    - ``NO_SHARD``: nothing; gradients are all-reduced (DistributedDataParallel's behaviour).
    - ``HYBRID_SHARD``: ``FULL_SHARD`` within a shard group, replicated (gradients all-reduced) over
      the replicate group; ``_HYBRID_SHARD_ZERO2`` the same with ``SHARD_GRAD_OP``.
    """

    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """When backward gathers the next unit's parameters; accepted, ember gathers when they are needed."""

    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    """The form of ``state_dict()`` under ``FullyShardedDataParallel.state_dict_type``."""

    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class CPUOffload:
    """Keep parameters on the CPU between uses: ember's tensors always live there (accepted, no effect)."""

    offload_params: bool = False


@dataclass
class MixedPrecision:
    """Low-precision compute and communication for ``FullyShardedDataParallel``.

    ``param_dtype``: the dtype parameters are gathered into for forward and backward (the sharded
    copy the optimizer updates keeps its own dtype). ``reduce_dtype``: the dtype gradients are
    reduced in (default: ``param_dtype``). ``buffer_dtype``: buffers are cast to it once, when the
    module is wrapped. ``None`` leaves that part in the parameters' own dtype. Floating-point inputs
    of the root's forward are cast to ``param_dtype`` (``cast_root_forward_inputs``). With an
    ``auto_wrap_policy``, the modules of ``_module_classes_to_ignore`` (BatchNorm) become units of their
    own without mixed precision, as PyTorch's.
    """

    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = (_BatchNorm,)


@dataclass
class MixedPrecisionPolicy:
    """``fully_shard``'s precision policy (``torch.distributed.fsdp.MixedPrecisionPolicy``); see MixedPrecision."""

    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """``fully_shard``'s offload policy: ember's tensors always live on the CPU (accepted, no effect)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """``FULL_STATE_DICT`` options: ``rank0_only=True`` gives the dict on rank 0 and ``{}`` elsewhere;
    ``offload_to_cpu`` is accepted (ember's tensors are on the CPU)."""

    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False
