"""``Tensor.resize_`` / ``resize_as_``: give a tensor a new shape over its storage, growing the storage if needed.

PyTorch's semantics: the same shape changes nothing (strides stay); another shape
makes the tensor contiguous at its storage offset, keeping the data already
there (shrinking keeps the prefix, in memory order); elements past the end of
the storage are uninitialised, and the storage grows for every tensor that
shares it (a view grown past its base makes the base's storage grow too; the
base keeps its shape). A tensor that requires grad refuses; so does the
storage of a tensor in shared memory, which cannot grow.

Difference from PyTorch: the storage of a tensor made by ``from_numpy`` grows
(PyTorch refuses: NumPy owns that memory); the tensor then no longer shares the
array's memory.
"""

from __future__ import annotations

import operator
import sys

from ._backend import xp
from ._dtype import CPP_TYPE_NAMES
from ._inference import check_inplace as check_inference_inplace
from ._size import c_type_name, parsed_int
from ._tensor import Tensor
from ._tensor_pickle import layout_in_storage, storage_bytes, view_into
from .storage import TypedStorage, UntypedStorage, root_array


def _sizes(sizes: tuple) -> tuple[int, ...]:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for position, s in enumerate(sizes):  # (a 0-d NumPy integer array is read as its int, as PyTorch's parser does)
        if isinstance(s, xp.ndarray) and s.ndim:
            if position:
                raise TypeError(f"resize_(): argument 'size' failed to unpack the object at pos {position + 1} with "
                                f"error \"type must be tuple of ints,but got {c_type_name(s)}\"")
            raise TypeError(f"resize_(): argument 'size' (position 1) must be tuple of ints, not {c_type_name(s)}")
    try:
        shape = tuple(parsed_int(s, position > 0) for position, s in enumerate(sizes))  # (as PyTorch's list)
    except TypeError:
        kinds = ", ".join(type(s).__name__ for s in sizes)
        raise TypeError(f"resize_(): argument 'size' must be tuple of ints, but found element types ({kinds})") \
            from None
    if any(s < 0 for s in shape):
        if 0 not in shape:  # (PyTorch's resize_ multiplies the sizes as unsigned numbers: a negative one overflows)
            raise RuntimeError("numel: integer multiplication overflow")
        # (with a 0 among them PyTorch makes a tensor of a negative size, which no array can have)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


def resize_(t: Tensor, *sizes, memory_format=None) -> Tensor:
    """``t.resize_(*sizes)``; ``memory_format`` is accepted (the result is row-major). An inference tensor outside
    inference mode is resized, then refused, as PyTorch's version bump refuses it after the op."""
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if t.is_sparse:
        raise RuntimeError("resize_ is not supported on a sparse COO tensor in ember; use sparse_resize_ in PyTorch")
    return resize_storage(t, _sizes(sizes))


def resize_storage(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` given ``shape`` over its storage, as ``resize_`` (see the module's docstring) without its refusal of a
    tensor that requires grad: PyTorch's resizing of an ``out=`` tensor, which its autograd checks have already
    let through (a leaf that requires grad, written under no_grad)."""
    if shape == t._data.shape:
        return t
    layout = layout_in_storage(t._data)
    if layout is None:
        raise RuntimeError("Trying to resize storage that is not resizable")
    offset, storage_nbytes = layout[1], layout[0].nbytes
    del layout
    needed = offset + _numel(shape) * t._data.itemsize
    if needed > storage_nbytes:
        from ._shared_memory import is_shared, move_storages

        if is_shared(t):
            raise RuntimeError("Trying to resize storage that is not resizable")
        move_storages([t], lambda old: _grown(old, needed))
    t._data = view_into(storage_bytes(root_array(t._data)), t.dtype, offset, shape,
                        _contiguous_strides(shape, t._data.itemsize))
    check_inference_inplace(t._vc)
    return t


def _contiguous_strides(shape: tuple, itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    if n > sys.maxsize:
        raise RuntimeError("numel: integer multiplication overflow")
    return n


def _grown(root, nbytes: int):
    """A new storage of ``nbytes`` that starts with ``root``'s bytes (the rest uninitialised)."""
    grown = xp.empty(nbytes, dtype=xp.uint8)
    grown[: root.nbytes] = storage_bytes(root)
    return grown


def resize_as_(t: Tensor, other: Tensor, memory_format=None) -> Tensor:
    """``t.resize_as_(other)``: ``t.resize_(other.shape)`` (``t`` keeps its dtype)."""
    return resize_(t, tuple(other.shape), memory_format=memory_format)


def set_(t: Tensor, source=None, storage_offset: int | None = None, size=None, stride=None) -> Tensor:
    """``t.set_(source)``: ``t`` becomes ``source``'s data (same storage, shape and strides; writes through either
    show in both); ``t.set_()``: an empty tensor; ``t.set_(storage, offset, size, stride)``: ``t`` views the
    storage's memory (a whole storage as 1-D without them). As PyTorch, a leaf that requires grad refuses (outside
    no_grad), and the dtypes must match. Differences from PyTorch: a tensor that is part of a recorded graph is
    refused, and a layout that reaches past the storage's end is an error (PyTorch grows the storage), as is a
    tensor given with an offset or size."""
    from .autograd.grad_mode import is_grad_enabled

    if t.requires_grad and is_grad_enabled():
        if t.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("set_ on a tensor that is part of a recorded graph is not supported by ember")
    if source is None:
        t._data = xp.empty((0,), t._data.dtype)
        t._bump_version()  # (an inference tensor outside inference mode: PyTorch's error, after the change)
        return t
    if isinstance(source, (UntypedStorage, TypedStorage)):
        return _set_storage(t, source, storage_offset, size, stride)
    if not isinstance(source, Tensor) or storage_offset is not None:
        raise NotImplementedError(f"set_({type(source).__name__}): ember sets a tensor from a storage, or from another "
                                  "tensor without an offset, size and stride")
    if source._data.dtype != t._data.dtype:
        raise RuntimeError(f"Could not set tensor of type {CPP_TYPE_NAMES[source.dtype.name]} to a tensor of type "
                           f"{CPP_TYPE_NAMES[t.dtype.name]}")  # the C++ names, as PyTorch's message gives them
    own = t._vc
    t._data, t._vc = source._data, source._vc  # an alias: in-place changes through either bump one version
    if own.__class__ is not list:  # an inference tensor stays one; outside inference mode, PyTorch's error after
        t._vc = own  # the change (its version bump refuses)
        check_inference_inplace(own)
    t._bump_version()
    return t


def _set_storage(t: Tensor, storage, offset: int | None, size, stride) -> Tensor:
    """``t`` as the elements of ``storage``'s memory at element ``offset`` with ``size`` and ``stride`` (contiguous
    strides by default; the whole storage as 1-D without a size), sharing that memory."""
    import math

    from ._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES
    from ._meta import contiguous_strides

    dtype = t.dtype
    if isinstance(storage, TypedStorage) and storage.dtype != dtype:
        raise RuntimeError(f"Expected a Storage of type {CPP_TYPE_NAMES[dtype.name]} or an UntypedStorage, but got "
                           f"type {SCALAR_TYPE_NAMES[storage.dtype.name]} for argument 1 'storage'")
    root = storage._root
    elements = root.nbytes // dtype.itemsize
    offset = 0 if offset is None else operator.index(offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    size = (elements,) if size is None else tuple(operator.index(n) for n in size)
    stride = contiguous_strides(size) if stride is None else tuple(operator.index(n) for n in stride)
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if math.prod(size) else 0
    if needed > elements:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {dtype.itemsize} requiring a storage size of {needed * dtype.itemsize} are out "
                           f"of bounds for storage of size {root.nbytes} (ember does not grow a storage)")
    layout = layout_in_storage(root, root)
    if layout is None:
        raise RuntimeError("set_: this storage's memory is not one block (a gradient store's pieces)")
    t._data = view_into(storage_bytes(root), dtype, offset * dtype.itemsize, size,
                        tuple(s * dtype.itemsize for s in stride))
    t._bump_version()
    return t
