"""``ember.save`` / ``ember.load``: checkpoints in a format that cannot run code when loaded.

PyTorch's ``torch.save`` writes a pickle, and unpickling can execute arbitrary
code. ember never pickles or unpickles. A file is an uncompressed zip archive:

``ember.json``
    ``{"format": "ember.save", "version": 1, "root": NODE, "arrays": [ENTRY, ...]}``.
    A NODE is a JSON ``null``/bool/int/float/string for the same Python value, or
    a one-key object: ``{"list": [NODE...]}``, ``{"tuple": [NODE...]}``,
    ``{"dict": [[KEY_NODE, NODE]...]}``, ``{"odict": [[KEY_NODE, NODE]...]}``
    (an ``OrderedDict``) or ``{"array": i}`` (payload i). Dict keys are nodes too,
    so the integer keys of an optimizer's state_dict survive. ENTRY i is
    ``{"kind": "tensor" | "parameter" | "ndarray", "requires_grad": bool}``.
``arrays/<i>.npy``
    payload i in NumPy's ``.npy`` format (dtype, shape, order, raw bytes), read
    back with ``allow_pickle=False``.

What can be saved: None, bools, ints, floats, strings, lists, tuples (tuple
subclasses such as namedtuples come back as plain tuples), dicts and
OrderedDicts (other dict subclasses come back as dicts) with keys of those
types, tensors of every ember dtype (0-d, empty, non-contiguous), ``nn.Parameter``
and NumPy arrays: model and optimizer ``state_dict()``s. Anything else is a
TypeError at save time (save ``model.state_dict()``, not the model).

Sharing: the same tensor object saved twice is stored once and loads as one
object, but *different* tensors that share storage (views of each other) are
stored separately and load as independent copies, unlike PyTorch.

Anything that is not such an archive (a ``torch.save`` pickle, a truncated or
corrupt file, an archive carrying a pickled object array) is a RuntimeError
naming the file and the problem.
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from collections import OrderedDict
from contextlib import contextmanager
from typing import IO, Any

from . import _dtype
from ._backend import xp
from ._device import check_device
from ._tensor import Tensor

FORMAT, VERSION = "ember.save", 1
MANIFEST = "ember.json"
_ZIP_MAGIC = b"PK\x03\x04"
_KINDS = ("tensor", "parameter", "ndarray")

FileLike = str | os.PathLike | IO[bytes]


# ---------------------------------------------------------------------------------- save
class _Encoder:
    """Python object -> JSON node, collecting array payloads (each tensor object once)."""

    def __init__(self) -> None:
        self.arrays: list = []
        self.entries: list[dict] = []
        self._index: dict[int, int] = {}  # id(tensor or ndarray) -> payload index
        self._open: set[int] = set()  # ids of the containers being encoded (cycle check)

    def encode(self, obj: Any):
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, (Tensor, xp.ndarray)):
            return {"array": self._payload(obj)}
        if not isinstance(obj, (list, tuple, dict)):
            raise TypeError(
                f"ember.save cannot store an object of type {type(obj).__module__}.{type(obj).__qualname__}: "
                "it stores tensors, NumPy arrays, numbers, strings, None and lists/tuples/dicts of them "
                "(save model.state_dict() rather than the model)"
            )
        if id(obj) in self._open:
            raise ValueError(f"ember.save: the object contains a reference cycle through a {type(obj).__name__}")
        self._open.add(id(obj))
        if isinstance(obj, dict):
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            node = {tag: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        else:
            node = {"tuple" if isinstance(obj, tuple) else "list": [self.encode(x) for x in obj]}
        self._open.discard(id(obj))
        return node

    def _payload(self, obj) -> int:
        if id(obj) not in self._index:
            self._index[id(obj)] = len(self.arrays)
            if isinstance(obj, Tensor):
                kind = "parameter" if _is_parameter(obj) else "tensor"
                self.entries.append({"kind": kind, "requires_grad": obj.requires_grad})
                self.arrays.append(obj._data)
            else:
                _dtype.from_np(obj.dtype)  # object/string arrays would need pickle
                self.entries.append({"kind": "ndarray", "requires_grad": False})
                self.arrays.append(obj)
        return self._index[id(obj)]


def _is_parameter(t: Tensor) -> bool:
    # A Parameter exists only once ember.nn is loaded: no need to import it here.
    module = sys.modules.get("ember.nn.parameter")
    return module is not None and isinstance(t, module.Parameter)


@contextmanager
def _opened(f: FileLike, mode: str):
    """A binary file for a path (closed afterwards) or the caller's own file object."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as fh:
            yield fh
    else:
        yield f


def save(obj: Any, f: FileLike) -> None:
    """Write ``obj`` (e.g. a ``state_dict``) to a path or binary file object, in the format above.

    Differences from ``torch.save``: no pickle (only the types listed in the module
    docstring), and tensors sharing storage are stored separately.
    """
    enc = _Encoder()
    root = enc.encode(obj)
    manifest = json.dumps({"format": FORMAT, "version": VERSION, "root": root, "arrays": enc.entries})
    with _opened(f, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(MANIFEST, manifest)
        for i, a in enumerate(enc.arrays):
            with zf.open(f"arrays/{i}.npy", "w", force_zip64=a.nbytes > 2**30) as out:
                xp.lib.format.write_array(out, a, allow_pickle=False)


# ---------------------------------------------------------------------------------- load
class _Decoder:
    """JSON node -> Python object, reading each payload once (a shared tensor loads as one object)."""

    def __init__(self, zf: zipfile.ZipFile, entries: list, fail) -> None:
        self.zf, self.entries, self.fail = zf, entries, fail
        self._loaded: dict[int, Any] = {}

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not (isinstance(node, dict) and len(node) == 1):
            self.fail(f"unexpected entry {str(node)[:80]!r} in {MANIFEST}")
        (tag, value), = node.items()
        if tag in ("list", "tuple") and isinstance(value, list):
            items = [self.decode(x) for x in value]
            return items if tag == "list" else tuple(items)
        if tag in ("dict", "odict") and isinstance(value, list):
            pairs = ((self.decode(k), self.decode(v)) for k, v in value)
            return dict(pairs) if tag == "dict" else OrderedDict(pairs)
        if tag == "array" and isinstance(value, int) and 0 <= value < len(self.entries):
            if value not in self._loaded:
                self._loaded[value] = self._array(value)
            return self._loaded[value]
        self.fail(f"unexpected entry {str(node)[:80]!r} in {MANIFEST}")

    def _array(self, i: int):
        entry = self.entries[i]
        if not (isinstance(entry, dict) and entry.get("kind") in _KINDS
                and isinstance(entry.get("requires_grad"), bool)):
            self.fail(f"malformed description {str(entry)[:80]!r} of arrays/{i}.npy in {MANIFEST}")
        with self.zf.open(f"arrays/{i}.npy") as fh:
            a = xp.lib.format.read_array(fh, allow_pickle=False)
            if fh.read(1):
                self.fail(f"arrays/{i}.npy has bytes after its array data")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        _dtype.from_np(a.dtype)
        if entry["kind"] == "ndarray":
            return a
        t = Tensor._make(a)
        if entry["kind"] == "parameter":
            from .nn import Parameter

            return Parameter(t, requires_grad=entry["requires_grad"])
        return t.requires_grad_(True) if entry["requires_grad"] else t


def _check_map_location(map_location) -> None:
    if map_location is None or callable(map_location):
        return
    targets = map_location.values() if isinstance(map_location, dict) else [map_location]
    for target in targets:
        check_device(target)


def _name(f: FileLike) -> str:
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else repr(getattr(f, "name", f))


def _not_an_archive(head: bytes) -> str:
    """Why a file that is not a zip archive cannot be an ember.save file."""
    if not head:
        return "the file is empty"
    if head[:1] == b"\x80":
        return ("it is a pickle (a legacy torch.save file?): ember.load never unpickles, since unpickling can "
                "run arbitrary code. Load it in PyTorch and re-save the tensors in a pickle-free format")
    return f"it is not an ember.save archive (it starts with {head!r})"


def load(f: FileLike, map_location=None, *, weights_only: bool | None = True) -> Any:
    """Read an object written by ``ember.save`` from a path or binary file object.

    Args:
        map_location: None, "cpu", an ``ember.device``, or a dict of them; any other
            device is an error (ember computes on the CPU). A callable is accepted and
            not called (every tensor is loaded on the CPU).
        weights_only: accepted for PyTorch compatibility; ember's format only ever holds
            data, so loading is always as safe as PyTorch's ``weights_only=True``.
    """
    _check_map_location(map_location)
    name = _name(f)

    def fail(why: str):
        raise RuntimeError(f"ember.load({name}): {why}")

    with _opened(f, "rb") as fh:
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
        if head != _ZIP_MAGIC:
            fail(_not_an_archive(head))
        try:
            with zipfile.ZipFile(fh) as zf:
                return _read_archive(zf, fail)
        except (zipfile.BadZipFile, EOFError, ValueError, TypeError, KeyError, RecursionError) as e:
            fail(f"the file is truncated, corrupt or holds unsupported data ({type(e).__name__}: {e})")


def _read_archive(zf: zipfile.ZipFile, fail) -> Any:
    names = zf.namelist()
    if MANIFEST not in names:
        if any(n.endswith(".pkl") for n in names):
            fail("it is a torch.save() file, whose data is a pickle; ember.load never unpickles, since "
                 "unpickling can run arbitrary code. Load it in PyTorch and re-save the tensors in a "
                 "pickle-free format")
        fail(f"it is a zip archive but not an ember.save file (no {MANIFEST})")
    meta = json.loads(zf.read(MANIFEST))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        fail(f"{MANIFEST} does not describe an {FORMAT} file")
    if meta.get("version") != VERSION:
        fail(f"format version {meta.get('version')!r} is not supported (this ember reads version {VERSION})")
    return _Decoder(zf, meta["arrays"], fail).decode(meta["root"])
