"""``ember.distributed.checkpoint``: PyTorch's distributed checkpoint ("dcp") API, consistent across ranks.

    import ember.distributed.checkpoint as dcp
    dcp.save({"model": model, "optimizer": optimizer, f"rng.rank{rank}": rng}, checkpoint_id="ckpts/step_000012")
    dcp.load(state_dict, checkpoint_id=dcp.latest_checkpoint("ckpts"))

A checkpoint is a directory: one part per rank, written atomically, then a ``.metadata`` file that the
coordinator (rank 0) writes only after every rank has reported its part on disk. A directory without
``.metadata`` is incomplete and is never loaded, so a run restarted after any failure resumes every rank
from the same step. ``filesystem.py`` holds the storage (parts, metadata), ``state_dict_saver.py`` and
``state_dict_loader.py`` the collective save and the in-place load, ``steps.py`` the helpers that find the
latest complete checkpoint in a folder of step directories and remove the incomplete ones.
"""

from .filesystem import FileSystemReader, FileSystemWriter, Metadata
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import save, save_state_dict
from .steps import latest_checkpoint, remove_incomplete_checkpoints

__all__ = ["FileSystemReader", "FileSystemWriter", "Metadata", "latest_checkpoint", "load", "load_state_dict",
           "remove_incomplete_checkpoints", "save", "save_state_dict"]

from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
