"""A distributed checkpoint on a file system: one part per rank, and ``.metadata``, written last.

Layout of a checkpoint directory (PyTorch's file names):

    __0_0.distcp  __1_0.distcp  ...   each rank's part: ``ember.save`` of the entries that rank stores
    .metadata                         ``ember.save`` of {"version", "world_size", "storage_data"}

``storage_data`` maps every top-level key of the saved state_dict to the part holding it. Every file is
written by ember's atomic writer (a temporary in the same directory, fsynced, renamed, the directory
fsynced), so a part is either absent or complete, and ``.metadata`` exists only once every part did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ... import serialization
from ...serialization._atomic import _fsync_directory

METADATA = ".metadata"
VERSION = 1


@dataclass
class Metadata:
    """What ``.metadata`` records: ``storage_data`` maps each saved top-level key to the part file holding it;
    ``world_size`` is the number of ranks that saved. (PyTorch's ``Metadata`` also describes tensor shards;
    ember's parts hold whole entries.)"""

    storage_data: dict[str, str] = field(default_factory=dict)
    world_size: int = 1


def part_name(rank: int) -> str:
    return f"__{rank}_0.distcp"


class _Directory:
    """A checkpoint's directory, which ``save``/``load`` may repoint with ``checkpoint_id``."""

    path: str

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        """Point at another directory (``save``/``load`` with both a storage and ``checkpoint_id`` do this)."""
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @property
    def checkpoint_id(self) -> str:
        return self.path


class FileSystemWriter(_Directory):
    """Writes a checkpoint into the directory ``path`` (created if needed), as ``torch.distributed.checkpoint``'s.

    Args:
        path: the checkpoint's directory.
        single_file_per_rank: must be True (default): each rank writes one part.
        sync_files: must be True (default): every file is fsynced before it counts.
        overwrite: True (default) replaces a checkpoint already at ``path``; False makes that a RuntimeError.

    PyTorch's thread and caching options are not accepted: ember writes each part from the calling thread.
    """

    def __init__(self, path: str | os.PathLike, single_file_per_rank: bool = True, sync_files: bool = True,
                 overwrite: bool = True) -> None:
        if not single_file_per_rank or not sync_files:
            raise ValueError("FileSystemWriter: ember writes one fsynced file per rank "
                             "(single_file_per_rank=True, sync_files=True)")
        self.path = os.fspath(path)
        self.overwrite = overwrite

    def prepare(self, coordinator: bool) -> None:
        """Before any part is written: make the directory and, on the coordinator, withdraw an old ``.metadata``
        (a checkpoint being overwritten stops counting before its first part changes)."""
        os.makedirs(self.path, exist_ok=True)
        if not coordinator:
            return
        metadata = os.path.join(self.path, METADATA)
        if os.path.exists(metadata):
            if not self.overwrite:
                raise RuntimeError(f"dcp.save: {self.path!r} already holds a checkpoint and overwrite=False")
            os.unlink(metadata)
            _fsync_directory(self.path)

    def write_part(self, rank: int, entries: dict[str, Any]) -> str:
        """Write this rank's entries atomically; returns the part's file name."""
        name = part_name(rank)
        # ember's format always: only this reader reads the parts (PyTorch's dcp has its own), and they may hold
        # what PyTorch's zip format cannot (NumPy's RNG state), which under the compat runner would warn.
        serialization.save(entries, os.path.join(self.path, name), format="ember")
        return name

    def finish(self, metadata: Metadata) -> None:
        """Mark the checkpoint complete (the coordinator, once every rank's part is on disk)."""
        serialization.save({"version": VERSION, "world_size": metadata.world_size,
                            "storage_data": dict(metadata.storage_data)}, os.path.join(self.path, METADATA),
                           format="ember")


class FileSystemReader(_Directory):
    """Reads a checkpoint written by ``FileSystemWriter`` from the directory ``path``."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)

    def read_metadata(self) -> Metadata:
        """The checkpoint's metadata; a RuntimeError if the directory holds no complete checkpoint."""
        file = os.path.join(self.path, METADATA)
        if not os.path.exists(file):
            raise RuntimeError(f"dcp.load: {self.path!r} has no {METADATA}: it is not a complete checkpoint (its "
                               "save did not finish on every rank), and is never loaded")
        raw = _load(file)
        if not isinstance(raw, dict) or raw.get("version") != VERSION:
            raise RuntimeError(f"dcp.load: {file!r} is not a checkpoint metadata file of version {VERSION}")
        return Metadata(storage_data=dict(raw["storage_data"]), world_size=int(raw["world_size"]))

    def read_part(self, name: str) -> dict[str, Any]:
        return _load(os.path.join(self.path, name))


def _load(file: str) -> Any:
    """A part or the metadata, written by ``FileSystemWriter`` in ember's format, whose NumPy arrays (a state's NumPy
    RNG state) are data files, not pickles: allowed, where a ``weights_only`` load of a user's file refuses them until
    allowlisted, as PyTorch's ``torch.load``; every other class still refused."""
    import numpy as np

    numpy_globals = [np._core.multiarray._reconstruct, np._core.multiarray.scalar, np.ndarray, np.dtype,
                     *(c for c in vars(np.dtypes).values() if isinstance(c, type) and issubclass(c, np.dtype))]
    with serialization.safe_globals(numpy_globals):
        return serialization.load(file)

