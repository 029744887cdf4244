"""``Tensor.untyped_storage()`` / ``Tensor.storage()``: the memory a tensor and its views share.

A tensor's storage is the whole array its data lies in: a view (``x[1:]``,
``x.t()``) has the same storage as its base, with the same ``data_ptr()``, so
``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`` tells
whether two tensors share memory, as in PyTorch. ``UntypedStorage`` counts and
indexes bytes; ``TypedStorage`` counts and indexes elements of the tensor's
dtype. Both read the live memory (writes through the tensor show).

Differences from PyTorch: ``Tensor.storage()`` does not warn that TypedStorage is
deprecated; storages are read-only views (no ``resize_``, ``copy_``, item assignment).

A gradient store's flat buffer (``ember.autograd.grad_store``) is not one storage: each ``.grad`` in it is a storage
of its own, as PyTorch allocates each parameter's gradient (``in_pieces``): its ``untyped_storage()`` holds its own
bytes, and saving or pickling it writes only those.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Sequence

from . import _dtype, _meta
from ._backend import xp


def root_array(array):
    """The array that owns ``array``'s memory (NumPy views keep theirs in ``.base``)."""
    while isinstance(array.base, xp.ndarray):
        array = array.base
    return array


# Buffers that hold several storages end to end: id(buffer) -> (a weak reference to it, the element offsets where
# its pieces start, and its size)
_PIECES: dict[int, tuple] = {}


def in_pieces(buffer, bounds: list[int]) -> None:
    """Mark the flat array ``buffer`` as separate storages between the element offsets ``bounds`` (its first 0,
    its last ``buffer.size``): a gradient store's buffer, whose slots PyTorch would allocate one by one."""
    key = id(buffer)
    _PIECES[key] = (weakref.ref(buffer, lambda _, key=key: _PIECES.pop(key, None)), bounds)


def storage_root(array):
    """The array that is ``array``'s storage: its root array (``root_array``), or where that is a buffer in pieces
    (``in_pieces``), the piece ``array`` lies in."""
    root = root_array(array)
    entry = _PIECES.get(id(root)) if _PIECES else None
    if entry is None or entry[0]() is not root:
        return root
    bounds, item = entry[1], root.itemsize
    start = (data_ptr(array) - data_ptr(root)) // item
    i = bisect.bisect_right(bounds, start) - 1
    last = start + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // item if array.size else start
    if array.itemsize != item or any(s < 0 for s in array.strides) or i + 1 >= len(bounds) or last >= bounds[i + 1]:
        return root  # (reaches past its piece: only as_strided makes such a view)
    return root[bounds[i]:bounds[i + 1]]


def storage_key(root) -> tuple[int, int]:
    """What tells storages apart: ``storage_root`` gives a new array for a piece at each call."""
    return id(root_array(root)), data_ptr(root)


def data_ptr(array) -> int:
    """The address of ``array``'s first element."""
    return array.__array_interface__["data"][0]


def _bytes_of(root):
    """``root``'s memory as a flat uint8 array, in memory order, sharing it (a copy if it is not contiguous)."""
    if root.flags.c_contiguous or root.flags.f_contiguous:
        return root.reshape(-1, order="A").view(xp.uint8)
    return xp.frombuffer(root.tobytes(order="A"), dtype=xp.uint8)


def _storage_index(index: int, size: int) -> int:
    """``index`` into a storage of ``size`` elements, a negative one counted from the end; out of range: PyTorch's
    IndexError (naming the index as counted from the end)."""
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError(f"index {index} out of range for storage of size {size}")
    return index


class UntypedStorage:
    """The bytes of a tensor's storage."""

    def __init__(self, root) -> None:
        self._root = root

    @property
    def device(self):
        from ._device import CPU

        return CPU

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.uint8

    def data_ptr(self) -> int:
        return data_ptr(self._root)

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    def size(self) -> int:
        """The number of bytes (as PyTorch's UntypedStorage counts)."""
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def __len__(self) -> int:
        return self.nbytes()

    def __getitem__(self, index):
        """A byte as an int, or (a slice, of step 1) the bytes it spans as a storage sharing this one's memory, as
        PyTorch's."""
        if isinstance(index, slice):
            start, stop, step = index.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            return UntypedStorage(_bytes_of(self._root)[start:max(start, stop)])
        if not isinstance(index, int) or isinstance(index, bool):
            from ._shown_name import package_name

            raise TypeError(f"can't index a {package_name()}.UntypedStorage with {type(index).__name__}")
        return int(_bytes_of(self._root)[_storage_index(index, self.nbytes())])

    def tolist(self) -> list[int]:
        return _bytes_of(self._root).tolist()

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device=cpu)"


_TYPED_STORAGE_FORMS = ("TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
                        " * (*, torch.device device, torch.dtype dtype)\n * (int size, *, torch.device device, "
                        "torch.dtype dtype)\n * (Sequence data, *, torch.device device, torch.dtype dtype)\n * (*, "
                        "UntypedStorage wrap_storage, torch.dtype dtype)")


class TypedStorage:
    """A tensor's storage seen as elements of the tensor's dtype, built as PyTorch's: ``TypedStorage(dtype=d)``
    (empty), ``TypedStorage(size, dtype=d)`` (``size`` zeros; PyTorch leaves them uninitialised),
    ``TypedStorage(sequence, dtype=d)`` (the values, flattened) -- ``d`` the default dtype when left out -- and
    ``TypedStorage(wrap_storage=untyped, dtype=d, device=None, _internal=True)`` (the form programs use to retype
    a storage), which views an ``UntypedStorage``'s bytes as elements of ``d``, sharing its memory. No
    deprecation warning (see docs/api.md, storages)."""

    def __init__(self, *args, dtype: _dtype.dtype | None = None, wrap_storage: UntypedStorage | None = None,
                 device=None, _internal: bool = False) -> None:
        if wrap_storage is not None:
            reason = ("\nArgument 'device' should not be specified when 'wrap_storage' is given"
                      if device is not None else "")
            if args or not isinstance(wrap_storage, UntypedStorage) or not isinstance(dtype, _dtype.dtype) or reason:
                raise RuntimeError(_TYPED_STORAGE_FORMS + reason)
            self._root, self.dtype = wrap_storage._root, dtype
            return
        if len(args) > 1:
            raise RuntimeError(_TYPED_STORAGE_FORMS + "\nToo many positional arguments")
        data = args[0] if args else 0
        size = isinstance(data, int) and not isinstance(data, bool)
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if not size and not isinstance(data, Sequence):
            raise TypeError(f"{_TYPED_STORAGE_FORMS}\nArgument type not recognized: {type(data)}")
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        self._root = xp.zeros(data, dtype.np) if size else xp.array(data, dtype=dtype.np).reshape(-1)
        self.dtype = dtype

    @classmethod
    def _over(cls, root, dtype: _dtype.dtype) -> TypedStorage:
        """The storage whose memory is the array ``root``, as elements of ``dtype`` (ember's own construction)."""
        storage = cls.__new__(cls)
        storage._root, storage.dtype = root, dtype
        return storage

    @property
    def device(self):
        from ._device import CPU

        return CPU

    def _elements(self):
        return _bytes_of(self._root)[: self.size() * self.dtype.itemsize].view(self.dtype.np)

    def data_ptr(self) -> int:
        return data_ptr(self._root)

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    def size(self) -> int:
        """The number of elements of ``dtype`` the storage holds."""
        return int(self._root.nbytes) // self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def __getitem__(self, index):
        """An element as a Python number; PyTorch's TypedStorage takes no slice (its UntypedStorage does)."""
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(index, int):
            from ._shown_name import package_name

            raise RuntimeError(f"can't index a <class '{package_name()}.storage.TypedStorage'> with "
                               f"<class '{type(index).__name__}'>")
        return self._elements()[_storage_index(index, self.size())].item()

    def tolist(self) -> list:
        return self._elements().tolist()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._root)

    _untyped_storage = property(untyped)

    def __repr__(self) -> str:
        return f"TypedStorage(size={self.size()}, dtype={self.dtype}, device=cpu)"


class _LegacyStorage(TypedStorage):
    """``torch.ByteStorage`` & co.: a storage of one dtype, made from a size, a sequence or a buffer.

    ``ByteStorage(n)`` holds ``n`` elements (zeros; PyTorch leaves them uninitialised), ``ByteStorage([1, 2])``
    the values given; ``ByteTensor(storage)`` is a tensor over the storage's memory (writes show in both).
    """

    _DTYPE: _dtype.dtype

    def __init__(self, data=0) -> None:
        super().__init__(data, dtype=self._DTYPE)

    @classmethod
    def from_buffer(cls, buffer, byte_order: str | None = None, count: int = -1, offset: int = 0):
        """A storage holding a copy of ``buffer``'s bytes from ``offset`` (in bytes) read as ``count`` elements
        (-1: to the end) in ``byte_order`` ("native", "little" or "big"; required for elements wider than a
        byte, as PyTorch requires it)."""
        dt = xp.dtype(cls._DTYPE.np)
        if dt.itemsize > 1:
            if byte_order is None:
                raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
            if byte_order not in _BYTE_ORDERS:
                raise ValueError(f"invalid byte_order '{byte_order}' (expected 'little', 'big', or 'native')")
            dt = dt.newbyteorder(_BYTE_ORDERS[byte_order])
        size = len(memoryview(buffer).cast("B"))
        if not 0 <= offset <= size:
            raise ValueError(f"offset must be non-negative and no greater than buffer length ({size}), "
                             f"but got {offset}")
        if count < 0:
            if (size - offset) % dt.itemsize:
                raise ValueError(f"buffer size ({size - offset}) must be a multiple of element size ({dt.itemsize})")
            count = (size - offset) // dt.itemsize
        elif offset + count * dt.itemsize > size:
            raise ValueError(f"buffer has only {(size - offset) // dt.itemsize} elements after offset {offset}, "
                             f"but specified a size of {count}")
        values = xp.frombuffer(buffer, dtype=dt, count=count, offset=offset)
        return cls._over(values.astype(cls._DTYPE.np), cls._DTYPE)  # a copy, in native order

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size()}, dtype={self.dtype}, device=cpu)"


_BYTE_ORDERS = {"native": "=", "little": "<", "big": ">"}


def _legacy_storage(name: str, dtype: _dtype.dtype) -> type:
    return type(name, (_LegacyStorage,), {"_DTYPE": dtype, "__module__": "ember", "__qualname__": name,
                                          "__doc__": f"``torch.{name}``: a storage of {dtype.name} elements."})


ByteStorage = _legacy_storage("ByteStorage", _dtype.uint8)
CharStorage = _legacy_storage("CharStorage", _dtype.int8)
ShortStorage = _legacy_storage("ShortStorage", _dtype.int16)
IntStorage = _legacy_storage("IntStorage", _dtype.int32)
LongStorage = _legacy_storage("LongStorage", _dtype.int64)
HalfStorage = _legacy_storage("HalfStorage", _dtype.float16)
FloatStorage = _legacy_storage("FloatStorage", _dtype.float32)
DoubleStorage = _legacy_storage("DoubleStorage", _dtype.float64)
BoolStorage = _legacy_storage("BoolStorage", _dtype.bool_)


def untyped_storage(x) -> UntypedStorage:
    """``x.untyped_storage()``: the bytes ``x`` and its views live in."""
    return UntypedStorage(storage_root(x._data))


def typed_storage(x) -> TypedStorage:
    """``x.storage()``: the storage as elements of ``x.dtype``."""
    return TypedStorage._over(storage_root(x._data), x.dtype)


def tensor_data_ptr(x) -> int:
    """``x.data_ptr()``: the address of ``x``'s first element."""
    return data_ptr(x._data)


def storage_offset(x) -> int:
    """``x.storage_offset()``: where ``x`` starts in its storage, in elements."""
    if _meta.made[0] and _meta.is_meta(x._data):  # (a view's offset, as its op recorded it)
        return _meta.meta_layout(x._data)[1]
    return (data_ptr(x._data) - data_ptr(storage_root(x._data))) // x._data.itemsize


def stride(x, dim: int | None = None):
    """``x.stride()``: the step in elements between neighbours along each dimension (``stride(dim)``: one)."""
    from ._tensor import _wrap_dim, no_dimensions

    if _meta.made[0] and _meta.is_meta(x._data):  # (its array's strides are 0: PyTorch's meta tensor reports these)
        steps = _meta.meta_layout(x._data)[0]
    else:
        steps = tuple(s // x._data.itemsize for s in x._data.strides)
    if dim is None:
        return steps
    if not x._data.ndim:
        raise no_dimensions(dim)
    return steps[_wrap_dim(dim, x._data.ndim)]
