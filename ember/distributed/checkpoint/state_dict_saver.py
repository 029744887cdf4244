"""``dcp.save``: write, agree, then mark complete.

1. Plan (a collective ``all_gather_object`` of the keys): each top-level key is stored once, by the lowest
   rank holding it. Replicated entries (the DDP model, the optimizer) are the same on every rank, as in
   PyTorch's deduplication; an entry only one rank holds (its RNG states under a key naming the rank) is
   stored from that rank. Before this collective the coordinator withdraws an old ``.metadata`` at the same
   path, so no rank changes a part of a checkpoint that still counts.
2. Every rank writes its part atomically (fsynced).
3. Agreement (``all_gather_object`` of each rank's outcome): if any rank failed (a full disk), every rank
   raises the same RuntimeError and no ``.metadata`` is written.
4. The coordinator (rank 0) writes ``.metadata``; its outcome is broadcast, so ``save`` returns on every
   rank only once the checkpoint is complete, and raises on every rank if it is not.

A rank that dies during the save leaves the others in a collective; the launcher stops them (and restarts
every rank under ``--max-restarts``): the directory has no ``.metadata`` and is ignored.
"""

from __future__ import annotations

import os
from typing import Any

from ... import _warnings
from .. import object_collectives
from ..consistency import named_call
from ..process_group import ProcessGroup
from ._common import coordinator_is_rank_0, group, is_stateful, storage
from .filesystem import FileSystemWriter, Metadata, part_name


@named_call(name="checkpoint.save")  # a rank stuck in its all_gather_object is reported as stuck in save
def save(state_dict: dict[str, Any], *, checkpoint_id: str | os.PathLike | None = None,
         storage_writer: FileSystemWriter | None = None, planner: None = None,
         process_group: ProcessGroup | None = None, no_dist: bool = False) -> Metadata:
    """Save ``state_dict`` as one checkpoint of every rank of ``process_group`` (default: the world); collective.

    Values may be tensors, containers, anything ``ember.save`` stores, or objects with ``state_dict()`` and
    ``load_state_dict()`` (modules, optimizers, schedulers: PyTorch's ``Stateful``), saved as their
    ``state_dict()``. A key held by several ranks is stored once (rank order decides which copy: they are
    meant to be identical); per-rank state goes under a key naming the rank (``f"rng.rank{rank}"``).
    Returns the ``Metadata`` written. Raises RuntimeError on every rank if any rank's write failed; the
    directory is then incomplete (no ``.metadata``) and ``load`` refuses it.

    ``planner`` is accepted for PyTorch compatibility and must be None. Without an initialized process group
    (or with ``no_dist=True``) the process saves alone, as in PyTorch.
    """
    if planner is not None:
        raise ValueError("dcp.save: custom planners are not supported (planner must be None)")
    writer = storage(FileSystemWriter, "save", checkpoint_id, storage_writer)
    pg = group(process_group, no_dist, "save")
    rank, world = (pg.rank(), pg.size()) if pg is not None else (0, 1)
    where = f"dcp.save({writer.checkpoint_id!r})"
    _agree(pg, _attempt(writer.prepare, rank == 0), f"{where}: preparing the directory")
    keys = _gather(pg, list(state_dict))
    owner: dict[str, int] = {}
    for r, held in enumerate(keys):
        for key in held:
            owner.setdefault(key, r)
    mine = {k: (v.state_dict() if is_stateful(v) else v) for k, v in state_dict.items() if owner[k] == rank}
    _agree(pg, _attempt(writer.write_part, rank, mine), f"{where}: writing the parts")
    metadata = Metadata(storage_data={k: part_name(r) for k, r in owner.items()}, world_size=world)
    finished = _attempt(writer.finish, metadata) if rank == 0 else None
    if pg is not None:
        outcome = [finished]
        object_collectives.broadcast_object_list(outcome, src=pg.ranks[0], group=pg)
        finished = outcome[0]
    if finished is not None:
        raise RuntimeError(f"{where}: writing .metadata failed on rank 0 ({finished}); the checkpoint is "
                           "incomplete and will not be loaded")
    return metadata


@named_call(name="checkpoint.save_state_dict")
def save_state_dict(state_dict: dict[str, Any], storage_writer: FileSystemWriter,
                    process_group: ProcessGroup | None = None, coordinator_rank: int = 0, no_dist: bool = False,
                    planner: None = None) -> Metadata:
    """PyTorch's deprecated name of ``save`` (a FutureWarning, as PyTorch's): ``save`` to ``storage_writer``.
    ``coordinator_rank`` must be 0, ember's coordinator."""
    _warnings.warn("`save_state_dict` is deprecated and will be removed in future versions.Please use `save` "
                   "instead.", FutureWarning)  # (sic: PyTorch's text has no space after the period)
    coordinator_is_rank_0(coordinator_rank, "save_state_dict")
    return save(state_dict, storage_writer=storage_writer, planner=planner, process_group=process_group,
                no_dist=no_dist)


def _attempt(fn, *args) -> str | None:
    """None if ``fn(*args)`` succeeded, else what went wrong (an OSError or RuntimeError: a full disk)."""
    try:
        fn(*args)
    except (OSError, RuntimeError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def _gather(pg: ProcessGroup | None, obj: Any) -> list:
    if pg is None:
        return [obj]
    out = [None] * pg.size()
    object_collectives.all_gather_object(out, obj, group=pg)
    return out


def _agree(pg: ProcessGroup | None, failure: str | None, what: str) -> None:
    """Every rank learns every rank's outcome; if one failed, all raise the same RuntimeError."""
    failed = [(r, why) for r, why in enumerate(_gather(pg, failure)) if why is not None]
    if failed:
        detail = "; ".join(f"rank {r}: {why}" for r, why in failed)
        raise RuntimeError(f"{what} failed ({detail}); the checkpoint is incomplete (no .metadata) and will not "
                           "be loaded")
