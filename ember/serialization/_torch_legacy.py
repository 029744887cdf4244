"""PyTorch's legacy ``torch.save`` format (PyTorch before 1.6, or ``_use_new_zipfile_serialization=False``), read
without unpickling, as ``torch.load`` still reads it (weights only by default).

The file is a run of pickles (protocol 2) followed by raw storages: a magic number, the format's protocol version
(1001), a dict of the writer's system (its byte order), the saved object, whose storages are persistent ids
``("storage", FloatStorage, key, location, numel, view_metadata)``, then the list of storage keys; each storage
follows in that order as its element count (8 bytes) and its elements. The object's pickle comes before the data,
so each storage is made zeroed when a tensor first uses it (its size checked against the file's first) and filled
once the storage section is read: the tensors are views of those arrays, as in the zip format's reader.
"""

from __future__ import annotations

import pickletools
import struct
from typing import Any

from .._backend import xp
from ._archive import Fail
from ._torch_unpickle import Unpickler, _Storage

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def is_legacy(head: bytes) -> bool:
    """Whether ``head`` starts the legacy format: the pickled magic number (PROTO 2, LONG1 of 10 bytes)."""
    return head[:4] == b"\x80\x02\x8a\x0a"


class _DeferredStorages(Unpickler):
    """The saved object's interpreter: a storage is a zeroed array until the storage section fills it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.used: dict[str, _Storage] = {}

    def storage_array(self, s: _Storage):
        if s.key not in self.storages:
            if s.numel * s.dtype.itemsize > len(self.data):
                self.fail(f"storage {s.key!r} declares {s.numel} elements, more than the file holds")
            self.bounds.charge(s.numel * s.dtype.itemsize)
            self.storages[s.key] = xp.zeros(s.numel, dtype=s.native())
            self.used[s.key] = s
        return super().storage_array(s)


def _pickle_at(data: bytes, pos: int, fail: Fail, weights_only: bool, what: str, big_endian: bool = False,
               kind: type = Unpickler) -> tuple[Any, Unpickler]:
    u = kind(data, None, "", big_endian, fail, weights_only, what)
    u.pos = pos
    return u.run(), u


def read(data: bytes, fail: Fail, weights_only: bool, what: str) -> Any:
    magic, u = _pickle_at(data, 0, fail, True, what)
    if magic != MAGIC_NUMBER:
        fail("it is a pickle, not a torch.save file (no magic number): ember.load never unpickles, since "
             "unpickling can run arbitrary code")
    version, u = _pickle_at(data, u.pos, fail, True, what)
    if version != PROTOCOL_VERSION:
        fail(f"it is a legacy torch.save file of protocol version {version!r}; PyTorch reads only {PROTOCOL_VERSION}")
    sys_info, u = _pickle_at(data, u.pos, fail, True, what)
    if not isinstance(sys_info, dict) or not isinstance(sys_info.get("little_endian", True), bool):
        fail("its system information is malformed")
    big_endian = not sys_info.get("little_endian", True)
    try:  # where the saved object's pickle ends (its opcodes read, nothing built), to interpret it second
        end = u.pos + max(pos for _, _, pos in pickletools.genops(data[u.pos:])) + 1
    except ValueError as e:
        fail(f"the saved object's pickle is malformed ({e})")
    keys, after_keys = _pickle_at(data, end, fail, True, what)
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        fail("its list of storage keys is malformed")
    obj, main = _pickle_at(data, u.pos, fail, weights_only, what, big_endian, _DeferredStorages)
    pos = after_keys.pos
    count = struct.Struct(">q" if big_endian else "<q")
    for key in keys:
        if pos + 8 > len(data):
            fail(f"the file is truncated (storage {key!r} missing)")
        (numel,), pos = count.unpack_from(data, pos), pos + 8
        s = main.used.get(key)
        if s is None:  # (PyTorch writes only the storages its object uses; an unused one's width is unknown)
            fail(f"storage {key!r} is not used by the saved object")
        if numel != s.numel or pos + numel * s.dtype.itemsize > len(data):
            fail(f"storage {key!r} is truncated or not {s.numel} elements of {s.dtype}")
        stored = xp.frombuffer(data, dtype=s.dtype, count=numel, offset=pos)
        main.storages[key][...] = stored if s.view is None else stored.astype("=u2").view(s.view)
        pos += numel * s.dtype.itemsize
    if set(main.used) - set(keys):
        fail(f"storages {sorted(set(main.used) - set(keys))} are missing")
    return obj
