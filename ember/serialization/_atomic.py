"""Writing a checkpoint so that the previous one survives any failure.

The bytes go to a temporary file in the destination's directory; only once they
are complete and on disk (flush + fsync) is the temporary renamed over the
destination (an atomic step on POSIX file systems) and the directory fsynced, so
the rename itself survives a power cut. A process killed mid-save therefore
leaves the old file or the new one, never a torn one; an error (a full disk, a
file-size limit) removes the temporary and raises RuntimeError, the old file
untouched.

Only a regular file (or a path that does not exist yet) is replaced that way; a
symlink's target is what gets replaced, the link stays. Anything else that exists
at the path (a character device such as /dev/null, a FIFO, a socket) is written
to in place, as PyTorch does: renaming a file over it would destroy the device
node or the pipe.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from typing import IO

TEMP_SUFFIX = ".tmp"


def _new_file_mode(path: str) -> int:
    """The permissions ``open(path, "wb")`` would give: the existing file's, else 0o666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomically(path: str | os.PathLike, write: Callable[[IO[bytes]], None], what: str) -> None:
    """Call ``write(file)`` on a temporary next to ``path``, then replace ``path`` with it.

    ``what`` names the caller in errors (``"ember.save('ckpt.pt')"``).
    """
    target = os.path.realpath(os.fspath(path))  # a symlink's target is replaced, as open() would write it
    if _is_special(target):
        _write_in_place(target, write, what)
        return
    directory, base = os.path.split(target)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{what}: the directory {directory!r} does not exist")
    # the temporary's name: the destination's, cut to 64 bytes so that with mkstemp's 8 characters it stays within
    # the file system's 255-byte limit, which the destination's own name may reach
    fd, temp = tempfile.mkstemp(prefix=f".{os.fsdecode(os.fsencode(base)[:64])}.", suffix=TEMP_SUFFIX,
                                dir=directory)
    try:
        with _failures_as_errors(what, temp, target):
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(temp, _new_file_mode(target))
            os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _is_special(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, a FIFO, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_in_place(target: str, write: Callable[[IO[bytes]], None], what: str) -> None:
    """Write straight into a device or FIFO (opening a FIFO waits for its reader, as ``open`` does)."""
    with _failures_as_errors(what, None, target):
        with open(target, "wb") as fh:
            write(_Stream(fh))
            fh.flush()  # inside the ``with``: a full device's ENOSPC is raised here, not lost at close


class _Stream:
    """Write-only access to a device or FIFO. Without ``tell``/``seek`` a zip writer streams (data descriptors)
    instead of seeking back: /dev/null reports every position as 0, and a FIFO cannot seek."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.write, self.flush = fh.write, fh.flush


@contextmanager
def _failures_as_errors(what: str, temp: str | None, target: str):
    """An OSError while writing (disk full, file too large, I/O error) becomes a RuntimeError, as in PyTorch,
    saying whether the old file is intact (``temp`` None: written in place, so nothing is kept)."""
    try:
        yield
    except OSError as e:
        if temp is None:
            kept = f"{target!r} is not a regular file and was written in place"
        else:
            kept = f"the previous file {target!r} is unchanged" if os.path.exists(target) else "nothing was written"
        raise RuntimeError(f"{what}: writing the checkpoint failed ({e.strerror or e}); {kept}") from e
