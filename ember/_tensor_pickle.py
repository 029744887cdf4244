"""How ``pickle`` and ``copy.deepcopy`` see a tensor (PyTorch's semantics).

``pickle.dumps(t)`` copies the bytes of ``t``'s whole storage together with
where ``t`` lies in it (storage offset, shape, strides), as PyTorch pickles a
storage and a view of it: a loaded view has the strides and ``storage_offset``
it had, in a storage of its own. The dtype (bfloat16 included), the class
(``Parameter``, ``nn.Buffer``, a subclass) and ``requires_grad`` come back;
``.grad`` does not (PyTorch leaves it behind too). A non-leaf tensor that
requires grad loads as a leaf that requires grad, as in PyTorch.

Sending a tensor to another process through ``ember.multiprocessing`` shares its
memory instead of copying it (``ember/_shared_memory.py``). Checkpoints written
by ``ember.save`` never hold pickled tensors: ``ember.load`` runs no code.
"""

from __future__ import annotations

from typing import Any

from . import _dtype
from ._backend import xp
from ._shown_name import class_at, ember_path
from .storage import data_ptr, root_array, storage_key, storage_root


def layout_in_storage(array, root=None) -> tuple[Any, int, tuple, tuple] | None:
    """``(root, byte offset, shape, byte strides)`` of ``array`` in the memory it lies in (``root``: its root array
    unless given); None when that memory is not one contiguous block (then its bytes cannot be copied in memory
    order)."""
    root = root_array(array) if root is None else root
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    return root, data_ptr(array) - data_ptr(root), array.shape, array.strides


def storage_bytes(root):
    """``root``'s memory as flat uint8, in memory order, sharing it (``root`` is contiguous)."""
    return root.reshape(-1, order="A").view(xp.uint8)


def view_into(buffer, dtype: _dtype.dtype, offset: int, shape: tuple, strides: tuple):
    """The array of ``dtype`` at byte ``offset`` of the uint8 array ``buffer`` with byte ``strides``, sharing it."""
    return xp.ndarray(shape, dtype=dtype.np, buffer=buffer, offset=offset, strides=strides)


def reduce_tensor(t, share: bool = False) -> tuple:
    """``t.__reduce_ex__``: rebuild from a copy of the storage's bytes and ``t``'s place in it; ``share``: from the
    storage's bytes themselves (``copy.copy``)."""
    from ._sparse import SparseTensor

    if isinstance(t, SparseTensor):
        coo = t._data
        return _rebuild_sparse, (type(t), coo.indices, coo.values, coo.shape, coo.coalesced)
    layout = layout_in_storage(t._data, storage_root(t._data))  # (a .grad: only its own bytes, as PyTorch's)
    if layout is None:  # memory NumPy lent from elsewhere in pieces: send this tensor's own elements
        array = xp.ascontiguousarray(t._data)
        layout = array, 0, array.shape, array.strides
    root, offset, shape, strides = layout
    state = {"requires_grad": t.requires_grad, **extra_state(t)}
    # (ember's classes by their ember path: a pickle made where torch is ember loads where it is not)
    buffer = storage_bytes(root)
    return _rebuild_tensor, (ember_path(type(t)), buffer if share else buffer.copy(), t.dtype, offset, shape, strides,
                             state)


def shallow_copy(t):
    """``copy.copy(t)`` as PyTorch's: rebuilt as a pickle rebuilds it (a leaf of ``t``'s class with its
    ``requires_grad`` and attributes, no ``.grad``), but on ``t``'s memory, which the copy shares: an in-place
    change to one shows in the other (PyTorch's copy takes the same storage object)."""
    rebuild_from, args = reduce_tensor(t, share=True)
    return rebuild_from(*args)


_NON_LEAF_DEEPCOPY = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)


def deepcopy_array(t, memo: dict):
    """The array of ``copy.deepcopy(t)``: a copy of ``t``'s storage, made once per deepcopy (views copied together
    share the new storage, as in PyTorch), with ``t``'s offset and strides. A non-leaf tensor is refused as
    PyTorch refuses it."""
    if t.grad_fn is not None:
        raise RuntimeError(_NON_LEAF_DEEPCOPY)
    layout = None if t.is_sparse else layout_in_storage(t._data, storage_root(t._data))
    if layout is None:
        return t._data.copy()
    root, offset, shape, strides = layout
    copied = memo.get(storage_key(root))
    if copied is None:
        copied = memo[storage_key(root)] = storage_bytes(root).copy()
        memo.setdefault(id(memo), []).append(root)  # keeps its storage_key from being reused while the memo lives
    return view_into(copied, t.dtype, offset, shape, strides)


def extra_state(t) -> dict:
    """A subclass's own attributes (its ``__dict__`` and the slots it adds), which PyTorch pickles as well."""
    from ._tensor import Tensor

    state = dict(getattr(t, "__dict__", {}))
    for klass in type(t).__mro__:
        if klass is Tensor:
            break
        for name in klass.__dict__.get("__slots__", ()):
            if not name.startswith("__") and hasattr(t, name):
                state[name] = getattr(t, name)
    return state


def rebuild(cls, array, state: dict):
    """A tensor of class ``cls`` around ``array`` (a leaf), with ``state``'s ``requires_grad`` and attributes."""
    from ._tensor import _fill

    if isinstance(cls, str):
        cls = class_at(cls)
    t = cls.__new__(cls)
    _fill(t, array, None, 0)
    state = dict(state)
    t.requires_grad = state.pop("requires_grad")
    for name, value in state.items():
        setattr(t, name, value)
    return t


def _rebuild_tensor(cls, buffer, dtype: _dtype.dtype, offset: int, shape: tuple, strides: tuple, state: dict):
    return rebuild(cls, view_into(buffer, dtype, offset, shape, strides), state)


def _rebuild_sparse(cls, indices, values, shape: tuple, coalesced: bool):
    from ._sparse import SparseCOO

    return cls.wrap(SparseCOO(indices, values, shape, coalesced))
