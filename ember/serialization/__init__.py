"""``ember.save`` / ``ember.load``: checkpoints that cannot run code when loaded (weights_only) and are never torn.

ember never unpickles. ``ember.save`` writes an uncompressed zip of a JSON
manifest and ``.npy`` arrays (``_ember_format``), or PyTorch's own zip format
with ``format="torch"`` (``_torch_format``: read by ``torch.load(...,
weights_only=True)``). ``ember.load`` reads both, and safetensors files; a
PyTorch file is read by an interpreter of its pickle opcodes that only builds
tensors, storages and plain containers.

What can be saved: None, bools, ints, floats, strings, lists, tuples (tuple
subclasses such as namedtuples come back as plain tuples), dicts and
OrderedDicts (other dict subclasses come back as dicts) with keys of those
types, tensors of every ember dtype (0-d, empty, non-contiguous), ``nn.Parameter``,
NumPy arrays, dtypes, devices, objects that pickle keeps as their class and state (an
``argparse.Namespace``, a dataclass; in PyTorch's format too, by reference to their class as
PyTorch's pickle writes them), and (ember's format only) whole ``nn.Module``s, ember's own
objects kept by state (an optimizer) and classes or functions by name. A ``weights_only=True``
load rebuilds an object of a class, or a class or function, only when allowlisted with
``add_safe_globals``. Anything else is a TypeError at save time.

Sharing: the same tensor object saved twice is stored once and loads as one
object, but *different* tensors that share storage (views of each other) are
stored separately and load as independent copies, unlike PyTorch.

Saving to a path writes a temporary file in the same directory and renames it
over the destination once it is on disk: the previous checkpoint survives a
crash or a full disk. A symlink's target is replaced (the link stays); a path
that is not a regular file (/dev/null, a FIFO) is written to in place, as in
PyTorch. Loading accepts only stored (uncompressed) zip members,
checks every declared size against the file before allocating, bounds nesting and
the memory a pickle's objects take (``_pickle_bounds``), and reports any problem as
a RuntimeError naming the file.
"""

from __future__ import annotations

import os
import struct
import warnings
import zipfile
import zlib
from contextlib import contextmanager
from typing import IO, Any

from .._device import check_device
from . import _ember_format, _torch_format, _torch_legacy
from ._archive import Archive
from ._atomic import write_atomically
from ._globals import add_safe_globals, allowed, clear_safe_globals, get_safe_globals, safe_globals
from .safetensors import load_file, save_file

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
           "get_unsafe_globals_in_checkpoint", "save_file", "load_file", "location_tag", "normalize_storage_type"]

FileLike = str | os.PathLike | IO[bytes]
_ZIP_MAGIC = b"PK\x03\x04"
_FORMATS = ("ember", "torch")
# What a corrupt file makes the zip, JSON and .npy parsers raise; each becomes a RuntimeError naming the file.
# (OSError: zipfile seeking before the file's start when a corrupt directory offset points past its end.)
_PARSE_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, TypeError, KeyError, IndexError,
                 RecursionError, OverflowError, struct.error, zlib.error, NotImplementedError, OSError)


@contextmanager
def _opened(f: FileLike, mode: str):
    """A binary file for a path (closed afterwards) or the caller's own file object."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as fh:
            yield fh
    else:
        yield f


def _name(f: FileLike) -> str:
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else repr(getattr(f, "name", f))


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False, *,
         format: str | None = None) -> None:
    """Write ``obj`` (a ``state_dict``, a whole module, ...) to a path or binary file object.

    Args:
        pickle_module, pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record: accepted
            for PyTorch compatibility and ignored (nothing is pickled).
        format: ``"ember"`` (see the module docstring) or ``"torch"``: PyTorch's zip format, which
            ``torch.load(f, weights_only=True)`` reads (tensors, numbers, strings, dtypes, devices and containers;
            an object kept by state, such as an ``argparse.Namespace`` or a dataclass, is pickled by reference to
            its class, and NumPy arrays and scalars as PyTorch's pickle writes them, which ``torch.load`` rebuilds
            with ``weights_only=False`` or once allowlisted).
            None (default): ``"torch"`` when the program imported ``torch`` and got ember (``python -m
            ember.compat``), so an unmodified PyTorch script's checkpoints load in PyTorch; ``"ember"``
            otherwise (a program written for ember, ``import ember as torch``, writes ember's format even when
            the compat runner runs it, as the launcher does where PyTorch is not installed). In a program that
            imported ``torch``, an object PyTorch cannot read back from it (a whole ``nn.Module``, whose classes
            are ember's, not ``torch.nn``'s) is written in ember's format, with a warning saying so. NumPy arrays
            and scalars are written as PyTorch's pickle writes them, which ``torch.load`` reads with
            ``weights_only=False`` or once NumPy's globals are allowlisted, and refuses by default.

    A path is written atomically: a temporary file in the same directory, flushed and fsynced, renamed over
    ``f`` (a symlink's target, the link kept), then the directory fsynced. A failure to write (a full disk) is
    a RuntimeError and leaves the previous file as it was. A device or FIFO is written to in place. A path whose
    directory does not exist is PyTorch's RuntimeError, raised before the object is looked at, as PyTorch's.
    Differences from ``torch.save``: no pickle, tensors sharing storage are stored separately, and an object
    nested more than 200 levels deep (lists, tuples, dicts, modules), which ``load`` would refuse, is a
    ValueError raised before anything is written.
    """
    if isinstance(f, (str, os.PathLike)):
        _refuse_what_pytorch_cannot_open(os.fspath(f))  # first, as PyTorch opens the file before it pickles
    if format is None:
        write = _default_writer(obj, f)
    elif format not in _FORMATS:
        raise ValueError(f"ember.save: format must be one of {_FORMATS}, got {format!r}")
    else:  # TypeError before any I/O
        write = _ember_format.writer(obj) if format == "ember" else _torch_format.writer(obj, _folder_of(f))
    if isinstance(f, (str, os.PathLike)):
        write_atomically(f, write, f"ember.save({_name(f)})")
    else:
        write(f)


def _refuse_what_pytorch_cannot_open(name: str) -> None:
    """``torch.save``'s checks of a path before it writes: a name that is empty or ends in ``/`` is no file
    name, and the text before the last ``/`` (as given, not resolved) must be an existing directory. Both are
    RuntimeErrors in PyTorch, with these words."""
    if not name or name.endswith("/"):
        raise RuntimeError(f"invalid file name: {name}")
    parent = name.rpartition("/")[0]
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")


def _folder_of(f: FileLike) -> str:
    """The folder of a ``torch.save`` file's records: PyTorch names it after the file, "archive" in a file object
    (a name that is only an extension, ``.pt``, is PyTorch's RuntimeError "invalid file name")."""
    return _torch_format.archive_name(os.fsdecode(f)) if isinstance(f, (str, os.PathLike)) else "archive"


def _default_writer(obj: Any, f: FileLike):
    """The writer of ``save``'s default format (see ``save``)."""
    from .. import compat

    if not compat.torch_means_ember():
        return _ember_format.writer(obj)
    name, archive = _name(f), _folder_of(f)
    try:
        return _torch_format.writer(obj, archive)
    except TypeError as refusal:
        try:
            write = _ember_format.writer(obj)
        except TypeError as neither:  # what neither format can hold: ember's format's error, the only one shown
            raise neither from None
        why = str(refusal).removeprefix("ember.save(format='torch') ")
        warnings.warn(f"torch.save({name}) wrote ember's format, which PyTorch cannot read (PyTorch's format, as "
                      f"ember writes it, {why}). "
                      f"torch.load({name}, weights_only=False) reads it back here; save the model's (or "
                      "optimizer's) state_dict() instead to get a file PyTorch loads.", UserWarning, stacklevel=3)
        return write


def _check_map_location(map_location) -> None:
    """Refuse a ``map_location`` that would put a loaded tensor on a device other than the CPU.

    A dict maps the location a storage was saved at to where it goes, so only its "cpu" entry can
    apply: ember loads every storage on the CPU, whatever location a PyTorch file records. Entries
    for other locations, such as the ``{"cuda:0": f"cuda:{rank}"}`` of PyTorch's DDP tutorial, are
    left unused, as PyTorch leaves them for the CPU tensors of a file saved on the CPU.
    """
    if map_location is None or callable(map_location):
        return
    if isinstance(map_location, dict):
        targets = [to for saved_at, to in map_location.items() if str(saved_at) == "cpu"]
    else:
        targets = [map_location]
    for target in targets:
        check_device(target)


def _not_an_archive(head: bytes) -> str:
    """Why a file that is not a zip archive cannot be loaded."""
    if not head:
        return "the file is empty"
    if head[:1] == b"\x80":
        return ("it is a pickle, not a torch.save file: ember.load never unpickles, since unpickling can run "
                "arbitrary code")
    return f"it is not an ember.save, torch.save or safetensors file (it starts with {head[:8]!r})"


def _is_safetensors(head: bytes) -> bool:
    return len(head) >= 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] > 1


def load(f: FileLike, map_location=None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read an object written by ``ember.save`` or ``torch.save`` (its zip format, or the legacy format of PyTorch
    before 1.6 and of ``_use_new_zipfile_serialization=False``), or a safetensors file.

    Args:
        map_location: None, "cpu", an ``ember.device``, or a dict from saved locations to them; any
            other device is an error (ember computes on the CPU). A dict's entries for locations other
            than "cpu" are not used (every storage is loaded on the CPU, as its "cpu" entry says). A
            callable is accepted and not called (every tensor is loaded on the CPU).
        weights_only: True (the default, as in PyTorch 2.6+, unless a ``pickle_module`` is given): a saved
            module, object, class or function is rebuilt only if allowlisted (``add_safe_globals``/
            ``safe_globals``), else a ``pickle.UnpicklingError`` (as PyTorch's, "Weights only load failed ...")
            names it. False (the default when a ``pickle_module`` is given, as PyTorch's): classes and functions
            named in the file are imported (only for files you trust). A PyTorch file is never unpickled either
            way: tensors, storages, plain containers and objects kept by state (an ``argparse.Namespace``, a
            dataclass) are read from it; no function it names is called, and a whole ``torch.nn`` model is
            refused.
        pickle_module, mmap, pickle_load_args: accepted for PyTorch compatibility and ignored (the file is
            read into memory; nothing is unpickled), but for ``pickle_module``'s effect on the default above
            and PyTorch's RuntimeError when it is given with ``weights_only=True``.
    """
    _check_map_location(map_location)
    name = _name(f)
    what = f"ember.load({name})"
    if weights_only is None:  # PyTorch's default: weights only, unless the caller brings its own unpickler
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    weights_only = weights_only is not False

    def fail(why: str):
        raise RuntimeError(f"{what}: {why}")

    with _opened(f, "rb") as fh:
        start = fh.tell()
        head = fh.read(9)
        fh.seek(start)
        try:
            if head[:4] != _ZIP_MAGIC:
                if _is_safetensors(head):
                    fh.seek(0, 2)
                    size = fh.tell() - start
                    fh.seek(start)
                    from .safetensors import _read

                    return _read(fh, size, what)
                if _torch_legacy.is_legacy(head):
                    return _torch_legacy.read(fh.read(), fail, weights_only, what)
                fail(_not_an_archive(head))
            archive = Archive(fh, fail)
            names = archive.names()
            if _ember_format.MANIFEST in names:
                return _ember_format.read(archive, fail, weights_only, what)
            if _torch_format.is_torch_archive(names):
                return _torch_format.read(archive, fail, weights_only, what)
            fail(f"it is a zip archive but neither an ember.save nor a torch.save file (no "
                 f"{_ember_format.MANIFEST} or data.pkl)")
        except _PARSE_ERRORS as e:
            fail(f"the file is truncated, corrupt or holds unsupported data ({type(e).__name__}: {e})")



def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The ``module.name`` of each class or function a checkpoint names that a ``weights_only=True`` load would
    refuse: neither allowed by default nor allowlisted (``add_safe_globals``/``safe_globals``), as PyTorch's.

    Found statically: a PyTorch file's pickle opcodes are read, nothing is built; an ember file's manifest gives the
    globals PyTorch's pickle would name for the same objects. A ValueError, as PyTorch's, for a file that is no
    checkpoint; a RuntimeError naming the file for a corrupt one.
    """
    what = f"get_unsafe_globals_in_checkpoint({_name(f)})"

    def fail(why: str):
        raise RuntimeError(f"{what}: {why}")

    found = None
    with _opened(f, "rb") as fh:
        start = fh.tell()
        is_zip = fh.read(4) == _ZIP_MAGIC
        fh.seek(start)
        try:
            names = (archive := Archive(fh, fail)).names() if is_zip else []
            if _ember_format.MANIFEST in names:
                found = _ember_format.globals_in(archive)  # none is safe by default: each names a class
            elif _torch_format.is_torch_archive(names):
                found = {g for g in _torch_format.globals_in(archive) if not _torch_format.is_safe_by_default(g)}
        except _PARSE_ERRORS as e:
            fail(f"the file is truncated, corrupt or holds unsupported data ({type(e).__name__}: {e})")
    if found is None:
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    return sorted(found - set(allowed()))


def location_tag(storage) -> str:
    """Where a storage's data lives, as PyTorch's checkpoints record it: ``"cpu"`` (or ``"meta"``) for a storage,
    or anything else with a ``device`` (a tensor); PyTorch's errors for what has none."""
    from .. import typename

    device = storage.device  # (AttributeError for an object without one, as PyTorch's taggers)
    if device.type in ("cpu", "meta"):
        return device.type
    if device.index is not None:
        return f"{device.type}:{device.index}"
    raise RuntimeError("don't know how to determine data location of " + typename(storage))


def normalize_storage_type(storage_type: type) -> type:
    """The storage class of ember's namespace of the same name (``FloatStorage`` -> ``ember.FloatStorage``), as
    PyTorch's maps a device's storage class to the CPU one."""
    import ember

    return getattr(ember, storage_type.__name__)


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
