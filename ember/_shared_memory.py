"""Tensors in memory several processes share: ``share_memory_``, ``is_shared``, and how they cross processes.

``t.share_memory_()`` moves ``t``'s storage into shared memory: an anonymous
memory file (``memfd``; an unlinked temporary file where the system has none)
mapped ``MAP_SHARED``. Every tensor that lies in the same storage (views,
``.data``, ``detach()``) is moved with it, so they stay views of each other, as
PyTorch's storage is one object they all point to. A process started with
``fork`` afterwards inherits the mapping: parent and child write the same memory.

Sending a tensor to another process through ``multiprocessing`` (a ``Queue``, a
``Pipe``, the ``args`` of a ``Process`` started with ``spawn`` or ``forkserver``,
``ember.multiprocessing.spawn``) sends the file descriptor, not the data, as
PyTorch's ``file_descriptor`` strategy does; a tensor not shared yet is moved
into shared memory first. The receiver maps the same memory (once per storage:
two tensors of one storage arrive as views of each other) and keeps the class
and ``requires_grad``; a non-leaf tensor that requires grad is refused, as in
PyTorch. The memory is freed when no process maps it any more: nothing is left
in ``/dev/shm``.

Differences from PyTorch: NumPy arrays taken from a tensor before it was moved
(``t.numpy()``) keep the old memory; sparse tensors cross processes as copies.
"""

from __future__ import annotations

import gc
import mmap
import os
import weakref
from collections.abc import Iterable
from multiprocessing import reduction as _reduction

from ._backend import xp
from ._tensor import Tensor
from ._tensor_pickle import extra_state, layout_in_storage, rebuild, reduce_tensor, storage_bytes, view_into
from ._uninitialized import UnmaterializedArray
from .storage import data_ptr, root_array


class _Segment(mmap.mmap):
    """A shared mapping of a memory file; the file descriptor lives (and is closed) with it."""

    fd: int
    nbytes: int


# The storages this process has mapped, by memory file ((st_dev, st_ino) -> the uint8 array over all of it),
# while some array uses them: a storage that arrives twice is mapped once, and its tensors stay views of each other.
_mapped: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _file_id(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _map(fd: int, nbytes: int):
    """The uint8 array over the first ``nbytes`` of memory file ``fd``, mapped shared; it owns ``fd`` from now."""
    segment = _Segment(fd, max(nbytes, 1), flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    segment.fd, segment.nbytes = fd, nbytes
    weakref.finalize(segment, os.close, fd)  # the mapping goes with the last array; the descriptor with it
    root = xp.frombuffer(segment, dtype=xp.uint8, count=nbytes)
    _mapped[_file_id(fd)] = root
    return root


def _new_shared(nbytes: int):
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("ember-shared-tensor", os.MFD_CLOEXEC)
    else:
        import tempfile  # (here, not at the top: it costs ``import ember`` more than the rest of this module)

        with tempfile.TemporaryFile() as f:  # unlinked at once: only descriptors keep it
            fd = os.dup(f.fileno())
    os.ftruncate(fd, max(nbytes, 1))
    return _map(fd, nbytes)


def _segment_of(array) -> _Segment | None:
    base = root_array(array).base
    obj = base.obj if isinstance(base, memoryview) else None
    return obj if isinstance(obj, _Segment) else None


def is_shared(t: Tensor) -> bool:
    """``t.is_shared()``: whether ``t``'s storage is in shared memory."""
    return not t.is_sparse and _segment_of(t._data) is not None


def move_storages(tensors: Iterable[Tensor], make_root) -> None:
    """Give each distinct storage of ``tensors`` the new root ``make_root(old_root)`` returns, and rebind every
    tensor of the process that lies in one of those storages to the same view of its new root.

    Every tensor of the process is found by one search of the heap (``gc``): moving a storage is rare (share_memory_,
    a growing resize_), and ember decides nothing by reference counts."""
    tensors = list(tensors)
    moved: dict[int, tuple] = {}  # id(old root) -> (old root, new root)
    for t in tensors:
        layout = layout_in_storage(t._data)
        if layout is None:
            raise RuntimeError("the memory of this tensor belongs to another object and cannot be moved")
        if id(layout[0]) not in moved:
            moved[id(layout[0])] = (layout[0], make_root(layout[0]))
    if not moved:
        return
    del layout
    for t in (o for o in gc.get_objects() if issubclass(type(o), Tensor)):
        if t.is_sparse or _stands_for_another(t):
            continue
        layout = layout_in_storage(t._data)
        if layout is None:
            continue
        root, offset, shape, strides = layout
        entry = moved.get(id(root))
        if entry is not None and entry[0] is root:
            t._data = view_into(entry[1], t.dtype, offset, shape, strides)


def _stands_for_another(t) -> bool:
    """Whether ``t`` holds no array of its own but stands for another tensor, which the heap search finds itself:
    vmap's examples (a BatchedTensor, whose ``_data`` is a property that refuses to be read, kept alive after its
    vmap by a caught exception's frames or by the user)."""
    return isinstance(getattr(type(t), "_data", None), property)  # (read on the class: the descriptor itself)


def _into_shared(root):
    new_root = _new_shared(int(root.nbytes))
    new_root[...] = storage_bytes(root)
    return new_root


def share_memory_(tensors: Iterable[Tensor]) -> None:
    """Move the storages of ``tensors`` not in shared memory yet into it (see the module docstring)."""
    move_storages([t for t in tensors if not t.is_sparse and _segment_of(t._data) is None], _into_shared)


# ----------------------------------------------------------------------------- crossing processes
_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support crossing "
    "process boundaries.  If you just want to transfer the data, call detach() on the tensor before serializing "
    "(e.g., putting it on the queue)."
)


def _reduce_shared(t: Tensor):
    """How ``multiprocessing`` pickles a tensor: its memory file (``_reduce_segment``) and its place in it."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if t.is_sparse:
        return reduce_tensor(t)
    if t._data.__class__ is UnmaterializedArray:  # an uninitialised parameter: no memory, made anew (its pickle)
        return t.__reduce_ex__(2)
    share_memory_([t])
    offset = data_ptr(t._data) - data_ptr(root_array(t._data))
    state = {"requires_grad": t.requires_grad, **extra_state(t)}
    return _rebuild_shared, (type(t), _segment_of(t._data), t.dtype, offset, t._data.shape, t._data.strides, state)


def _rebuild_shared(cls, root, dtype, offset: int, shape: tuple, strides: tuple, state: dict):
    return rebuild(cls, view_into(root, dtype, offset, shape, strides), state)


def _reduce_segment(segment: _Segment):
    """A memory file travels as a descriptor (once per message: pickle memoizes the segment, which all tensors of
    one storage name); the receiver maps it, or finds it mapped already."""
    return _rebuild_segment, (_reduction.DupFd(segment.fd), segment.nbytes)


def _rebuild_segment(dup_fd, nbytes: int):
    fd = dup_fd.detach()
    root = _mapped.get(_file_id(fd))
    if root is None:
        return _map(fd, nbytes)
    segment = _segment_of(root)
    if segment is None or segment.fd != fd:  # mapped here already (a storage this process sent, or received before)
        os.close(fd)
    return root


def register(cls: type) -> None:
    """Make ``multiprocessing`` send tensors of class ``cls`` this way (as ``import torch`` does for its tensors)."""
    _reduction.ForkingPickler.register(cls, _reduce_shared)


_reduction.ForkingPickler.register(_Segment, _reduce_segment)
register(Tensor)  # its subclasses register as they are defined (Tensor.__init_subclass__)
