"""What ``save`` and ``load`` share: resolving the storage, the process group, PyTorch's ``Stateful`` objects."""

from __future__ import annotations

import os
from typing import Any

from ... import _warnings
from .. import process_group
from ..process_group import ProcessGroup
from .stateful import Stateful


def storage(kind: type, what: str, checkpoint_id: str | os.PathLike | None, given: Any):
    """The writer or reader to use: ``given`` (reset to ``checkpoint_id`` if both), else one for ``checkpoint_id``."""
    if given is not None:
        given.reset(checkpoint_id)
        return given
    if checkpoint_id is None:
        raise RuntimeError(f"dcp.{what}: pass checkpoint_id= (the checkpoint's directory) or "
                           f"storage_{'writer' if what == 'save' else 'reader'}=")
    return kind(checkpoint_id)


def group(process_group_arg: ProcessGroup | None, no_dist: bool, what: str) -> ProcessGroup | None:
    """The group that saves or loads together; None for a single process, with PyTorch's warning when the
    process group is not initialized (and ``no_dist`` was not asked for)."""
    if no_dist:
        return None
    if not process_group.is_initialized():
        _warnings.warn(f"ember.distributed is not initialized; assuming the intent is to {what} in a single "
                       "process.", UserWarning)
        return None
    return process_group.resolve(process_group_arg, f"dcp.{what}")


def coordinator_is_rank_0(coordinator_rank: int, what: str) -> None:
    """ember's checkpoints are coordinated by rank 0 (it writes ``.metadata``); PyTorch's deprecated
    ``save_state_dict``/``load_state_dict`` let another rank coordinate."""
    if coordinator_rank != 0:
        raise ValueError(f"dcp.{what}: coordinator_rank={coordinator_rank}: ember's coordinator is rank 0 "
                         "(pass coordinator_rank=0, or use save/load)")


def is_stateful(value: Any) -> bool:
    """PyTorch's ``Stateful`` protocol (``stateful.py``): a module, optimizer or scheduler is saved through its
    ``state_dict()`` and restored through its ``load_state_dict``."""
    return isinstance(value, Stateful)
