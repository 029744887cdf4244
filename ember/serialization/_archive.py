"""Bounded reading of a zip archive: ember's own checkpoints and PyTorch's ``torch.save`` files.

Both formats store their members uncompressed. Only such members are accepted,
and every size is checked against the file's own size and the shape/dtype a
member declares *before* anything is allocated, so a small file cannot make the
reader allocate much more than its own size. Every problem is reported through
``fail`` (a RuntimeError naming the file).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from typing import IO, NoReturn

from .. import _dtype
from .._backend import xp

Fail = Callable[[str], NoReturn]

MAX_TEXT_MEMBER = 256 * 2**20  # a manifest or pickle larger than this is not a checkpoint's
MAX_NPY_HEADER = 10_000  # NumPy's own limit for an .npy header
# Nesting of a saved or loaded object, ember's format or PyTorch's: deeper is refused, never a crash. A list, tuple,
# dict or module is one level more than the deepest thing it holds; a tensor, number or string is no level.
MAX_DEPTH = 200


def too_deep(who: str) -> ValueError:
    """What ``ember.save`` raises, before writing anything, for an object ``ember.load`` would refuse as too deep."""
    return ValueError(f"{who}: the object nests {MAX_DEPTH + 1} or more levels deep (lists, tuples, dicts or "
                      f"modules inside one another); ember.load reads at most {MAX_DEPTH}, so it is not saved")


class Archive:
    """The members of a zip archive, checked to be stored (uncompressed) and to fit inside the file."""

    def __init__(self, fh: IO[bytes], fail: Fail) -> None:
        self.fail = fail
        start = fh.tell()
        fh.seek(0, 2)
        self.file_size = fh.tell()
        fh.seek(start)
        self.zf = zipfile.ZipFile(fh)
        if any("code/__torch__" in name for name in self.zf.namelist()):  # (its code members are compressed)
            fail("it is a TorchScript archive (torch.jit.save); its model is TorchScript code, which ember cannot "
                 "run. Build the model from its Python class and load the weights: in PyTorch, "
                 "torch.save(torch.jit.load(path).state_dict(), 'weights.pt'), then "
                 "model.load_state_dict(ember.load('weights.pt'))")
        self.infos: dict[str, zipfile.ZipInfo] = {}
        for info in self.zf.infolist():
            name = info.filename
            if info.compress_type != zipfile.ZIP_STORED:
                fail(f"member {name!r} is compressed (zip method {info.compress_type}); checkpoints store "
                     "their members uncompressed")
            if info.flag_bits & 0x1:
                fail(f"member {name!r} is encrypted")
            if info.file_size != info.compress_size or info.header_offset + info.file_size > self.file_size:
                fail(f"member {name!r} declares {info.file_size} bytes, more than the file holds "
                     "(truncated or corrupt)")
            if name in self.infos:  # PyTorch reads the first copy, zipfile the last: refuse to pick one
                fail(f"member {name!r} is stored twice; a checkpoint names each member once (the file is "
                     "corrupt or was edited)")
            self.infos[name] = info

    def names(self) -> list[str]:
        return list(self.infos)

    def read(self, name: str, limit: int | None = None) -> bytes:
        info = self._info(name)
        limit = MAX_TEXT_MEMBER if limit is None else limit
        if info.file_size > limit:
            self.fail(f"member {name!r} is {info.file_size} bytes, more than the {limit} allowed for it")
        with self.zf.open(info) as fh:
            return fh.read()

    def read_into(self, name: str, out) -> None:
        """Fill the contiguous array ``out`` with the member's bytes, which must be exactly as many."""
        info = self._info(name)
        if info.file_size != out.nbytes:
            self.fail(f"member {name!r} holds {info.file_size} bytes, but {out.nbytes} are declared for it")
        with self.zf.open(info) as fh:
            _fill(fh, out, name, self.fail)

    def read_npy(self, name: str, tensor: bool = True):
        """An ``.npy`` member as an array, its header checked against the member's size before allocating.

        ``tensor``: the dtype must be one of ember's; otherwise any plain numeric NumPy dtype is accepted.
        """
        info = self._info(name)
        with self.zf.open(info) as fh:
            shape, fortran, dtype = self._npy_header(fh, name)
            check_dtype(dtype, name, self.fail, tensor)
            count = checked_count(shape, name, self.fail)
            if fh.tell() + count * dtype.itemsize != info.file_size:
                self.fail(f"member {name!r} declares shape {tuple(shape)} of {dtype}, "
                          f"{count * dtype.itemsize} bytes, but holds {info.file_size - fh.tell()}")
            flat = xp.empty(count, dtype=dtype)
            _fill(fh, flat, name, self.fail)
        out = flat.reshape(shape[::-1]).transpose() if fortran else flat.reshape(shape)
        return out if dtype.isnative else out.astype(dtype.newbyteorder("="))

    def _npy_header(self, fh, name: str) -> tuple:
        try:
            version = xp.lib.format.read_magic(fh)
            if version == (1, 0):
                return xp.lib.format.read_array_header_1_0(fh, max_header_size=MAX_NPY_HEADER)
            if version in ((2, 0), (3, 0)):
                return xp.lib.format.read_array_header_2_0(fh, max_header_size=MAX_NPY_HEADER)
            raise ValueError(f"unsupported .npy version {version}")
        except Exception as e:  # NumPy's header parser (a literal_eval) raises many types on a corrupt header
            if isinstance(e, RuntimeError):
                raise
            self.fail(f"member {name!r} has a corrupt .npy header ({type(e).__name__}: {e})")

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self.infos.get(name)
        if info is None:
            self.fail(f"member {name!r} is missing")
        return info


def _fill(fh, out, name: str, fail: Fail) -> None:
    view = memoryview(out.reshape(-1).view(xp.uint8)) if out.size else memoryview(b"")
    done = 0
    while done < len(view):
        n = fh.readinto(view[done:])
        if not n:
            fail(f"member {name!r} ends early (truncated)")
        done += n
    if fh.read(1):  # also makes zipfile check the member's CRC
        fail(f"member {name!r} has bytes after its data")


def check_dtype(dtype, name: str, fail: Fail, tensor: bool = True) -> None:
    try:
        if not is_plain_numeric(dtype):
            raise TypeError(str(dtype))
        if tensor:
            _dtype.from_np(dtype.newbyteorder("="))
    except TypeError:
        fail(f"member {name!r} holds dtype {dtype}, which ember cannot load")


def is_plain_numeric(dtype) -> bool:
    """bool, integer, float or complex: an array of it can be stored and read as raw bytes, without pickle."""
    return dtype.kind in "biufc" and dtype.fields is None and dtype.subdtype is None


def checked_count(shape, name: str, fail: Fail) -> int:
    """The element count of a declared shape (Python ints: no overflow), which must be sane."""
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 64:
        fail(f"member {name!r} declares an invalid shape {str(shape)[:80]}")
    count = 1
    for n in shape:
        count *= n
    return count
