"""The safetensors format (Hugging Face), read and written with NumPy alone: ``save_file``/``load_file``.

Same names and arguments as ``safetensors.torch``. A file is an 8-byte
little-endian header length N, N bytes of JSON
(``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {str: str}}``),
then the tensors' little-endian bytes. Loading checks every size and offset
against the file before allocating, and any problem is a RuntimeError naming the
file. Saving is atomic like ``ember.save``.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

from .. import _dtype
from .._backend import xp
from .._tensor import Tensor
from ._archive import checked_count
from ._atomic import write_atomically

__all__ = ["save_file", "load_file", "save", "load"]

# safetensors' dtype names for ember's dtypes (U16/U32/U64 and the float8s have no ember dtype)
_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
          "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}
_NAMES = {v: k for k, v in _CODES.items()}
MAX_HEADER = 100 * 2**20  # the reference implementation's limit


def _encode(tensors: dict[str, Tensor], metadata: dict[str, str] | None) -> tuple[bytes, list]:
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors save expects a dict of name -> tensor, got {type(tensors).__name__}")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("safetensors metadata must be a dict of str -> str")
    for text in [*tensors, *(metadata or {}).items()]:
        _check_utf8(text)
    arrays = {}
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise TypeError(f"safetensors stores str -> tensor, got {type(name).__name__} -> {type(t).__name__}")
        a = t._data.astype(t._data.dtype.newbyteorder("<"), copy=False)
        arrays[name] = a if a.flags.c_contiguous else a.copy()  # (ascontiguousarray would make 0-d arrays 1-d)
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    ordered, offset = [], 0
    for name in sorted(arrays, key=lambda n: (-arrays[n].itemsize, n)):  # larger items first: aligned offsets
        a = arrays[name]
        header[name] = {"dtype": _CODES[a.dtype.name], "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        ordered.append(a)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, ordered


def _check_utf8(text) -> None:
    """A name or metadata entry must be valid UTF-8 (the header is UTF-8 JSON; the reference reader refuses a
    lone surrogate): refused at save, a ValueError as in ``safetensors.torch``, rather than written unreadable."""
    for s in text if isinstance(text, tuple) else (text,):
        if isinstance(s, str):
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"safetensors cannot store {s!r}: it holds a lone surrogate, which is not valid "
                                 "UTF-8") from None


def _write(out, head: bytes, arrays: list) -> None:
    out.write(head)
    for a in arrays:
        if a.size:
            out.write(memoryview(a.reshape(-1).view(xp.uint8)))


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (each saved as a contiguous copy)."""
    import io

    head, arrays = _encode(tensors, metadata)
    buf = io.BytesIO()
    _write(buf, head, arrays)
    return buf.getvalue()


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike, metadata: dict[str, str] | None = None
              ) -> None:
    """Write ``tensors`` to ``filename``; the previous file survives any failure (see ``ember.save``).

    Difference from ``safetensors.torch.save_file``: tensors that share memory are saved as separate copies
    rather than refused.
    """
    head, arrays = _encode(tensors, metadata)
    write_atomically(filename, lambda fh: _write(fh, head, arrays), f"save_file({os.fspath(filename)!r})")


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors in safetensors ``data``."""
    import io

    return _read(io.BytesIO(data), len(data), "safetensors.load(<bytes>)")


def load_file(filename: str | os.PathLike, device: str = "cpu") -> dict[str, Tensor]:
    """The tensors in the safetensors file ``filename`` (``device`` must be the CPU)."""
    from .._device import check_device

    check_device(device)
    with open(filename, "rb") as fh:
        return _read(fh, os.fstat(fh.fileno()).st_size, f"load_file({os.fspath(filename)!r})")


def metadata_of(filename: str | os.PathLike) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file (empty when it has none), without reading the tensors."""
    with open(filename, "rb") as fh:
        header, _ = _header(fh, os.fstat(fh.fileno()).st_size, f"metadata_of({os.fspath(filename)!r})")
    return header.get("__metadata__") or {}


def _header(fh, size: int, what: str) -> tuple[dict, int]:
    def fail(why: str):
        raise RuntimeError(f"{what}: {why}")

    head = fh.read(8)
    if len(head) < 8:
        fail("the file is too short to be a safetensors file")
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER or 8 + n > size:
        fail(f"the header declares {n} bytes, more than the file holds or the {MAX_HEADER} allowed")
    try:
        header = json.loads(fh.read(n))
    except (ValueError, RecursionError) as e:
        fail(f"the header is not valid JSON ({e})")
    if not isinstance(header, dict):
        fail("the header is not a JSON object")
    meta = header.get("__metadata__")
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        fail("__metadata__ must map strings to strings")
    return header, 8 + n


def _read(fh, size: int, what: str) -> dict[str, Tensor]:
    def fail(why: str):
        raise RuntimeError(f"{what}: {why}")

    base = fh.tell()
    header, start = _header(fh, size, what)
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not (isinstance(info, dict) and info.get("dtype") in _NAMES and isinstance(info.get("shape"), list)
                and isinstance(info.get("data_offsets"), list) and len(info["data_offsets"]) == 2
                and all(type(o) is int for o in info["data_offsets"])):
            fail(f"tensor {name!r} has a malformed entry {str(info)[:80]} (or a dtype ember does not have)")
        dtype = _dtype.to_np(_NAMES[info["dtype"]]).newbyteorder("<")
        count = checked_count(tuple(info["shape"]), f"tensor {name}", fail)
        begin, end = info["data_offsets"]
        if not 0 <= begin <= end or end - begin != count * dtype.itemsize or start + end > size:
            fail(f"tensor {name!r}: offsets {begin}..{end} do not fit shape {info['shape']} of {info['dtype']} "
                 f"inside the file's {size - start} data bytes")
        spans.append((begin, end, name, dtype, tuple(info["shape"])))
    spans.sort()
    position, out = 0, {}
    for begin, end, name, dtype, shape in spans:
        if begin != position:
            fail(f"tensor {name!r} starts at byte {begin}: the data has a gap or overlap at {position}")
        flat = xp.empty(end - begin, dtype=xp.uint8)
        fh.seek(base + start + begin)
        if fh.readinto(memoryview(flat)) != end - begin:
            fail(f"tensor {name!r} is truncated")
        out[name] = Tensor._make(flat.view(dtype).astype(dtype.newbyteorder("="), copy=False).reshape(shape))
        position = end
    if start + position != size:
        fail(f"the data section is {size - start} bytes but the tensors cover {position}")
    return {name: out[name] for name in header if name != "__metadata__"}
