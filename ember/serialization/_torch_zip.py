"""The zip container of a ``torch.save`` file, laid out byte for byte as PyTorch's writer lays it out.

PyTorch writes its archive with miniz (``PyTorchStreamWriter``): every member stored, its data starting at a
multiple of 64 bytes (the local header's extra field ``FB`` pads it with ``Z``s), so that ``torch.load(...,
mmap=True)`` can map each storage in place; sizes and CRC in a data descriptor after the data (the local header
holds zeros); no timestamps; a zip64 end of central directory always; and, last, ``.data/serialization_id``: 20
digits of a hash of the record names, then 20 of a hash of their CRCs, as PyTorch computes them on Linux (the
C++ standard library's ``std::hash<std::string>`` and ``unordered_set`` iteration order are libstdc++'s there).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import IO

ALIGNMENT = 64  # PyTorch's default storage alignment (torch.utils.serialization.config.save.storage_alignment)
SERIALIZATION_ID = ".data/serialization_id"

_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_LOCAL, _CENTRAL, _DESCRIPTOR = 0x04034B50, 0x02014B50, 0x08074B50
_ZIP64_END, _ZIP64_LOCATOR, _END = 0x06064B50, 0x07064B50, 0x06054B50
_DESCRIPTOR_BYTES = struct.pack("<I", _DESCRIPTOR)
_UTF8, _HAS_DESCRIPTOR = 0x800, 0x8  # general-purpose flags: the name is UTF-8; sizes follow the data


def write(out: IO[bytes], archive: str, records: Iterable[tuple[str, bytes | memoryview]]) -> None:
    """Write ``records`` (name, bytes) as ``archive/name`` members, then the serialization id and the central
    directory. ``out`` needs only ``write``: positions are counted here, never asked of the file."""
    writer = _Writer(out, archive)
    for name, data in records:
        writer.record(name, data)
    writer.record(SERIALIZATION_ID, writer.serialization_id().encode())
    writer.finish()


class _Writer:
    def __init__(self, out: IO[bytes], archive: str) -> None:
        self.out, self.prefix = out, archive + "/"
        self.pos = 0
        self.central: list[bytes] = []
        self.names: list[str] = []
        self.crc_hash = 0  # PyTorch's running hash of the CRCs in the data descriptors it writes

    def put(self, data: bytes | memoryview) -> None:
        self.out.write(data)
        self.pos += len(data)

    def record(self, name: str, data: bytes | memoryview) -> None:
        full = (self.prefix + name).encode()
        size, offset = len(data), self.pos
        big_size, big_offset = size >= _U32, offset >= _U32
        zip64 = b""
        if big_size or big_offset:  # miniz's zip64 extra field: the sizes if large, then the offset if large
            fields = (struct.pack("<QQ", size, size) if big_size else b"") + (
                struct.pack("<Q", offset) if big_offset else b"")
            zip64 = struct.pack("<HH", 1, len(fields)) + fields
        start = offset + 30 + len(full) + len(zip64) + 4  # where the data would start with no padding
        padding = -start % ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", padding) + b"Z" * padding
        flags = _UTF8 | (_HAS_DESCRIPTOR if size else 0)
        crc = zlib.crc32(data)
        self.put(struct.pack("<IHHHHHIIIHH", _LOCAL, 0, flags, 0, 0, 0, 0, 0, 0, len(full), len(extra)))
        self.put(full + extra)
        self.put(data)
        if size:  # miniz writes no data descriptor for an empty member
            if size >= 8 and bytes(data[:4]) == _DESCRIPTOR_BYTES:  # PyTorch hashes the CRC of every write of
                # 8 bytes or more that starts as a data descriptor does, so also of such a member's data
                self.crc_hash = _hash_combine(self.crc_hash, int.from_bytes(bytes(data[4:8]), "little"))
            sizes = struct.pack("<QQ", size, size) if zip64 else struct.pack("<II", size, size)
            self.put(struct.pack("<II", _DESCRIPTOR, crc) + sizes)
            self.crc_hash = _hash_combine(self.crc_hash, crc)
        self.central.append(struct.pack("<IHHHHHHIIIHHHHHII", _CENTRAL, 0, 0, flags, 0, 0, 0, crc,
                                        min(size, _U32), min(size, _U32), len(full), len(zip64), 0, 0, 0, 0,
                                        min(offset, _U32)) + full + zip64)
        self.names.append(name)

    def serialization_id(self) -> str:
        names_hash = 0
        for h in _unordered_set_order([_std_hash(n.encode()) for n in self.names]):
            names_hash = _hash_combine(names_hash, h)
        return f"{names_hash:020d}{self.crc_hash:020d}"

    def finish(self) -> None:
        directory = b"".join(self.central)
        start, count = self.pos, len(self.central)
        self.put(directory)
        end64 = self.pos
        self.put(struct.pack("<IQHHIIQQQQ", _ZIP64_END, 44, 0x031E, 45, 0, 0, count, count, len(directory), start))
        self.put(struct.pack("<IIQI", _ZIP64_LOCATOR, 0, end64, 1))
        self.put(struct.pack("<IHHHHIIH", _END, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                             min(len(directory), _U32), min(start, _U32), 0))


# ---------------------------------------------------------------------------------- PyTorch's serialization id
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _std_hash(data: bytes) -> int:
    """libstdc++'s ``std::hash<std::string>`` on 64-bit Linux (``_Hash_bytes``, seed 0xc70f6907)."""
    n = len(data)
    h = (0xC70F6907 ^ (n * _MUL)) & _U64
    whole = n & ~7
    for i in range(0, whole, 8):
        h ^= (_shift_mix((int.from_bytes(data[i:i + 8], "little") * _MUL) & _U64) * _MUL) & _U64
        h = (h * _MUL) & _U64
    if n & 7:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * _MUL) & _U64
    return _shift_mix((_shift_mix(h) * _MUL) & _U64)


def _hash_combine(seed: int, value: int) -> int:
    """``c10::hash_combine``."""
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & _U64) + (seed >> 2)) & _U64)) & _U64


# The bucket counts an unordered_set grows through as elements are inserted one by one: libstdc++'s prime rehash
# policy (load factor 1) takes the first entry of its prime table not below twice the current count, from 13
_BUCKET_COUNTS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061, 712697,
                  1447153, 2938679, 5967347, 12117689, 24607243, 49969847, 101473717, 206062531, 418451333,
                  849749479, 1725587117, 3504151727, 8589934583)


def _unordered_set_order(hashes: list[int]) -> list[int]:
    """The order a libstdc++ ``std::unordered_set`` iterates over elements with these hashes, inserted in this
    order: one list of nodes; an element whose bucket holds others goes first among them, one whose bucket is
    empty goes first in the list; growing re-inserts the elements in list order the same way."""
    groups: dict[int, list[int]] = {}  # bucket -> its hashes, last first when read backwards
    created: list[int] = []  # buckets, in the order their first element came (the list holds them backwards)

    def insert(h: int, buckets: int) -> None:
        group = groups.get(h % buckets)
        if group is None:
            group = groups[h % buckets] = []
            created.append(h % buckets)
        group.append(h)

    def in_order() -> list[int]:
        return [h for b in reversed(created) for h in reversed(groups[b])]

    buckets, grows = 1, iter(_BUCKET_COUNTS)
    for count, h in enumerate(hashes):
        if count + 1 > (buckets if buckets > 1 else 0):  # the next element passes the load factor: grow
            before = in_order()
            buckets = next(grows)
            groups.clear()
            created.clear()
            for old in before:
                insert(old, buckets)
        insert(h, buckets)
    return in_order()
