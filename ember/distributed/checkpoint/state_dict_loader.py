"""``dcp.load``: fill a state_dict in place from a complete checkpoint."""

from __future__ import annotations

import os
from typing import Any

from ... import _tensor, _warnings, autograd
from ..process_group import ProcessGroup
from ._common import coordinator_is_rank_0, group, is_stateful, storage
from .filesystem import FileSystemReader


def load(state_dict: dict[str, Any], *, checkpoint_id: str | os.PathLike | None = None,
         storage_reader: FileSystemReader | None = None, planner: None = None,
         process_group: ProcessGroup | None = None, no_dist: bool = False) -> None:
    """Load the checkpoint into ``state_dict``, in place, as ``torch.distributed.checkpoint.load`` does.

    Only the top-level keys of ``state_dict`` are read (each rank asks for its own per-rank key); a key the
    checkpoint lacks is a RuntimeError. A tensor in ``state_dict`` receives the stored values in place
    (``copy_``: same shape required, the tensor's dtype kept); an object with ``load_state_dict`` (a module,
    an optimizer) is filled through its ``state_dict()`` and then given it back; any other value is
    replaced. A directory without ``.metadata`` (a save that did not finish on every rank) is a RuntimeError.

    Difference from PyTorch: inside a nested dict, entries the checkpoint has and ``state_dict`` lacks are
    added (a fresh optimizer's empty ``state`` receives the saved one, which in PyTorch needs
    ``get_state_dict``'s options). Loading needs no collective; ``process_group`` and ``no_dist`` are
    accepted for PyTorch compatibility. ``planner`` must be None.
    """
    if planner is not None:
        raise ValueError("dcp.load: custom planners are not supported (planner must be None)")
    reader = storage(FileSystemReader, "load", checkpoint_id, storage_reader)
    group(process_group, no_dist, "load")
    metadata = reader.read_metadata()
    missing = [k for k in state_dict if k not in metadata.storage_data]
    if missing:
        raise RuntimeError(f"dcp.load({reader.checkpoint_id!r}): Missing key in checkpoint state_dict: "
                           f"{', '.join(map(repr, missing))}")
    parts: dict[str, dict[str, Any]] = {}
    for key, value in state_dict.items():
        name = metadata.storage_data[key]
        if name not in parts:
            parts[name] = reader.read_part(name)
        stored = parts[name][key]
        if is_stateful(value):
            value.load_state_dict(_fill(value.state_dict(), stored, key))
        else:
            state_dict[key] = _fill(value, stored, key)


def load_state_dict(state_dict: dict[str, Any], storage_reader: FileSystemReader,
                    process_group: ProcessGroup | None = None, coordinator_rank: int = 0, no_dist: bool = False,
                    planner: None = None) -> None:
    """PyTorch's deprecated name of ``load`` (a FutureWarning, as PyTorch's): ``load`` from ``storage_reader``.
    ``coordinator_rank`` must be 0, ember's coordinator."""
    _warnings.warn("`load_state_dict` is deprecated and will be removed in future versions. Please use `load` "
                   "instead.", FutureWarning)
    coordinator_is_rank_0(coordinator_rank, "load_state_dict")
    load(state_dict, storage_reader=storage_reader, planner=planner, process_group=process_group, no_dist=no_dist)


def _fill(target: Any, stored: Any, path: str) -> Any:
    """``stored`` put into ``target``: tensors copied in place, dicts and lists entry by entry."""
    if isinstance(target, _tensor.Tensor) and isinstance(stored, _tensor.Tensor):
        if tuple(target.shape) != tuple(stored.shape):
            raise RuntimeError(f"dcp.load: size mismatch for {path!r}: the checkpoint has shape "
                               f"{tuple(stored.shape)}, the state_dict {tuple(target.shape)}")
        with autograd.no_grad():
            target.copy_(stored)
        return target
    if isinstance(target, dict) and isinstance(stored, dict):
        for k, v in stored.items():
            target[k] = _fill(target[k], v, f"{path}.{k}") if k in target else v
        return target
    if isinstance(target, list) and isinstance(stored, list) and len(target) == len(stored):
        target[:] = [_fill(t, s, f"{path}.{i}") for i, (t, s) in enumerate(zip(target, stored))]
        return target
    return stored
