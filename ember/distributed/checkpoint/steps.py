"""A folder of step directories (``ckpts/step_000012``): find the latest complete one, remove incomplete ones.

These are ember extensions (PyTorch leaves this to the training loop). A step directory is a subdirectory
whose name ends in its step number; it is complete when it holds ``.metadata``.
"""

from __future__ import annotations

import os
import re
import shutil

from .filesystem import METADATA

_STEP = re.compile(r"(\d+)$")


def _step_directories(folder: str | os.PathLike) -> list[tuple[int, str, bool]]:
    """(step, path, complete) for each step directory of ``folder``, by step."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            match = _STEP.search(entry.name)
            if match and entry.is_dir():
                found.append((int(match.group(1)), entry.path, os.path.exists(os.path.join(entry.path, METADATA))))
    return sorted(found)


def latest_checkpoint(folder: str | os.PathLike) -> str | None:
    """The path of the complete checkpoint with the highest step number in ``folder``; None if there is none
    (or ``folder`` does not exist). Incomplete directories (no ``.metadata``) are skipped."""
    if not os.path.isdir(folder):
        return None
    complete = [path for _, path, done in _step_directories(folder) if done]
    return complete[-1] if complete else None


def remove_incomplete_checkpoints(folder: str | os.PathLike) -> list[str]:
    """Delete the incomplete step directories older than the latest complete checkpoint; returns their paths.

    Those can never complete: the run resumed from a later step. A newer incomplete directory is kept (a
    save may be writing it); it is overwritten when the run saves that step again. Call it on one rank.
    """
    if not os.path.isdir(folder):
        return []
    found = _step_directories(folder)
    latest = max((step for step, _, done in found if done), default=None)
    removed = [path for step, path, done in found if not done and latest is not None and step < latest]
    for path in removed:
        shutil.rmtree(path)
    return removed
