"""``FullyShardedDataParallel`` (FSDP1): each rank keeps 1/world of every unit's parameters, gradients and
optimizer state.

    model = FSDP(model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy,
                                                           transformer_layer_cls={Block}))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)     # steps this rank's shards only
    loss = model(x).loss; loss.backward(); opt.step()

The wrapped tree holds units: the root and every submodule the policy wrapped (an FSDP instance
each). A unit's parameters — those of its module not in a nested unit — are one ``FlatParamHandle``
(``_handle.py``): flattened, padded and cut into one shard per rank. Forward gathers a unit's
parameters just before its module runs; ``FULL_SHARD`` frees them right after (except the root's) and
backward gathers them again where it needs them; the gradient is reduce-scattered (averaged), so each
rank's ``.grad`` is its shard of the global gradient and the optimizer updates that shard only.

Differences from PyTorch: see docs/api.md "FSDP" (parameters are never moved to a device; without a
device mesh ``HYBRID_SHARD`` treats all ranks as one node; ``SHARDED_STATE_DICT`` is not available).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..._dtype import to_np
from ..._tensor import Tensor
from ...nn.modules.module import Module
from .. import process_group as _pg
from . import _state_dict_utils as sdu
from ._handle import FlatParamHandle
from ._layout import FlatLayout
from ._runtime import BackwardEnd, cast_inputs, clip_grad_norm, run_unit
from .api import (
    BackwardPrefetch,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
)
from .wrap import recursive_wrap

_RESHARD = (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD)
_HYBRID = (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)


def _groups(strategy: ShardingStrategy, process_group, device_mesh) -> tuple:
    """(shard group, replicate group) for ``strategy``; None where there is none."""
    if device_mesh is not None:
        if strategy in _HYBRID:
            return device_mesh.get_group(1), device_mesh.get_group(0)
        process_group = device_mesh.get_group(0)
    if strategy in _HYBRID:
        if isinstance(process_group, tuple):
            return process_group
        return _pg.resolve(process_group, "FullyShardedDataParallel"), None  # one node: shard over all ranks
    group = _pg.resolve(process_group, "FullyShardedDataParallel")
    return (None, group) if strategy is ShardingStrategy.NO_SHARD else (group, None)


class FullyShardedDataParallel(Module):
    """Shard ``module``'s parameters over the ranks (PyTorch's ``torch.distributed.fsdp.FullyShardedDataParallel``).

    Args:
        module: the model, identical on every rank (same parameters unless ``sync_module_states``).
        process_group: the group to shard over (default: the world); for HYBRID_SHARD a
            ``(shard group, replicate group)`` pair.
        sharding_strategy: ``ShardingStrategy`` (default ``FULL_SHARD``).
        auto_wrap_policy: makes units of submodules (``wrap.transformer_auto_wrap_policy`` via
            ``functools.partial``, ``size_based_auto_wrap_policy``, ``ModuleWrapPolicy``, a set of classes).
        mixed_precision: ``MixedPrecision`` (compute in ``param_dtype``, reduce in ``reduce_dtype``).
        ignored_modules: modules whose parameters are not sharded (each rank keeps its own).
        sync_module_states: copy rank 0's parameters and buffers to every rank first (default False).
        use_orig_params: ``parameters()`` yields the original Parameters, each a 1-D view of this rank's
            part of it (possibly empty), as PyTorch's; default False: one flat Parameter per unit.
        device_mesh: a mesh (anything with ``get_group(dim)``): 1-D to shard over, 2-D (replicate, shard)
            for HYBRID_SHARD.
        cpu_offload, backward_prefetch, forward_prefetch, limit_all_gathers, device_id, param_init_fn:
            accepted; ember's tensors are on the CPU and gathers happen when a unit runs.
    """

    def __init__(self, module: Module, process_group=None, sharding_strategy: ShardingStrategy | None = None,
                 cpu_offload=None, auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision: MixedPrecision | None = None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states: bool = False, forward_prefetch: bool = False,
                 limit_all_gathers: bool = True, use_orig_params: bool = False, ignored_states=None,
                 device_mesh=None) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"FullyShardedDataParallel expects an ember.nn.Module, got {type(module).__name__}")
        if device_id is not None and "cuda" in str(device_id):
            raise RuntimeError("FullyShardedDataParallel: ember runs on the CPU; pass device_id=None or 'cpu'")
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None else sharding_strategy
        if not isinstance(strategy, ShardingStrategy):
            raise TypeError(f"sharding_strategy must be a ShardingStrategy, got {strategy!r}")
        shard_group, replicate_group = _groups(strategy, process_group, device_mesh)
        ignored = {id(m) for root in (ignored_modules or ()) for m in root.modules()}
        if auto_wrap_policy is not None:
            policy = auto_wrap_policy
            if isinstance(policy, (set, frozenset, list, tuple)):
                from .wrap import ModuleWrapPolicy

                policy = ModuleWrapPolicy(policy)

            full_precision = tuple(mixed_precision._module_classes_to_ignore) if mixed_precision else ()
            if full_precision:  # BatchNorm: a unit of its own, in the parameters' dtype (PyTorch's rule)
                policy = _or_classes(policy, full_precision)

            def wrap(m: Module) -> Module:
                return FullyShardedDataParallel(
                    m, (shard_group, replicate_group) if strategy in _HYBRID else process_group, strategy,
                    mixed_precision=None if isinstance(m, full_precision) else mixed_precision,
                    ignored_modules=ignored_modules, use_orig_params=use_orig_params,
                    sync_module_states=sync_module_states, device_mesh=device_mesh)

            recursive_wrap(module, policy, wrap, lambda m: isinstance(m, FullyShardedDataParallel), ignored,
                           only_children=True)
        self._fsdp_wrapped_module = module
        d = self.__dict__
        d["sharding_strategy"] = strategy
        d["mixed_precision"] = mixed_precision
        d["_use_orig_params"] = use_orig_params
        d["_is_root"] = True
        d["_state_dict_type"] = StateDictType.FULL_STATE_DICT
        d["_state_dict_config"] = FullStateDictConfig()
        d["_optim_state_dict_config"] = FullOptimStateDictConfig()
        d["_backward_end"] = BackwardEnd(self._finish_backward)
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m.__dict__["_is_root"] = False
        entries = self._owned_entries(module, ignored)
        if sync_module_states:
            _sync_from_rank0([p for _, _, p in entries] + self._own_buffers(module), shard_group, replicate_group)
        if mixed_precision is not None and mixed_precision.buffer_dtype is not None:
            for b in self._own_buffers(module):
                b._data = b._data.astype(to_np(mixed_precision.buffer_dtype))
        handle = None
        if entries:
            mp = mixed_precision or MixedPrecision()
            handle = FlatParamHandle(entries, shard_group, replicate_group, FlatLayout, orig_params=use_orig_params,
                                     reshard_after_forward=strategy in _RESHARD, param_dtype=mp.param_dtype,
                                     reduce_dtype=mp.reduce_dtype)
            if not use_orig_params:
                module._parameters["_flat_param"] = handle.flat_param
                handle.flat_holder = module
        d["_fsdp_handle"] = handle
        d["_shard_group"], d["_replicate_group"] = shard_group, replicate_group

    @staticmethod
    def _owned_entries(module: Module, ignored: set) -> list:
        """(module, name, Parameter) of the parameters not in a nested unit or an ignored module (a shared one
        at each of its modules)."""
        entries, stack = [], [module]
        while stack:
            m = stack.pop(0)
            entries += [(m, name, p) for name, p in m._parameters.items() if p is not None]
            stack[:0] = [c for c in m._modules.values()
                         if c is not None and not isinstance(c, FullyShardedDataParallel) and id(c) not in ignored]
        return entries

    @staticmethod
    def _own_buffers(module: Module) -> list:
        out, stack = [], [module]
        while stack:
            m = stack.pop()
            out += [b for b in m._buffers.values() if b is not None]
            stack += [c for c in m._modules.values() if c is not None and not isinstance(c, FullyShardedDataParallel)]
        return out

    # ------------------------------------------------------------------ access to the wrapped module
    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            inner = self.__dict__.get("_modules", {}).get("_fsdp_wrapped_module")
            if inner is None:
                raise
            return getattr(inner, name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module.__getitem__(key)

    def _units(self) -> list:
        return [m for m in self.modules() if isinstance(m, FullyShardedDataParallel)]

    @staticmethod
    def fsdp_modules(module: Module, root_only: bool = False) -> list:
        """The FSDP units in ``module`` (only the roots with ``root_only``)."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return [m for m in units if m._is_root] if root_only else units

    # ------------------------------------------------------------------ training
    def forward(self, *args, **kwargs):
        root, handle = self._is_root, self._fsdp_handle
        if root and self.mixed_precision is not None and self.mixed_precision.cast_root_forward_inputs:
            args, kwargs = cast_inputs(self.mixed_precision.param_dtype, args, kwargs)
        reshard = handle is not None and handle.reshard_after_forward and not root
        output = run_unit(handle, lambda: self._fsdp_wrapped_module(*args, **kwargs), reshard)
        if root:
            self._backward_end.arm(output)
        return output

    def _finish_backward(self) -> None:
        for unit in self._units():
            if unit._fsdp_handle is not None:
                unit._fsdp_handle.finish_backward()

    @contextmanager
    def no_sync(self):
        """Backward inside the block keeps each unit's full gradient (added up) instead of reducing it; the
        first synchronised backward after it reduces the sum. Costs unsharded gradient memory, as PyTorch."""
        handles = [u._fsdp_handle for u in self._units() if u._fsdp_handle is not None]
        for h in handles:
            h.require_sync = False
        try:
            yield
        finally:
            for h in handles:
                h.require_sync = True

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the gradients of all shards by their global norm (a collective); returns the total norm."""
        handles = [u._fsdp_handle for u in self._units() if u._fsdp_handle is not None]
        return clip_grad_norm(handles, list(self.parameters()), max_norm, norm_type)

    # ------------------------------------------------------------------ state dicts
    @staticmethod
    @contextmanager
    def state_dict_type(module: Module, state_dict_type: StateDictType, state_dict_config=None,
                        optim_state_dict_config=None) -> Iterator[None]:
        """Within the block, ``state_dict()``/``load_state_dict()`` of every unit of ``module`` use
        ``state_dict_type`` (ember: ``FULL_STATE_DICT`` or ``LOCAL_STATE_DICT``)."""
        previous = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config,
                                                                optim_state_dict_config)
        try:
            yield
        finally:
            FullyShardedDataParallel.set_state_dict_type(module, previous[0], previous[1], previous[2])

    @staticmethod
    def set_state_dict_type(module: Module, state_dict_type: StateDictType, state_dict_config=None,
                            optim_state_dict_config=None) -> tuple:
        """Set the state-dict type of every unit of ``module``; returns the previous (type, config, optim config)."""
        if state_dict_type is StateDictType.SHARDED_STATE_DICT:
            raise NotImplementedError("FSDP: SHARDED_STATE_DICT is not supported by ember; use "
                                      "FULL_STATE_DICT, or LOCAL_STATE_DICT for this rank's shards")
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("set_state_dict_type: the module contains no FullyShardedDataParallel unit")
        first = units[0]
        previous = (first._state_dict_type, first._state_dict_config, first._optim_state_dict_config)
        for u in units:
            u.__dict__["_state_dict_type"] = state_dict_type
            u.__dict__["_state_dict_config"] = state_dict_config or FullStateDictConfig()
            u.__dict__["_optim_state_dict_config"] = optim_state_dict_config or FullOptimStateDictConfig()
        return previous

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """FULL_STATE_DICT (default): the unsharded model's keys and full tensors (gathered: a collective);
        with ``rank0_only`` an empty dict on other ranks. LOCAL_STATE_DICT: this rank's shards by FQN."""
        if sdu.summoning[0] or not self._is_root:
            return super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)
        if self._state_dict_type is StateDictType.LOCAL_STATE_DICT:
            return sdu.local_state_dict(self)
        full = sdu.full_state_dict(self)
        if getattr(self._state_dict_config, "rank0_only", False) and _pg.get_rank() != 0:
            return {}
        return full

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Load a FULL_STATE_DICT (every rank takes its shards from it) or this rank's LOCAL_STATE_DICT."""
        if self._state_dict_type is StateDictType.LOCAL_STATE_DICT:
            return sdu.load_local_state_dict(self, state_dict, strict)
        return sdu.load_full_state_dict(self, state_dict, strict)

    @contextmanager
    def summon_full_params(module: Module, recurse: bool = True, writeback: bool = True, rank0_only: bool = False,
                           offload_to_cpu: bool = False, with_grads: bool = False):
        """Within the block the modules hold their full parameters (gathered); with ``writeback`` changes to
        them go back into the shards at the end. Call it on every rank (it gathers)."""
        with sdu.summoned(module, writeback):
            yield

    summon_full_params = staticmethod(summon_full_params)

    @staticmethod
    def optim_state_dict(model: Module, optim, optim_state_dict: dict | None = None, group=None) -> dict:
        """The optimizer's state keyed by parameter FQN, every tensor gathered to its parameter's shape
        (a collective); load it back with ``optim_state_dict_to_load``."""
        return sdu.full_optim_state_dict(model, optim)

    @staticmethod
    def optim_state_dict_to_load(model: Module, optim, optim_state_dict: dict, is_named_optimizer: bool = False,
                                 load_directly: bool = False, group=None) -> dict:
        """``optim_state_dict``'s result turned into this rank's ``optim.load_state_dict`` argument."""
        local = sdu.optim_state_dict_to_load(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(local)
        return local


def _or_classes(policy, classes: tuple):
    def either(module: Module, recurse: bool, nonwrapped_numel: int) -> bool:
        return policy(module=module, recurse=recurse, nonwrapped_numel=nonwrapped_numel) or (
            not recurse and isinstance(module, classes))

    return either


def _sync_from_rank0(tensors: list, shard_group, replicate_group) -> None:
    """Copy rank 0's values of ``tensors`` to every rank (over the shard group, then the replicate group)."""
    from ...nn.parallel.distributed import broadcast_from_rank0

    for group in (shard_group, replicate_group):
        if group is not None and group.comm is not None:
            broadcast_from_rank0(group.comm, tensors)
