"""Saved-tensor hooks: ``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)``.

While the context is active, every array a recorded op saves for its backward is handed to ``pack_hook``
(as a tensor) and the op keeps whatever that returns instead; just before the op's backward runs,
``unpack_hook`` turns it back into the tensor. Activation checkpointing (``ember.utils.checkpoint``) is
built on this: its pack hook keeps an index and drops the array, its unpack hook recomputes the forward.

The hooks apply where ops record: ``Node._record`` packs (only when a context is active: one list check per
recorded op otherwise, ``_stack.hooks``), the engine unpacks (``unpack_saved``). Contexts nest; the innermost applies.
As in PyTorch, they belong to the thread that entered them.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

from .._backend import xp
from .._size import broadcast_mismatch
from .._tensor import Tensor
from .lowp import to_float32


class _Stack(threading.local):
    def __init__(self) -> None:
        self.hooks: list[tuple[Callable, Callable] | None] = []  # None: hooks disabled from here in
        self.disabled: list[str] = []  # the messages of the active disable_saved_tensors_hooks


_stack = _Stack()


def active():
    """The innermost (pack, unpack) pair, or None."""
    hooks = _stack.hooks
    return hooks[-1] if hooks else None


class _Packed:
    """What a node keeps for one saved array while hooks are active: the pack hook's result and its unpacker."""

    __slots__ = ("value", "unpack", "transposed", "widened", "shape", "leaf")

    def __init__(self, value: Any, unpack: Callable, transposed: bool = False, widened: bool = False,
                 shape: tuple = (), leaf: bool = False) -> None:
        # transposed: what was packed is the array's transpose, as PyTorch's node saves it (``weight.t()``);
        # widened: forward saved a float32 copy of the half-precision tensor packed (lowp.py); shape: the packed
        # tensor's; leaf: it was a leaf that requires grad (PyTorch's unpacked one is made to require grad again)
        self.value, self.unpack, self.transposed, self.widened = value, unpack, transposed, widened
        self.shape, self.leaf = shape, leaf


def pack_saved(saved: tuple, hooks: tuple[Callable, Callable], unread: type, order: tuple[int, ...] = (),
               transposed: tuple[int, ...] = (), given: dict | None = None) -> tuple:
    """``saved`` with every array replaced by its packed form (not the stand-ins, of type ``unread``, for
    entries that no computed gradient reads: PyTorch does not save those). The pack hook sees the entries at
    the positions in ``order`` first (``pack_order``), then the others in ``saved``'s order; an entry at a
    position in ``transposed`` as its transpose (a view), as PyTorch's node saves ``weight.t()`` (``Linear``),
    transposed back when unpacked; an entry at a position in ``given`` as the tensor there (the node's input
    itself, as PyTorch's pack hook gets it; where forward saved a float32 copy of it, widened when unpacked)."""
    pack, unpack = hooks
    packed = list(saved)
    for k in (*order, *(k for k in range(len(saved)) if k not in order)):
        a = saved[k]
        if isinstance(a, xp.ndarray) and type(a) is not unread:
            t = given.get(k) if given else None
            leaf = t is not None and t._requires_grad and t._grad_fn is None
            if k in transposed:
                packed[k] = _Packed(pack(Tensor._make((a if t is None else t._data).T)), unpack, True,
                                    t is not None and a is not t._data, a.shape[::-1], leaf)
            elif t is not None:
                packed[k] = _Packed(pack(t), unpack, widened=a is not t._data, shape=t._data.shape, leaf=leaf)
            else:
                packed[k] = _Packed(pack(Tensor._make(a)), unpack, shape=a.shape)
    return tuple(packed)


_PACK_ORDERS: dict[type, tuple[int, ...]] = {}


def pack_order(cls: type) -> tuple[int, ...]:
    """The positions in ``saved`` of a node class's declared saved tensors (its ``_saved_<name>`` descriptors,
    ``saved_attributes.saved_tensor``) in the order of their names, the order in which PyTorch's generated nodes
    save their variables, so that its pack hooks see them: ``mm``'s ``mat2`` before ``self``, ``clamp``'s ``max``,
    ``min``, ``self``. Worked out once per class."""
    order = _PACK_ORDERS.get(cls)
    if order is None:
        positions = []
        for name in sorted(n for n in dir(cls) if n.startswith("_saved_")):
            position = getattr(inspect.getattr_static(cls, name), "position", None)
            if type(position) is int and position not in positions:
                positions.append(position)
        order = _PACK_ORDERS[cls] = tuple(positions)
    return order


def unpack_saved(saved: tuple, widen: bool = True) -> tuple:
    """The arrays back from ``pack_saved``'s result (each unpack hook must return a tensor); ``widen``: as forward
    saved them (float32 where it saved a float32 copy of a half-precision tensor), else as the tensors packed."""
    out, unpacked = [], []
    for item in saved:
        if type(item) is _Packed:
            t = item.unpack(item.value)
            if not isinstance(t, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                                f"{type(t).__name__}")
            unpacked.append((t, item))
            data = t._data.T if item.transposed else t._data
            item = to_float32([data], data.dtype)[0] if item.widened and widen and data.dtype.itemsize == 2 else data
        out.append(item)
    for t, item in unpacked:  # (once all are unpacked: PyTorch's formula fails after its engine unpacked each)
        _check_unpacked(t, item)
    return tuple(out)


def _check_unpacked(t: Tensor, item: _Packed) -> None:
    """PyTorch's errors for an unpacked tensor unlike the one packed, where ember's formula would meet NumPy's
    instead: PyTorch checks neither shape nor dtype, but its unpacked leaf is made to require grad again (an
    integer or bool one: that RuntimeError), and a shape that does not broadcast with the one saved fails in the
    formula (a pointwise one's RuntimeError, its wording here; another formula's, matmul's say, words it its own
    way). A shape that broadcasts is used as PyTorch's formula uses it."""
    if item.leaf and t._data.dtype.kind in "iub":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    shape = t._data.shape
    if shape != item.shape:
        mismatch = broadcast_mismatch([item.shape, shape])
        if mismatch is not None:
            raise RuntimeError(mismatch)


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> anything`` runs when an op saves a tensor for backward,
    ``unpack_hook(anything) -> tensor`` when backward needs it back. As PyTorch's."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _stack.disabled:
            raise RuntimeError(_stack.disabled[-1])
        _stack.hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack.hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's hooks that move saved tensors to (pinned) CPU memory; ember's tensors are on the CPU already,
    so the tensor is kept as it is."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Context manager under which registering saved-tensor hooks raises RuntimeError(``error_message``), as
    PyTorch's; hooks already active are not applied inside it."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> disable_saved_tensors_hooks:
        _stack.disabled.append(self.error_message)
        _stack.hooks.append(None)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack.hooks.pop()
        _stack.disabled.pop()
