"""``ZeroRedundancyOptimizer``: optimizer state sharded across the ranks of a process group (ZeRO stage 1).

Every parameter has one owner rank. Each rank keeps a local optimizer (``.optim``) over the parameters it owns,
so per-rank optimizer state is about 1/world of the whole. ``step()``: every rank updates its own shard from the
(already all-reduced) gradients, then each owner broadcasts its updated parameters to the others — afterwards
every replica holds the same parameters, exactly as if each had run the unsharded optimizer.

The assignment is PyTorch's greedy one: within each parameter group, parameters sorted by size (largest first)
each go to the rank holding the fewest elements so far.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ..._backend import xp
from ..._creation import from_numpy
from ..._tensor import Tensor
from ...optim.optimizer import Optimizer
from ...utils.hooks import step_on_programs_behalf
from .. import collectives, object_collectives
from ..consistency import named_call
from ..process_group import ProcessGroup, resolve


def _partition(param_groups: list[dict[str, Any]], world: int) -> dict[int, int]:
    """id(parameter) -> owner (rank within the group)."""
    owner: dict[int, int] = {}
    load = [0] * world
    for group in param_groups:
        for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
            rank = min(range(world), key=load.__getitem__)
            owner[id(p)] = rank
            load[rank] += p.numel()
    return owner


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so that each rank keeps the state of its own shard of the parameters only.

    Args:
        params: parameters or parameter groups, as for any optimizer (the same on every rank, in the same order).
        optimizer_class: the optimizer to shard, e.g. ``ember.optim.Adam``.
        process_group: the ranks that share the state (default: the whole job).
        parameters_as_bucket_view: accepted; ember broadcasts each owner's parameters as one flat buffer anyway.
        overlap_with_ddp: not supported (NotImplementedError): it needs DDP communication hooks to run the step.
        **defaults: the wrapped optimizer's options (``lr=...``).

    ``state_dict()`` needs ``consolidate_state_dict(to=rank)`` on every rank first, and is then available on rank
    ``to`` only, in the wrapped optimizer's format over all parameters (so an unsharded optimizer can load it).
    ``load_state_dict`` takes that full format on every rank and keeps each rank's shard.
    """

    def __init__(self, params: Iterable, optimizer_class: type, process_group: ProcessGroup | None = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False, **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by ember; "
                                      "use overlap_with_ddp=False (the step runs after backward)")
        super().__init__(params, defaults)
        self.process_group = resolve(process_group, "ZeroRedundancyOptimizer")
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optimizer_class = optimizer_class
        self._consolidated: dict[str, Any] | None = None
        self._build_local_optimizer()

    # ------------------------------------------------------------------ shards
    @property
    def _world(self) -> int:
        return self.process_group.size()

    @property
    def _rank(self) -> int:
        return self.process_group.rank()

    def _build_local_optimizer(self) -> None:
        self._owner = _partition(self.param_groups, self._world)
        local_groups = [{**self._options(group), "params": self._owned(group, self._rank)}
                        for group in self.param_groups]
        self.optim = self._optimizer_class(local_groups, **self.defaults)
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for key, value in self._options(local).items():  # the wrapped optimizer's defaults, shown here too
                group.setdefault(key, value)

    @staticmethod
    def _options(group: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in group.items() if k not in ("params", "param_names")}

    def _owned(self, group: dict[str, Any], rank: int) -> list[Tensor]:
        return [p for p in group["params"] if self._owner[id(p)] == rank]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        if hasattr(self, "optim"):  # after construction: re-partition, as PyTorch does
            self._build_local_optimizer()

    # ------------------------------------------------------------------ step
    @named_call  # (a rank stuck in its broadcast of the shards is reported as stuck in step)
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update this rank's shard, then broadcast every shard from its owner. Returns the closure's loss."""
        for group, local in zip(self.param_groups, self.optim.param_groups):
            local.update(self._options(group))  # options changed on this wrapper (a scheduler's lr) reach the shard
        loss = self.optim.step(closure)
        self._broadcast_shards()
        return loss

    def _broadcast_shards(self) -> None:
        pg = self.process_group
        for owner in range(self._world):
            by_dtype: dict[Any, list[Tensor]] = defaultdict(list)
            for group in self.param_groups:
                for p in self._owned(group, owner):
                    by_dtype[p._data.dtype].append(p)
            for dtype, params in by_dtype.items():
                if owner == self._rank:
                    flat = xp.concatenate([p._data.reshape(-1) for p in params])
                else:
                    flat = xp.empty(sum(p.numel() for p in params), dtype=dtype)
                collectives.broadcast(from_numpy(flat), group=pg, group_src=owner)
                if owner != self._rank:
                    offset = 0
                    for p in params:
                        n = p.numel()
                        p._data[...] = flat[offset:offset + n].reshape(p._data.shape)
                        p._bump_version()
                        offset += n

    # ------------------------------------------------------------------ uneven inputs
    def join_hook(self, **kwargs) -> _ZeROJoinHook:
        """What this optimizer does under ``Join([model, optimizer])`` on a rank that has run out of data, in each
        round the others still train (PyTorch's ``_ZeROJoinHook``): a ``step()``, so that it takes part in the
        other ranks' broadcasts of the shards. As in PyTorch, that step updates this rank's own shard with the
        gradients it holds (those of its last backward: a joined rank's shadow all-reduces do not write ``.grad``)."""
        return _ZeROJoinHook(self)

    # ------------------------------------------------------------------ checkpoints
    def _global_indices(self) -> dict[int, int]:
        """id(parameter) -> its index in the unsharded optimizer's numbering (group order)."""
        return {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}

    @named_call  # (a rank stuck in its gather_object is reported as stuck in consolidate_state_dict)
    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every shard's state on rank ``to`` (a collective: call it on every rank)."""
        index = self._global_indices()
        local = self.optim.state_dict()
        local_params = [p for g in self.optim.param_groups for p in g["params"]]
        mine = {index[id(local_params[i])]: s for i, s in local["state"].items()}
        pg = self.process_group
        gathered = [None] * self._world if pg.ranks[self._rank] == to else None
        object_collectives.gather_object(mine, gathered, dst=to, group=pg)
        if gathered is None:
            self._consolidated = None
            return
        state = {}
        for shard in gathered:
            state.update(shard)
        groups = []
        for group in self.param_groups:
            groups.append({**self._options(group), "params": [index[id(p)] for p in group["params"]]})
        self._consolidated = {"state": dict(sorted(state.items())), "param_groups": groups}

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer state, on the rank that ``consolidate_state_dict(to=...)`` named."""
        if self._consolidated is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               "`consolidate_state_dict(to=...)` on all ranks beforehand if you meant to save the "
                               "global state.")
        return self._consolidated

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the whole state (as ``state_dict()`` gives it) and keep this rank's shard."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(saved_groups)} parameter groups, the optimizer has "
                             f"{len(self.param_groups)}")
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
        index = self._global_indices()
        local_params = [p for g in self.optim.param_groups for p in g["params"]]
        state = {i: state_dict["state"][index[id(p)]] for i, p in enumerate(local_params)
                 if index[id(p)] in state_dict["state"]}
        offset, local_groups = 0, []
        for group, local in zip(self.param_groups, self.optim.param_groups):
            n = len(local["params"])
            local_groups.append({**self._options(group), "params": list(range(offset, offset + n))})
            offset += n
        self.optim.load_state_dict({"state": state, "param_groups": local_groups})


class _ZeROJoinHook:
    """PyTorch's ``JoinHook`` of a ZeroRedundancyOptimizer: ``main_hook()`` in each round a joined rank shadows."""

    def __init__(self, zero: ZeroRedundancyOptimizer) -> None:
        self.zero = zero

    def main_hook(self) -> None:
        with step_on_programs_behalf():  # (the step reapplies this rank's last gradients, as PyTorch's: by design)
            self.zero.step()
