"""Indexing: ``x[idx]``, ``x[idx] = v``, narrow/select, gather, index_select, where, masked_fill.

Indices may be ints, slices, None, Ellipsis, bool masks and integer tensors
(or lists). Basic indexing returns a view; advanced indexing a copy whose
backward accumulates repeated indices (``x[[0, 0]]`` sends both gradients to row 0).
"""

from __future__ import annotations

import builtins
import functools
import math
import operator

from .. import _dtype, _inference
from .._arg_aliases import refuse_numpy_array
from .._backend import quiet, xp
from .._dtype import SCALAR_TYPE_NAMES, category_dtype, scalar_category
from .._internal_overlap import overlaps, write_in_turn
from .._memory_format import contiguous_format, half_number, via_float32
from .._meta import (
    contiguous_strides,
    follow_view,
    is_meta,
    iterator_layout,
    meta_layout,
    nonzero_error,
    record_layout,
    refuse_meta,
    strides_at_size_one,
)
from .._meta import made as _meta_made
from .._out import overlaps_itself, refuse_setitem_overlap
from .._size import c_type_name, int_argument, leading_ones
from .._tensor import Tensor, _wrap_dim
from .._warnings import warn, warn_once
from ..autograd import forward_ad
from ..autograd import graph as _graph
from ..autograd.grad_mode import _GradState
from ..autograd.graph import Node, input_edge, shown_as, torch_named, unrecorded_view, version_checked
from ..autograd.recorded import RecordedArray
from ..autograd.saved_attributes import (
    NotSaved,
    as_unsigned,
    checked_argument,
    held_tensor,
    keep_dim_as_given,
    saved_dim,
    saved_tensor,
    unreleased,
)
from ..autograd.selected import selected_gradient
from ..storage import _bytes_of, data_ptr, root_array
from .copy_slices import (
    check_view_inplace,
    custom_function_view_error,
    mark_multi_output_views,
    record_copy_into,
    take_history,
)
from .elementwise import cast, promote, promoted
from .index_layout import laid_out


def _index_part(i):
    if isinstance(i, Tensor):
        a = i._data
        if a.dtype.kind not in "biu" or a.dtype.kind == "i" and a.dtype.itemsize == 1:
            raise IndexError(
                f"tensors used as indices must be long, int, byte or bool tensors, got {i.dtype}"
            )
        if a.dtype == xp.uint8:  # a byte tensor is a mask, as PyTorch (which warns, except for a 0-d one)
            if a.ndim:
                warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.")
            return a.astype(bool)
        if a.ndim == 0:  # a plain number to PyTorch (x[t] is a select, a view), read now: the tensor may move later
            return bool(a) if a.dtype.kind == "b" else int(a)
        return a
    if isinstance(i, (list, range)):
        a = xp.asarray(i)
        if a.dtype.kind not in "biu" and a.size:
            raise IndexError(f"list indices must hold ints or bools, got {i!r}")
        return a.astype(xp.int64) if a.size == 0 else a
    if isinstance(i, xp.integer):  # (a NumPy integer is PyTorch's number: a select, as an int)
        return int(i)
    if isinstance(i, float):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         "Variables are valid indices (got float)")
    return i


def sequence_as_tuple(idx):
    """``idx``, or ``tuple(idx)`` for a list PyTorch reads as several indices, one per dimension (with its
    deprecation warning): a list shorter than 32 holding a tensor, a sequence, a slice, ``...`` or None
    (``x[[i, j]]`` is ``x[i, j]``, ``x[[[0, 1]]]`` is ``x[[0, 1]]``); a list of numbers stays one index."""
    if idx.__class__ is not list or len(idx) >= 32:
        return idx
    for part in idx:
        if isinstance(part, (Tensor, list, tuple, range, slice, xp.ndarray)) or part is None or part is Ellipsis:
            warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                 "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                 "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result")
            return tuple(idx)
    return idx


def convert_index(idx):
    """Turn an ember index expression into one the array module understands."""
    if isinstance(idx, tuple):
        return tuple(_index_part(i) for i in idx)
    return _index_part(idx)


def _is_basic(idx) -> bool:
    parts = idx if isinstance(idx, tuple) else (idx,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) and not isinstance(p, bool)
               for p in parts)


def _pytorch_view(x, idx, strides=None) -> tuple[list, list, int]:
    """The sizes, strides and storage offset (in elements, the offset from x's first element) of PyTorch's view
    ``x[idx]`` for a basic index: its indexing's steps from left to right, an int selecting, a slice slicing (its
    bounds clamped into the dimension, the stride multiplied by the step, the offset moved to its start, also
    when it selects nothing), None unsqueezing (stride: the size times the stride of the dimension it goes
    before, 1 at the end). ``strides``: x's, in elements, where they are not its array's (a meta tensor's)."""
    parts = idx if idx.__class__ is tuple else (idx,)
    sizes, strides = list(x.shape), [s // x.itemsize for s in x.strides] if strides is None else list(strides)
    consumed = sum(p is not None and p is not Ellipsis for p in parts)
    offset = d = 0
    for p in parts:
        if p is Ellipsis:
            d += len(x.shape) - consumed
        elif p is None:
            sizes.insert(d, 1)
            strides.insert(d, sizes[d + 1] * strides[d] if d < len(strides) else 1)
            d += 1
        elif p.__class__ is slice:
            n, step = sizes[d], 1 if p.step is None else operator.index(p.step)
            start = 0 if p.start is None else operator.index(p.start)
            stop = n if p.stop is None else operator.index(p.stop)
            start, stop = start + n if start < 0 else start, stop + n if stop < 0 else stop
            start = builtins.min(builtins.max(start, 0), n)
            stop = builtins.min(builtins.max(stop, start), n)
            offset += start * strides[d]
            sizes[d], strides[d] = (stop - start + step - 1) // step, strides[d] * step
            d += 1
        else:  # an int
            i = operator.index(p)
            offset += (i + sizes[d] if i < 0 else i) * strides[d]
            del sizes[d], strides[d]
    return sizes, strides, offset


def _view_as_pytorch(x, idx, out):
    """``out = x[idx]`` selecting nothing, or with a new dimension (None), laid out as PyTorch's view
    (``_pytorch_view``): NumPy's empty slices restart at the dimension's start with step 1 (``x[5:5:2]``: offset
    0 and x's stride, where PyTorch's view has offset 5 rows and twice the stride), and its new dimensions have
    stride 0 (PyTorch's: the size times the stride of the dimension it goes before, ``x[None]`` of a contiguous
    x contiguous too). Unchanged where it cannot be: a meta array, a storage that is not one dense block, a
    negative stride, or an offset past the storage's end (PyTorch's ``x[::2][::2][5:5]`` of a short x starts
    there)."""
    if x.__class__ is not xp.ndarray or is_meta(x) or builtins.min(x.strides, default=0) < 0:
        return out
    root = root_array(x)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return out
    sizes, strides, offset = _pytorch_view(x, idx)
    if out.size and out.strides == tuple(s * x.itemsize for s in strides):
        return out
    view = view_at(x, root, sizes, strides, offset)
    return out if view is None else view


def view_at(x, root, sizes, strides, offset: int):
    """A view of ``x``'s storage ``root`` (one dense block) with ``sizes`` and ``strides`` (in elements) from
    ``offset`` elements past ``x``'s start, as writable as ``x``: an array NumPy's own views cannot give where it
    has no elements (NumPy moves an empty view's start back to its base's). None past the storage's end."""
    start = data_ptr(x) - data_ptr(root) + offset * x.itemsize
    if not 0 <= start <= root.nbytes:
        return None
    view = xp.ndarray(sizes, x.dtype, buffer=_bytes_of(root), offset=start, strides=[s * x.itemsize for s in strides])
    view.flags.writeable = x.flags.writeable
    return view


def basic_view(x, idx):
    """``x[idx]`` for a basic index, as PyTorch's view: always an array (NumPy's scalar of an int per dimension
    is a 0-d view instead), an empty one or one with new dimensions with PyTorch's strides and offset."""
    out = x[idx]
    if out.__class__ is not xp.ndarray:  # an int per dimension: NumPy's copied scalar, where PyTorch's is a view
        out = x[(*idx, ...) if type(idx) is tuple else (idx, ...)]
    elif not out.size or idx is None or idx.__class__ is tuple and None in idx:
        out = _view_as_pytorch(x, idx, out)
    if _meta_made[0] and is_meta(x):  # (PyTorch's layout, from the strides the meta tensor reports)
        _, strides, offset = _pytorch_view(x, idx, meta_layout(x)[0])
        follow_view(x, out, strides, offset)
    return out


class BasicIndex(Node):
    is_view = True
    label_varies = True  # (its name follows the index: name() below)

    def forward(self, x, idx):
        self.shape, self.dtype, self.idx = x.shape, x.dtype, idx
        return basic_view(x, idx)

    def backward(self, g):
        out = xp.zeros_like(g, shape=self.shape)  # (zeros_like: under create_graph, a recorded buffer)
        out[self.idx] = g
        return (out,)

    def name(self) -> str:
        """PyTorch's name for ``x[idx]``'s node (``basic_node``); a named subclass's own."""
        if type(self) is not BasicIndex:  # (a named subclass: x[idx]'s, split's pieces, narrow, select)
            return Node.name(self)
        return basic_node(self.idx).__name__


_ALL = slice(None)


_UNSET_END = 9223372036854775807  # (PyTorch's end of a slice without one: INT64_MAX)


def _one_step(node: BasicIndex) -> tuple[int, object]:
    """(the dim, the part) of the one step a slicing or selecting node takes (ember records ``x[1:3, 2]`` as two
    nodes, as PyTorch: each ``idx`` holds one step among whole slices and an Ellipsis), its dim counted in the
    node's input, as PyTorch's node saves it."""
    idx = node.idx if node.idx.__class__ is tuple else (node.idx,)
    step = max(k for k, part in enumerate(idx) if part.__class__ is int or part.__class__ is slice and (
        part != _ALL or len(idx) == 1))
    if Ellipsis in idx[:step]:  # (the dims after the step, each a whole slice's, counted from the end)
        return len(node.shape) - (len(idx) - step), idx[step]
    return step, idx[step]


class SliceBackward0(BasicIndex):
    """``x[:2]``, ``narrow``, ``tensor_split``'s pieces: the node under PyTorch's name, its saved attributes (the
    slice as given: a missing start 0, end INT64_MAX, step 1; a negative one read as unsigned, as PyTorch's)."""

    _saved_dim = property(lambda self: saved_dim(self, _one_step(self)[0]))  # (narrow's as given)
    _saved_start = property(lambda self: as_unsigned(_one_step(self)[1].start or 0))
    _saved_end = property(lambda self: as_unsigned(
        _UNSET_END if _one_step(self)[1].stop is None else _one_step(self)[1].stop))
    _saved_step = property(lambda self: _one_step(self)[1].step or 1)
    _saved_self_sym_sizes = property(lambda self: tuple(self.shape))


class SelectBackward0(BasicIndex):
    """``x[0]``, ``select``: its saved attributes as PyTorch's (a negative index read as unsigned)."""

    _saved_dim = property(lambda self: saved_dim(self, _one_step(self)[0]))  # (select's as given)
    _saved_index = property(lambda self: as_unsigned(_one_step(self)[1]))
    _saved_self_sym_sizes = property(lambda self: tuple(self.shape))


class UnsqueezeBackward0(BasicIndex):
    """``x[None]``: PyTorch's ``_saved_dim``, the new dimension's (counted in the result)."""

    @property
    def _saved_dim(self) -> int:
        idx = self.idx if self.idx.__class__ is tuple else (self.idx,)
        k = next(k for k, part in enumerate(idx) if part is None)
        if any(part is Ellipsis for part in idx[:k]):  # (the dims after it, each a whole slice's, from the end)
            return len(self.shape) + 1 - (len(idx) - k)
        return k


class AliasBackward0(BasicIndex):
    """``x[...]``, ``x[:, :]``: no step."""


_STEP_NODES = {int: SelectBackward0, slice: SliceBackward0, type(None): UnsqueezeBackward0}


def basic_node(idx) -> type[BasicIndex]:
    """The node class of ``x[idx]`` (a basic index, converted), PyTorch's (its ``type(...).__name__`` too): that of
    the last step its indexing takes (an int selects, a slice slices, None unsqueezes; full slices in a tuple and
    ``...`` are no step: an alias)."""
    if idx.__class__ is not tuple:
        return _STEP_NODES.get(idx.__class__, AliasBackward0)
    whole = len(idx) > 1  # (a lone full slice in a tuple slices, as x[:])
    for part in reversed(idx):  # (x[:, 1:3] is decided at its last part)
        node = _STEP_NODES.get(part.__class__)
        if node is not None and not (whole and node is SliceBackward0 and part == _ALL):
            return node
    return AliasBackward0


class SplitBackward0(BasicIndex):
    """A piece of ``split(size)`` and ``chunk`` recorded alone (a DTensor's, under forward AD: ``view_pieces``)."""


class SplitWithSizesBackward0(BasicIndex):
    """A piece of ``split([sizes])`` recorded alone."""


class UnbindBackward0(BasicIndex):
    """A piece of ``unbind`` recorded alone."""


class _Pieces(Node):
    """split / chunk / unbind recorded as PyTorch records them: one node for all the pieces (``a.grad_fn is
    b.grad_fn``), whose backward places the pieces' gradients in zeros of the input's shape; a piece that got
    none (unused) leaves zeros, and its tensor hooks are called with None, as PyTorch calls them. PyTorch's
    ``_saved_dim``: the dim as given (``keep_dim_as_given``), the pieces' (each index's last part) wrapped."""

    _saved_dim = property(lambda node: saved_dim(node, len(node.idxs[0]) - 1))

    def backward(self, *grads):
        first = next(g for g in grads if g is not None)  # (the engine runs no node without any gradient)
        out = xp.zeros_like(first, shape=self.shape)  # (zeros_like: under create_graph, a recorded buffer)
        for idx, g in zip(self.idxs, grads):
            if g is not None:
                out[idx] = g
        return (out,)


@torch_named("SplitBackward0")
class SplitPieces(_Pieces):
    split_size = None  # (the size given to split, and chunk's: ``shape.split``)
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))
    _saved_split_size = property(lambda node: node.split_size)


@torch_named("SplitWithSizesBackward0")
class SplitWithSizesPieces(_Pieces):
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))
    _saved_split_sizes = property(lambda node: tuple(_piece_length(idx[-1]) for idx in node.idxs))


@torch_named("UnbindBackward0")
class UnbindPieces(_Pieces):
    pass


def _piece_length(part: slice) -> int:
    """The length along its dim of a split piece's index part (``start:stop``)."""
    return part.stop - part.start


# the node of all the pieces -> the node of one piece alone, for what records views one node at a time
_ALONE = {SplitPieces: SplitBackward0, SplitWithSizesPieces: SplitWithSizesBackward0, UnbindPieces: UnbindBackward0}


def _is_dtensor(x: Tensor) -> bool:
    """Whether ``x`` is a DTensor (asked only once one was made: its module is loaded then)."""
    from ..distributed.tensor._api import DTensor

    return isinstance(x, DTensor)


def view_pieces(x: Tensor, idxs: list, cls: type) -> tuple:
    """The views ``x[idx]`` for each of ``idxs`` (basic indices), returned together as split / unbind return them:
    recorded as one ``cls`` node (a ``_Pieces``) when ``x`` requires grad in grad mode, marked as PyTorch's
    multi-output views (changing one in place is PyTorch's error). A DTensor and forward AD take
    one view node per piece (``_ALONE``), as does a tensor that needs no gradient."""
    label = cls.__name__.removesuffix("Backward0")
    # (a DTensor's ops go to its dispatcher, installed once one is made; other subclasses, a Parameter, are
    # recorded as a plain tensor is, whether or not a DTensor exists)
    dispatched = type(x) is not Tensor and _graph._dtensor_dispatch is not None and _is_dtensor(x)
    # (an inference tensor's pieces, as any view of it, record nothing: its counter is no plain list)
    if (not (_GradState.enabled and x._requires_grad) or dispatched or _graph._dual_level is not None
            or x._vc.__class__ is not list):
        alone = _ALONE[cls]
        # (split's pieces, slices of x, without their nodes where none is recorded: unbind's ints may need
        # BasicIndex's care of a 0-d piece)
        getitem = functools.partial(basic_view, x._data) if cls is not UnbindPieces else None
        pieces = []
        for idx in idxs:
            piece = None if getitem is None else unrecorded_view(x, getitem, idx, alone)
            pieces.append(piece if piece is not None else alone.apply(x, idx=idx))
        return mark_multi_output_views(tuple(pieces), label)
    a = x._data
    node = cls()
    node.shape, node.idxs = a.shape, idxs
    node.num_outputs = len(idxs)
    node.needs_input_grad = (True,)
    base = x._base if x._base is not None else x
    of_view = x._base is not None and x._view_creation is not None
    outs = []
    for nr, idx in enumerate(idxs):
        t = Tensor._make(basic_view(a, idx), node, nr)
        t._vc, t._base, t._view_version = x._vc, base, x._vc[0]
        # a piece of a view of a multi-output view (or of a no_grad view) carries that history, as Node.apply's
        t._view_creation = ("of", x._view_creation, label) if of_view else None
        outs.append(t)
    node._link((x,), (True,), outs)
    return mark_multi_output_views(tuple(outs), label)


@torch_named("IndexBackward0")  # (x[idx], x[mask]: PyTorch's index op)
class AdvancedIndex(Node):
    linear = True
    # (PyTorch's names of what its node saves: the index tensors and the input's shape)
    _saved_indices = property(lambda node: saved_indices(unreleased(node).idx, len(node.shape)))
    _saved_self_sym_sizes = property(lambda node: tuple(node.shape))

    def forward(self, x, idx):
        self.shape, self.idx = x.shape, idx
        return laid_out(x, idx, x[idx])

    def backward(self, g):
        out = xp.zeros_like(g, shape=self.shape)
        xp.add.at(out, self.idx, g)  # repeated indices accumulate
        if type(out) is RecordedArray:  # (create_graph: PyTorch's formula's node, _index_put_impl_'s, where the
            shown_as(out.t, "IndexPutImplBackward0")  # gradient records one: none where ``g`` needs no gradient)
        return (out,)


def saved_indices(idx, ndim: int) -> tuple:
    """PyTorch's ``_saved_indices`` of its index and index_put nodes for ``idx`` (converted, ``convert_index``) into
    a tensor of ``ndim`` dimensions: its index tensors in their places (a mask as itself), None for a dimension
    taken whole (``x[:, i]``: ``(None, i)``), the whole dimensions after the last tensor left out."""
    parts = idx if idx.__class__ is tuple else (idx,)
    spanned = builtins.sum(p.ndim if p.__class__ is xp.ndarray and p.dtype == xp.bool_ else 1
                           for p in parts if p is not Ellipsis and p is not None)
    out = []
    for p in parts:
        if p is Ellipsis:
            out.extend([None] * (ndim - spanned))
        elif p.__class__ is xp.ndarray:
            out.append(Tensor._make(p))
        elif p is not None:  # (a whole dimension: the views PyTorch takes first leave only these)
            out.append(None)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _bounds_error(x: Tensor, idx, err: IndexError) -> IndexError:
    """PyTorch's error for the index ``idx`` (converted, ``convert_index``) that NumPy refused with ``err``
    (``_pytorch_index_error``); where that finds none, NumPy's message in PyTorch's words ("dimension", not
    "axis"), with the tensor's shape."""
    found = _pytorch_index_error(x._data.shape, idx)
    if found is not None:
        return found
    if "(indexing a tensor of shape " in str(err):  # (the error of a step of the index, already in these words)
        return err
    if str(err).startswith("shape mismatch: indexing arrays could not be broadcast"):
        shapes = ", ".join(str(s) for s in _index_tensor_shapes(idx))
        return IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}")
    said = str(err).replace(" for axis ", " for dimension ")
    return IndexError(f"{said} (indexing a tensor of shape {list(x._data.shape)})")


def _index_tensor_shapes(idx) -> list:
    """The shapes of the index tensors PyTorch broadcasts together for ``idx`` (converted): each integer array's,
    and a k-dimensional mask as k tensors of its count of True (its nonzero())."""
    shapes = []
    for part in idx if idx.__class__ is tuple else (idx,):
        if isinstance(part, xp.ndarray) and part.ndim:
            if part.dtype == xp.bool_:
                shapes.extend([[int(part.sum())]] * part.ndim)
            else:
                shapes.append(list(part.shape))
    return shapes


def _pytorch_index_error(shape: tuple, idx) -> IndexError | None:
    """The error PyTorch's indexing gives for ``idx`` into a tensor of ``shape``, or None. PyTorch first applies the
    parts in order: an int (or 0-d integer tensor) selects, its error naming the part's position in the index
    (``...`` one position); a boolean mask's shape must match the dimensions it covers. Then the index tensors
    gather, an out-of-range one's error naming its place among them (a k-dimensional mask counts as k), not a
    dimension of the tensor. More parts than dimensions (not counting None and ``...``) is its error first."""
    parts = idx if idx.__class__ is tuple else (idx,)
    specified = sum(p.ndim if isinstance(p, xp.ndarray) and p.dtype == xp.bool_ else 1 for p in parts
                    if p is not None and p is not Ellipsis)
    if specified > len(shape):
        return IndexError(f"too many indices for tensor of dimension {len(shape)}")
    current, dim, ordinal, gathers = list(shape), 0, 0, []
    for position, part in enumerate(parts):
        if dim > len(current) or dim == len(current) and part is not None and part is not Ellipsis:
            return None  # (too many indices: NumPy's error stands)
        if part is None:
            current.insert(dim, 1)
            dim += 1
        elif part is Ellipsis:
            dim += len(shape) - specified
        elif isinstance(part, slice):
            dim += 1
        elif isinstance(part, bool) or isinstance(part, xp.ndarray) and part.dtype == xp.bool_ and not part.ndim:
            return None  # (True/False: an added dimension; not this error)
        elif isinstance(part, (int, xp.integer)) or isinstance(part, xp.ndarray) and not part.ndim:
            size, value = current[dim], int(part)
            if not -size <= value < size:
                return IndexError(f"index {value} is out of bounds for dimension {position} with size {size}")
            del current[dim]
        elif isinstance(part, xp.ndarray) and part.dtype == xp.bool_:
            for j, n in enumerate(part.shape):
                if dim + j >= len(current) or current[dim + j] != n:
                    return IndexError(f"The shape of the mask {list(part.shape)} at index {j} does not match the "
                                      f"shape of the indexed tensor {current} at index {dim + j}")
            ordinal += part.ndim
            dim += part.ndim
        elif isinstance(part, xp.ndarray) and part.dtype.kind in "iu":
            gathers.append((ordinal, part, current[dim]))
            ordinal += 1
            dim += 1
        else:
            return None
    for ordinal, part, size in gathers:
        why = out_of_bounds(part, size, ordinal, negative=True)
        if why:
            return IndexError(why)
    return None


def _zero_dim_error(x: Tensor, idx) -> IndexError | None:
    """PyTorch's own messages for an int or a slice into a 0-d tensor (old code's ``loss.data[0]``)."""
    if x._data.ndim or isinstance(idx, bool):
        return None
    if isinstance(idx, int):
        if idx:
            return IndexError(f"index {idx} is out of bounds for dimension 0 with size 0")
        return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                          "in C++ to convert a 0-dim tensor to a number")
    return IndexError("slice() cannot be applied to a 0-dim tensor.") if isinstance(idx, slice) else None


def _index_tensors(idx) -> list:
    """The tensors of an index expression (PyTorch saves them for the gradient of indexing and index_put)."""
    # (a 0-d integer or bool tensor is a plain number to PyTorch's indexing: nothing saved, a loop's counter may move)
    return [i for i in (idx if isinstance(idx, tuple) else (idx,))
            if isinstance(i, Tensor) and (i._data.ndim or i._data.dtype.kind == "f")]


# The parts of a basic index that need no conversion (by exact class: a bool is no int here, it is advanced).
_PLAIN_PARTS = frozenset({int, slice, type(None), type(Ellipsis)})


def _check_steps(idx) -> None:
    """PyTorch's slices step forward only (NumPy's negative steps would reverse silently)."""
    for part in idx if idx.__class__ is tuple else (idx,):
        if part.__class__ is slice and part.step is not None and part.step <= 0:
            raise ValueError("slice step cannot be zero" if part.step == 0 else "step must be greater than zero")


def _selects_first(idx) -> tuple | None:
    """PyTorch applies an index's numbers first, as selects, then its index tensors to what is left; NumPy counts
    the numbers among the advanced indices. The two place the indexed dimensions alike, except where the numbers
    alone part the index tensors from each other (or stand apart from the only one) across a slice: ``x[1, :, i]``
    is (x.shape[1], len(i)) to PyTorch, (len(i), x.shape[1]) to NumPy. For such an index (converted), the
    selecting part and the rest as PyTorch applies them, one after the other: ``(first, rest)``; else None."""
    if idx.__class__ is not tuple:
        return None
    numbers = indexes = False  # (decided by class first: every basic or advanced index passes here)
    for p in idx:
        c = p.__class__
        if c is int or isinstance(p, xp.integer):
            numbers = True
        elif c is xp.ndarray or c is bool:
            indexes = True
    if not (numbers and indexes):
        return None
    kinds = ["i" if isinstance(p, (int, xp.integer)) and not isinstance(p, bool) else
             "a" if isinstance(p, (xp.ndarray, bool)) else "b" for p in idx]

    def together(marks) -> bool:
        at = [k for k, m in enumerate(marks) if m]
        return at[-1] - at[0] + 1 == len(at)

    if together([k != "b" for k in kinds]) or not together([k == "a" for k in kinds if k != "i"]):
        return None
    # the numbers (and None's new dimensions) first, every other dimension kept whole; then the rest over those
    first = tuple(p if k == "i" or p is None or p is Ellipsis else
                  (slice(None),) * p.ndim if p.__class__ is xp.ndarray and p.dtype == xp.bool_ else slice(None)
                  for p, k in zip(idx, kinds))
    first = tuple(q for p in first for q in (p if p.__class__ is tuple else (p,)))
    return first, tuple(slice(None) if p is None else p for p, k in zip(idx, kinds) if k != "i")


def _rest_of(raw, idx, rest: tuple) -> tuple:
    """``rest`` in the caller's own parts (its index tensors, whose versions the result checks), numbers left out."""
    raw = raw if raw.__class__ is tuple else (raw,)
    return tuple(slice(None) if r is None else r for r, p in zip(raw, idx)
                 if not (isinstance(p, (int, xp.integer)) and not isinstance(p, bool)))


def getitem(x: Tensor, idx) -> Tensor:
    raw = idx
    # x[1], x[:2], x[:, 0]: a basic index of plain parts is already NumPy's, without convert_index and _is_basic
    # (a generator each, a frame per part)
    plain = idx.__class__ in _PLAIN_PARTS
    if not plain and idx.__class__ is tuple:
        plain = True
        for part in idx:
            if part.__class__ not in _PLAIN_PARTS:
                plain = False
                break
    if not plain:
        raw = idx = sequence_as_tuple(idx)
        idx = convert_index(idx)
    if idx.__class__ is tuple and _ellipses(idx) > 1:
        raw, idx = _one_ellipsis(x._data.ndim, raw), _one_ellipsis(x._data.ndim, idx)
    _check_steps(idx)
    try:
        if plain or _is_basic(idx):
            # (PyTorch records a view per step: only where two or more parts can be steps, a part neither ':'
            # nor '...', does that differ from one node)
            if idx.__class__ is tuple and x._requires_grad and _GradState.enabled:
                if len(idx) - idx.count(_ALL) - idx.count(Ellipsis) > 1:
                    return _stepwise(x, idx)
                return _one_step_node(x, idx).apply(x, idx=idx)
            return basic_node(idx).apply(x, idx=idx)
        if x._requires_grad and _GradState.enabled and (split := _views_first(x, idx)) is not None:
            return getitem(getitem(x, split[0]), _indexes_after_views(raw, idx))
        if x._requires_grad and _GradState.enabled and (split := _bool_first(idx, raw)) is not None:
            return getitem(getitem(x, split[0]), split[1])
        split = _selects_first(idx)
        if split is not None:  # PyTorch's order: the selects' view, then its index tensors (see _selects_first)
            return getitem(basic_node(split[0]).apply(x, idx=split[0]), _rest_of(raw, idx, split[1]))
        if _meta_made[0]:
            _refuse_meta_masks(idx)
        return version_checked(AdvancedIndex.apply(x, idx=idx), *_index_tensors(raw))
    except IndexError as err:
        raise (_zero_dim_error(x, raw) or _bounds_error(x, idx, err)) from None


def _ellipses(idx: tuple) -> int:
    """How many ``...`` the index tuple holds (by identity: its index tensors compare elementwise)."""
    n = 0
    for p in idx:
        if p is Ellipsis:
            n += 1
    return n


def _one_ellipsis(ndim: int, idx: tuple) -> tuple:
    """An index with several ``...`` as PyTorch reads it: each stands for the dimensions the other parts leave (so
    a second one steps past those already passed), as that many ':'; those past the last other part take nothing
    and go. (NumPy refuses a second ``...``.)"""
    parts = idx if idx.__class__ is tuple else (idx,)
    specified = 0
    for p in parts:
        if p is None or p is Ellipsis or p.__class__ is bool:
            continue
        specified += p.ndim if isinstance(p, (xp.ndarray, Tensor)) and p.dtype in (xp.bool_, _dtype.bool_) else 1
    out, filler = [], []
    for p in parts:
        if p is Ellipsis:
            filler.extend((_ALL,) * max(ndim - specified, 0))
        else:
            out.extend(filler)
            filler = []
            out.append(p)
    return tuple(out)


def _steps(shape: tuple, idx: tuple) -> list:
    """PyTorch's indexing steps for the basic index ``idx`` (converted) of a tensor of ``shape``, left to right,
    each an index of the previous step's result: a number selects, None unsqueezes, a slice narrower than its
    dimension slices; a whole dimension's slice and ``...`` are no step."""
    consumed = sum(p is not None and p is not Ellipsis for p in idx)
    steps, d, k = [], 0, 0  # (d: the dimension in the result so far, k: in the input)
    for p in idx:
        if p is Ellipsis:
            d += len(shape) - consumed
            k += len(shape) - consumed
        elif p is None:
            steps.append((*(_ALL,) * d, None))
            d += 1
        elif p.__class__ is slice:
            # (PyTorch's test of a whole dimension reads the start as given: [-n:] slices, [0:n + 5] does not)
            if k >= len(shape) or p.start not in (None, 0) or p.step not in (None, 1) or \
                    p.stop is not None and p.stop < shape[k]:
                steps.append((*(_ALL,) * d, p))
            d += 1
            k += 1
        else:
            steps.append((*(_ALL,) * d, p))
            k += 1
    return steps


def _one_step_node(x: Tensor, idx: tuple) -> type[BasicIndex]:
    """The node class of a recorded ``x[idx]`` whose tuple has one part besides ':' and '...': a slice of it that
    covers its whole dimension as written (``x[0:3, :]`` of 3 rows) is no step in PyTorch, an alias."""
    node = basic_node(idx)
    if node is SliceBackward0 and not _steps(x._data.shape, idx):
        return AliasBackward0
    return node


def _stepwise(x: Tensor, idx: tuple) -> Tensor:
    """``x[idx]`` (basic, recorded) as PyTorch records it: one view node per step (``_steps``), so ``x[0, :2]``'s
    history is SliceBackward0 then SelectBackward0; one step (or none) is one node as before."""
    steps = _steps(x._data.shape, idx)
    if len(steps) < 2:  # (one node for the whole index, named after its one step or none)
        return (basic_node(steps[0]) if steps else AliasBackward0).apply(x, idx=idx)
    basic_view(x._data, idx)  # (an index out of range: its error names x and the whole index)
    for step in steps:
        x = basic_node(step).apply(x, idx=step)
    return x


def _views_first(x: Tensor, idx: tuple):
    """For an index mixing index tensors with basic parts that take a step (``_steps``), those parts as PyTorch
    applies them first, as views, index tensors' dimensions kept whole: ``(views, rest)``; else None. (The rest
    applied to those views places the indexed dimensions as NumPy does on the whole index, except where
    ``_selects_first`` says.)"""
    if idx.__class__ is not tuple or any(p.__class__ is bool for p in idx):
        return None
    first = []
    for p in idx:
        if p.__class__ is xp.ndarray:
            first.extend((_ALL,) * (p.ndim if p.dtype == xp.bool_ else 1))
        else:
            first.append(p)
    first = tuple(first)
    return (first,) if _steps(x._data.shape, first) else None


def _bool_first(idx, raw=None):
    """For an index of numbers, slices, None, ``...`` and index tensors with bools (True, False, a 0-d bool tensor),
    PyTorch's steps: each bool a new dimension where it stands, in the view the basic parts make
    (UnsqueezeBackward0, Select, ...), then those dimensions indexed by a tensor of one position (True) or none
    (False) each, with the index tensors (``raw``'s own: their versions checked), one IndexBackward0:
    ``(views, rest)``; else None."""
    parts = idx if idx.__class__ is tuple else (idx,)
    raws = parts if raw is None else raw if raw.__class__ is tuple else (raw,)
    if bool not in {p.__class__ for p in parts} or not all(
            p is None or p is Ellipsis or p.__class__ in (int, slice, bool) or p.__class__ is xp.ndarray and p.ndim
            for p in parts):
        return None
    views = []
    for p in parts:  # (an index tensor's dimensions kept whole by the views: it indexes them after)
        if p.__class__ is xp.ndarray:
            views.extend((_ALL,) * (p.ndim if p.dtype == xp.bool_ else 1))
        else:
            views.append(None if p.__class__ is bool else p)
    rest = tuple(Tensor._make(xp.zeros(int(p), dtype=xp.int64)) if p.__class__ is bool else r
                 if p is Ellipsis or p.__class__ is xp.ndarray else _ALL
                 for p, r in zip(parts, raws) if p.__class__ is not int)
    return tuple(views), rest


def _indexes_after_views(raw, idx) -> tuple:
    """The index left once ``_views_first``'s views are taken, in the caller's own parts (its index tensors, whose
    versions the result checks): numbers gone, every slice and None a whole dimension."""
    raw = raw if raw.__class__ is tuple else (raw,)
    out = []
    for r, p in zip(raw, idx):
        if isinstance(p, (int, xp.integer)) and not isinstance(p, bool):
            continue
        out.append(_ALL if p is None or p.__class__ is slice else r)
    return tuple(out)


def _refuse_meta_masks(idx) -> None:
    """PyTorch's error for a meta boolean mask as an index: the positions it selects are its nonzero()'s."""
    for part in idx if idx.__class__ is tuple else (idx,):
        if part.__class__ is xp.ndarray and part.dtype == xp.bool_ and part.ndim and is_meta(part):
            raise nonzero_error()


# PyTorch's ``_saved_dim`` and ``_saved_index`` of its gather and scatter nodes (scatter's, gather's, scatter_add's)
SAVED_DIM = property(lambda node: saved_dim(node, node.dim))
SAVED_INDEX = property(lambda node: held_tensor(node, node.index))


@torch_named("IndexPutBackward0")
class IndexPut(Node):
    """``x[idx] = v``: the overwritten positions pass no gradient to the old x. Its ``idx`` and ``ndim`` (x's) are
    set by ``setitem``; scatter's node, shown as PyTorch's ScatterBackward0/1, also its ``dim`` and ``index``."""

    # (PyTorch's names of what its nodes save: index_put's indices and flag, scatter's dim and index)
    _saved_indices = property(lambda node: saved_indices(unreleased(node).idx, node.ndim))
    _saved_accumulate = False
    _scatter_saved = {"_saved_dim": SAVED_DIM, "_saved_index": SAVED_INDEX,
                      "_saved_indices": NotSaved("_saved_indices"), "_saved_accumulate": NotSaved("_saved_accumulate")}
    attributes_shown = {"ScatterBackward0": _scatter_saved, "ScatterBackward1": _scatter_saved}

    def backward(self, g):
        needs = self.needs_input_grad
        gx = None
        if needs[0] and type(g) is RecordedArray and "index" in self.__dict__:  # (scatter's node, create_graph:
            gx = RecordedArray(g.t.scatter(self.dim, Tensor._make(self.index), 0.0))  # PyTorch's formula's node)
        elif needs[0]:
            gx = g.copy()
            gx[self.idx] = 0
        if len(needs) == 1:  # (a number written by scatter: its node has the input's edge only)
            return (gx,)
        return gx, (self.source_grad(g[self.idx]) if needs[1] else None)

    def source_grad(self, gv):
        """The value's gradient from the gradient at the positions it was written to."""
        return gv


@torch_named("MaskedScatterBackward0")
class MaskedScatter(IndexPut):
    """masked_scatter's write (``written_copy_of``): the leading elements of ``source`` went to the mask's positions,
    so those get the gradient there, the rest of the source zero (``source_shape``)."""

    # (PyTorch's node saves the mask given and the source's sizes, not index_put's indices and flag)
    _saved_indices, _saved_accumulate = NotSaved("_saved_indices"), NotSaved("_saved_accumulate")
    _saved_mask = property(lambda node: unreleased(node).mask)
    _saved_source_sym_sizes = property(lambda node: tuple(node.source_shape))

    def backward(self, g):
        if type(g) is RecordedArray and self.needs_input_grad[0]:  # create_graph: PyTorch's formula for self,
            gx = RecordedArray(g.t.masked_fill(self.mask, 0.0))  # grad.masked_fill(mask, 0) (MaskedFillBackward0)
            return gx, (self.source_grad(g[self.idx]) if self.needs_input_grad[1] else None)
        return super().backward(g)

    def source_grad(self, gv):
        out = xp.zeros_like(gv, shape=(math.prod(self.source_shape),))
        out[:gv.shape[0]] = gv
        return out.reshape(self.source_shape)


def _leaf_in_place() -> str:
    """PyTorch's message (after "a " or "a view of a ")."""
    return "leaf Variable that requires grad is being used in an in-place operation."


def _indexes_a_view(x: Tensor, idx) -> bool:
    """Whether ``x[idx] = v`` writes through a view of ``x`` in PyTorch: its basic indices (a number, None, a
    bool, a 0-d tensor, a slice narrower than its dimension) are applied first as a view, wherever they stand
    among index tensors; whole-dimension slices, Ellipsis and index tensors or lists leave ``x`` itself, written
    by index_put_."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for i in items:
        if i is None or isinstance(i, (bool, int, xp.integer)) or isinstance(i, Tensor) and i._data.ndim == 0:
            return True

    def spans(i) -> int:  # the dimensions of x an index takes: a boolean mask's own, one for anything else
        data = i._data if isinstance(i, Tensor) else i
        return data.ndim if isinstance(data, xp.ndarray) and data.dtype == xp.bool_ else 1

    def narrows(i, dim: int) -> bool:
        return isinstance(i, slice) and 0 <= dim < x._data.ndim and \
            i.indices(x._data.shape[dim]) != (0, x._data.shape[dim], 1)

    # the dimensions are counted from the front up to an Ellipsis, from the back after it
    end = next((k for k, i in enumerate(items) if i is Ellipsis), len(items))
    dim = 0
    for i in items[:end]:
        if narrows(i, dim):
            return True
        dim += spans(i)
    dim = x._data.ndim
    for i in reversed(items[end + 1:]):
        dim -= spans(i)
        if narrows(i, dim):
            return True
    return False


def check_inplace(x: Tensor, tracked: bool, overlap_ok: bool = False) -> None:
    """PyTorch's rules for in-place ops; a view's history is made current for the op (ops/copy_slices.py).
    ``overlap_ok``: the op writes one value through elements that share memory (``fill_``), which PyTorch allows."""
    if not x._data.flags.writeable:
        check_writable(x, overlap_ok)
    if not _GradState.enabled:
        return
    if tracked and x.grad_fn is not None and x.grad_fn.returns_inputs:
        raise RuntimeError(custom_function_view_error(_graph.forward_op_name(x.grad_fn.name()), x._output_nr))
    base = x._base
    # (a view made under no_grad, returned with others (unbind) or by a custom Function: its error first, as
    # PyTorch's, which checks how a view was made before whether its base is a leaf)
    if base is not None and x._view_creation is not None:
        check_view_inplace(x, tracked)
    if x._requires_grad and x.grad_fn is None and (base is None or not base._requires_grad):
        raise RuntimeError(f"a {_leaf_in_place()}")  # (a view requiring grad through its base: the view's error)
    if base is not None:
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError(f"a view of a {_leaf_in_place()}")
        check_view_inplace(x, tracked)


def _memory_writable(a) -> bool:
    """Whether the memory under a read-only view is writable: its owner (the end of its ``base`` chain) is, so the
    view is read-only only as ``expand``'s broadcast made it (not a read-only NumPy array, nor ember's constants)."""
    while isinstance(a.base, xp.ndarray):
        a = a.base
    return a.flags.writeable


def _overlaps(a) -> bool:
    """Whether elements of the array share memory (``overlaps_itself``: an empty one's do not, PyTorch writes it in
    place); a meta tensor's do and are written in place freely (``ember/_meta.py``: there are no values)."""
    return overlaps_itself(a) and not is_meta(a)


def check_writable(x: Tensor, overlap_ok: bool = False) -> None:
    """An expanded tensor (elements sharing memory) or a read-only array cannot be written in place; a part of an
    expanded tensor whose elements do not overlap can (made writable here), and, with ``overlap_ok``, an expanded
    one (its writer makes it writable while it writes: ``inplace._fill_with``), as PyTorch."""
    a = x._data
    overlapping = _overlaps(a)
    if overlapping and not overlap_ok:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation."
        )
    if _memory_writable(a):
        if not overlapping:
            a.flags.writeable = True
        return
    raise RuntimeError("the tensor's memory is read-only (a tensor made from a read-only NumPy array?); "
                       "clone() it before writing in place")


def expanded_write_allowed(a, idx) -> bool:
    """Whether PyTorch writes ``a[idx] = value`` into ``a``, an array whose elements share memory (``expand``'s):
    an index with tensors in it is its ``index_put_``, which checks no overlap (one value may reach a location
    several times), while a basic index copies into the view ``a[idx]``, refused only where that view's own
    elements overlap (``x.expand(2, 3)[0] = 1`` writes, ``[:, 0]`` does not)."""
    parts = idx if idx.__class__ is tuple else (idx,)
    if idx is False or any(p.__class__ is xp.ndarray or idx.__class__ is tuple and isinstance(p, (bool, xp.bool_))
                           for p in parts):
        return True  # (False writes nothing; a bool among other indices is one of index_put_'s tensors)
    return not _overlaps(_part(a, idx))  # (a lone True: the view a.unsqueeze(0), which overlaps as a does)


def write_expanded(a, key, values, add: bool = False) -> None:
    """``a[key] = values`` into an array that ``expand`` made read-only, its memory being writable: the write
    PyTorch makes through the shared elements (``expanded_write_allowed``). ``add``: ``a[key] += values``, each
    position reached adding (``index_put_(accumulate=True)``)."""
    a.flags.writeable = True
    try:
        if add:
            xp.add.at(a, key, values)
        else:
            a[key] = values
    finally:
        a.flags.writeable = False


def _check_byte_mask_fill(idx, value) -> None:
    """PyTorch fills through one byte mask with a scalar by masked_fill_, which refuses a byte mask."""
    tensors = [i for i in (idx if isinstance(idx, tuple) else (idx,)) if isinstance(i, Tensor)]
    if (len(tensors) == 1 and tensors[0]._data.dtype == xp.uint8 and tensors[0]._data.ndim
            and (not isinstance(value, Tensor) or value._data.ndim == 0)):
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def assigned_value(x: Tensor, value):
    """``value`` of ``x[idx] = value`` as PyTorch's setitem reads it (a NumPy scalar: its Python number), or its
    TypeError for one neither a tensor nor a Python number: it takes a NumPy integer as an int, and
    np.float64/np.complex128 (Python float and complex types), but not an np.float32 or np.bool_ (where its
    arithmetic reads them as floats), a list or None."""
    if not isinstance(value, (Tensor, int, float, complex, xp.integer)):
        raise TypeError(f"can't assign a {c_type_name(value)} to a {x.type()}")
    return _dtype.parsed_number(value) if isinstance(value, xp.generic) else value


def setitem(x: Tensor, idx, value) -> None:
    idx = sequence_as_tuple(idx)
    _check_byte_mask_fill(idx, value)
    raw, idx = idx, convert_index(idx)
    if idx.__class__ is tuple and _ellipses(idx) > 1:
        raw, idx = _one_ellipsis(x._data.ndim, raw), _one_ellipsis(x._data.ndim, idx)
    if x._vc.__class__ is _inference.DetachedInferenceCounter and _through_a_view(x._data.shape, idx):
        if not _inference.state.enabled:  # (a view of it written: refused outside inference mode)
            raise RuntimeError(_inference.INPLACE_OUTSIDE)
    _check_steps(idx)
    # (a value that requires grad written into an integer or bool tensor records nothing: PyTorch's copy into a
    # dtype without gradients is not differentiable, so x keeps no history)
    tracked = _GradState.enabled and (x._requires_grad or isinstance(value, Tensor) and value._requires_grad
                                      and x._data.dtype.kind not in "biu")
    if tracked and x._requires_grad and x.grad_fn is None and _indexes_a_view(x, raw):
        raise RuntimeError(f"a view of a {_leaf_in_place()}")
    if tracked and x._requires_grad and x._data.dtype.kind in "biu" and _indexes_a_view(x, raw):
        # an integer or bool x with a history (filled in place from a value that requires grad): PyTorch writes
        # through a view of it, whose making records an integer result, which its autograd refuses (``y[0]``'s)
        raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE_NAMES[x.dtype.name]}")
    if tracked and not _only_basic(raw) and (split := _views_first(x, idx)) is not None:
        # PyTorch's order: index_put_ into the view its basic parts make, recorded as CopySlices around it
        return setitem(getitem(x, split[0]), _indexes_after_views(raw, idx), value)
    if tracked and not _only_basic(raw) and (split := _bool_first(idx, raw)) is not None:
        return setitem(getitem(x, split[0]), split[1], value)  # (bools: index_put_ into their unsqueezed view)
    split = _selects_first(idx)
    if split is not None:  # PyTorch's order: index_put_ into the selects' view (see _selects_first)
        return setitem(basic_node(split[0]).apply(x, idx=split[0]), _rest_of(raw, idx, split[1]), value)
    # (an expanded x, untracked: PyTorch writes where its index_put_ or the view's copy_ does)
    expanded = not tracked and not x._data.flags.writeable and _overlaps(x._data) and \
        expanded_write_allowed(x._data, idx)
    check_inplace(x, tracked, overlap_ok=expanded)
    basic = tracked and _only_basic(raw)  # PyTorch copies into a view of x (CopySlices), not index_put_
    if basic and isinstance(value, Tensor) and value._requires_grad:
        value = _copy_source(value, _part(x._data, idx).shape)
    elif tracked and isinstance(value, Tensor) and value._requires_grad:
        value = _withoutleading_ones(value)  # (index_put_'s values: PyTorch's setitem views them so first)
    if isinstance(value, Tensor):
        refuse_setitem_overlap(x._data, idx, value, raw.__class__ is not bool)
        varr = value._data
        if varr.dtype != x._data.dtype and value._requires_grad and not basic:
            value = cast(value, x.dtype)
            varr = value._data
        elif varr.__class__ is xp.ndarray:
            varr = via_float32(varr, x._data.dtype)
        if varr.__class__ is xp.ndarray and (lead := leading_ones(varr.shape)):
            varr = varr.reshape(varr.shape[lead:])  # (PyTorch's setitem views every value so: slicePrefix1sSize)
    else:
        # a number is PyTorch's scalar_tensor of x's dtype: past a half precision range stored as inf, silently;
        # past float32's or an integer dtype's range, or NaN for an integer one, its overflow error; an int is
        # read as an int64 first (past it, for any dtype, its ValueError)
        if value.__class__ is int and not -9223372036854775808 <= value <= 9223372036854775807:
            raise ValueError("Overflow when unpacking long long")
        value = _dtype.checked_scalar(value, x._data.dtype)
        with quiet():
            varr = half_number(value, x._data.dtype)
    try:
        with quiet():
            if expanded:
                write_expanded(x._data, idx, varr)
            elif not x._data.flags.c_contiguous and varr.__class__ is xp.ndarray and varr.ndim and \
                    _only_basic(raw) and overlaps(part := _part(x._data, idx)):
                # (a view whose elements share memory, as_strided's: PyTorch's copy_ into it keeps at each location
                # the last value its order writes there)
                write_in_turn(part, lambda c: varr, (varr,), reads=False)
            else:
                x._data[idx] = varr
    except IndexError as err:
        raise _bounds_error(x, idx, err) from None
    except (ValueError, TypeError) as err:
        if err.__class__ is TypeError and "boolean array indexing assignment" not in str(err):
            raise  # (NumPy's TypeError stands but for a mask given a value of more than one dimension)
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(xp.shape(varr))} cannot be broadcast to indexing result "
            f"of shape {list(_indexed_shape(x._data, idx))}"
        ) from None
    x._bump_version()
    forward_ad.write_tangent_at(x, idx, value)
    if basic and raw is not False:  # (x[False] = v writes nothing, and PyTorch records nothing)
        part = _part(x._data, idx)
        stepped = part.shape == x._data.shape and bool(_steps(x._data.shape, idx if idx.__class__ is tuple else (idx,)))
        record_copy_into(x, part, value, isinstance(value, Tensor) and value._requires_grad, stepped)
    elif tracked and not basic:
        node = IndexPut()
        node.idx, node.ndim = idx, x._data.ndim
        inputs = (x, value)
        needs = (x._requires_grad, isinstance(value, Tensor) and value._requires_grad)
        node.needs_input_grad = needs
        node._link(inputs, needs, ())
        node.check_versions_of(*_index_tensors(raw))
        take_history(x, Tensor._make(x._data, node))


def _through_a_view(shape: tuple, idx) -> bool:
    """Whether PyTorch's ``x[idx] = v`` writes through a view of ``x`` (a basic part that takes a step, ``_steps``;
    a bool unsqueezes), rather than into ``x`` itself (``x[...] = v``, ``x[:] = v``, ``x[mask] = v``'s index_put_)."""
    first = []
    for p in idx if idx.__class__ is tuple else (idx,):
        if p.__class__ is xp.ndarray:
            first.extend((_ALL,) * (p.ndim if p.dtype == xp.bool_ else 1))
        else:
            first.append(None if p.__class__ is bool else p)
    return bool(_steps(shape, tuple(first)))


def _only_basic(raw) -> bool:
    """Whether every index is basic in PyTorch's setitem (a number, a slice, None, Ellipsis, a 0-d integer tensor, a
    lone bool): it then copies the value into the view they make (``x`` itself where they narrow nothing). A bool
    among several indices is an index tensor to PyTorch (its index_put_)."""
    for i in raw if raw.__class__ is tuple else (raw,):
        if raw.__class__ is tuple and isinstance(i, (bool, xp.bool_)):
            return False
        if isinstance(i, Tensor):
            if i._data.ndim or i._data.dtype.kind not in "iu":
                return False
        elif not (i is None or i is Ellipsis or isinstance(i, (bool, int, xp.integer, slice))):
            return False
    return True


def _part(a, idx):
    """``a[idx]`` for basic indices as a view, also where NumPy would give a single element as a scalar (a lone True
    is PyTorch's unsqueeze(0), where NumPy's would be a mask, whose result is a copy)."""
    if idx is True or idx.__class__ is xp.bool_:
        return a[None]
    parts = idx if idx.__class__ is tuple else (idx,)
    return a[parts] if any(i is Ellipsis for i in parts) else a[(*parts, Ellipsis)]


def _copy_source(value: Tensor, shape: tuple) -> Tensor:
    """The source PyTorch's setitem copies from (``copy_to``): the value itself when it has the destination's
    shape or none, else viewed without its leading ones and expanded to that shape (recorded, as PyTorch's)."""
    if value._data.shape == shape or not value._data.ndim:
        return value
    have = value._data.shape
    value = value.view(have[leading_ones(have):])
    return value if value._data.shape == shape else value.expand(shape)


def _withoutleading_ones(value: Tensor) -> Tensor:
    """``value`` viewed without its leading dimensions of size 1 (recorded, ViewBackward0), as PyTorch's setitem
    views every tensor it writes (``slicePrefix1sSize``); itself where it has none."""
    have = value._data.shape
    lead = leading_ones(have)
    return value.view(have[lead:]) if lead else value


def _indexed_shape(a, idx) -> tuple:
    """The shape of ``a[idx]`` (for an error message: advanced indices gather a copy)."""
    try:
        return _part(a, idx).shape
    except (IndexError, ValueError, TypeError):
        return a.shape


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    length = int_argument(length, "narrow", "length")
    if start.__class__ is not int and not isinstance(start, Tensor):  # (a 0-d integer tensor: PyTorch's overload)
        start = int_argument(start, "narrow", "start")
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return keep_dim_as_given(SliceBackward0.apply(x, idx=idx), dim)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x.shape)} at dimension {d}")
    return keep_dim_as_given(SelectBackward0.apply(x, idx=(slice(None),) * d + (index,)), dim)


@torch_named("GatherBackward0")
class Gather(Node):
    linear = True
    # (PyTorch's names of what its node saves; ember's formula reads only the input's shape, PyTorch's node keeps
    # the input too: ember keeps it as an argument whose version is checked, ``gather``)
    _saved_dim, _saved_index = SAVED_DIM, SAVED_INDEX
    _saved_self = property(lambda node: checked_argument(node, 0, 0))
    _saved_sparse_grad = False  # (ember's gather has no sparse gradient)

    def forward(self, x, index, dim):
        self.shape, self.index, self.dim = x.shape, index, dim
        if not x.ndim:  # a 0-d tensor gathers as a vector of one element, in PyTorch's one node
            return gather_array(x.reshape(1), index.reshape(-1), 0).reshape(index.shape)
        return gather_array(x, index, dim)

    def backward(self, g):
        shape, index = self.shape, self.index
        if not shape:  # (a 0-d input's: as a vector of one element's)
            shape, index, g = (1,), index.reshape(-1), g.reshape(-1)
        if type(g) is RecordedArray:  # (create_graph: recorded as PyTorch's formula, a scatter_add into zeros)
            into = Tensor._make(xp.zeros(shape, dtype=g.dtype))
            out = RecordedArray(into.scatter_add(self.dim, Tensor._make(index), g.t))
        else:
            out = xp.zeros_like(g, shape=shape)
            _scatter_add_into(out, self.dim, index, g)
        return (out if self.shape else out.reshape(()),)  # (a 0-d input: its gradient 0-d again)


def gather_array(x, index, dim: int):
    """``x[..., index[i], ...]`` along ``dim``, of index's shape: an index smaller than ``x`` in another dimension
    reads that leading block, as PyTorch's gather (NumPy's take_along_axis would broadcast the index instead)."""
    block = tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(index.shape))
    return xp.take_along_axis(x[block], index, axis=dim)


def _scatter_add_into(out, dim: int, index, src) -> None:
    """out[..., index[i], ...] += src[i] along ``dim`` (repeats accumulate)."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index
    xp.add.at(out, tuple(grids), src)


def _check_index(index: Tensor, name: str):
    """The index array of gather, index_select or the scatter family: int32 or int64 only, as PyTorch's kernels
    (int16, uint8 refused too), in its words (the scatter family's all name scatter)."""
    if not isinstance(index, Tensor) or index._data.dtype not in _INDEX_DTYPES:
        refuse_numpy_array(name, index, "index", 2)  # (an array: PyTorch's parser refuses it first, TypeError)
        which = "int32 or int64" if name == "index_select" else "int32/int64"
        raise RuntimeError(f"{'scatter' if name.startswith('scatter') else name}(): Expected dtype {which} for index")
    return index._data


_INDEX_DTYPES = (xp.dtype(xp.int32), xp.dtype(xp.int64))


def out_of_bounds(idx, size: int, dim: int, negative: bool = False) -> str | None:
    """Why ``idx`` (an integer array) does not fit a dimension of ``size``, or None: PyTorch's check, where
    NumPy would wrap a negative index silently. ``negative``: -size..-1 count from the end (take, index_fill,
    plain indexing); otherwise 0..size-1 only (gather, scatter, index_select, index_add, index_copy).
    One min/max pass over the index."""
    if not idx.size:
        return None
    low, high, first = int(idx.min()), int(idx.max()), -size if negative else 0
    if low >= first and high < size:
        return None
    return f"index {low if low < first else high} is out of bounds for dimension {dim} with size {size}"


def check_scatter_index(x: Tensor, dim: int, idx, src=None) -> None:
    """gather/scatter's checks (RuntimeErrors): ``idx`` no larger than ``x`` in every dimension but ``dim``, and
    no larger than ``src`` (an array) in any; every index within dimension ``dim`` of ``x``, none negative.
    Only the leading block of ``x`` (and ``src``) that ``idx`` covers is used, as in PyTorch."""
    shape = x._data.shape
    if x._data.ndim and idx.ndim == len(shape) and any(n > shape[k] for k, n in enumerate(idx.shape) if k != dim):
        raise RuntimeError(f"Size does not match: expected index {list(idx.shape)} to be no larger than self "
                           f"{list(shape)} apart from dimension {dim}")
    if src is not None and src.ndim == idx.ndim and any(n > s for n, s in zip(idx.shape, src.shape)):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(shape)} apart from "
                           f"dimension {dim} and to be no larger size than src {list(src.shape)}")
    why = out_of_bounds(idx, shape[dim] if x._data.ndim else 1, dim)
    if why:
        raise RuntimeError(why)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    idx = _check_index(index, "gather")
    d = _wrap_dim(dim, x._data.ndim)
    # (a 0-d tensor gathers as a vector of one element, as in PyTorch: ``Gather``)
    if idx.ndim != x._data.ndim and not (x._data.ndim == 0 and idx.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    check_scatter_index(x, d, idx)
    out = keep_dim_as_given(Gather.apply(x, index=idx, dim=d), dim)
    return version_checked(out, x, index)  # (both saved by PyTorch's node)


@torch_named("ScatterAddBackward0")
class ScatterAdd(Node):
    _saved_dim, _saved_index = SAVED_DIM, SAVED_INDEX  # (PyTorch's names of what its node saves)

    def forward(self, x, src, index, dim):
        self.index, self.dim = index, dim
        out = x.copy()
        _scatter_add_into(out, dim, index, src)
        return out

    def backward(self, g):
        # src's gradient: g gathered at the index (src's leading part, index-shaped, is what was added)
        return g, (gather_array(g, self.index, self.dim) if self.needs_input_grad[1] else None)


def as_vector(op, x: Tensor, dim: int, index, src, **kwargs) -> Tensor:
    """``op(x, dim, index, src)`` for a 0-d ``x``: PyTorch's scatter kernels take a 0-d tensor (and a 0-d index or
    source) as a vector of its one element, dim 0 or -1; the result is 0-d again (recorded through a view of x,
    where PyTorch's node is the scatter's own)."""
    _wrap_dim(dim, 0)  # (PyTorch's error for another dim)
    if op in (scatter, scatter_add) and isinstance(index, Tensor) and not index._data.ndim \
            and isinstance(src, Tensor) and src._data.ndim and src._requires_grad and _GradState.enabled:
        # a 0-d index with a larger source: PyTorch's source gradient is 0-d, which its engine refuses
        src = _SourcePart.apply(src, part=(0,) * src._data.ndim,
                                node="ScatterBackward0" if op is scatter else "ScatterAddBackward0")

    def vector(t):
        return t.reshape(-1) if isinstance(t, Tensor) and t._data.ndim == 0 else t

    return op(x.reshape(1), 0, vector(index), vector(src), **kwargs).reshape(())


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if isinstance(x, Tensor) and x._data.ndim == 0:
        return as_vector(scatter_add, x, dim, index, src)
    _wrap_dim(dim, x._data.ndim)  # (PyTorch checks the dim before the index)
    idx = _check_index(index, "scatter_add")
    check_scatter_index(x, _wrap_dim(dim, x._data.ndim), idx, src._data)
    if src._data.shape != idx.shape:  # as in PyTorch, only src's leading part (index's shape) is used
        src = src[tuple(slice(0, n) for n in idx.shape)]
    return version_checked(keep_dim_as_given(
        ScatterAdd.apply(x, src, index=idx, dim=_wrap_dim(dim, x._data.ndim)), dim), index, reader=1)


def scatter(x: Tensor, dim: int, index: Tensor, src, *, reduce: str | None = None) -> Tensor:
    """Out-of-place scatter (no gradient to ``src`` through overwritten duplicates). ``reduce="add"``/``"multiply"``
    combine ``src`` with x's values (``scatter_``'s rule, on a copy); as in PyTorch that result has no derivative:
    it is recorded when an operand requires grad, and backward through it raises."""
    if isinstance(x, Tensor) and x._data.ndim == 0:
        return as_vector(scatter, x, dim, index, src, reduce=reduce)
    if reduce is not None:
        from ..autograd.grad_mode import no_grad
        from .elementwise import without_derivative
        from .index_update import scatter_

        with no_grad():  # (PyTorch's result is contiguous whatever x's layout)
            combined = scatter_(x.clone(memory_format=contiguous_format), dim, index, src, reduce=reduce)
        return without_derivative(combined, "scatter", x, src)
    d = _wrap_dim(dim, x._data.ndim)  # (PyTorch checks the dim before the index)
    idx = _check_index(index, "scatter")
    if isinstance(src, xp.ndarray):  # (a tensor or a number to PyTorch's parser, never an array)
        refuse_numpy_array("scatter", src, "src", 3)
    if isinstance(src, Tensor) and src._data.dtype != x._data.dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype, got {x.dtype} and {src.dtype}")
    check_scatter_index(x, d, idx, src._data if isinstance(src, Tensor) else None)
    out = x.clone(memory_format=contiguous_format)  # (PyTorch's result is contiguous whatever x's layout)
    grids = list(xp.indices(idx.shape, sparse=True))
    grids[d] = idx
    vals = src
    if isinstance(src, Tensor) and src._data.shape != idx.shape:  # (only src's leading part, index's shape)
        part = tuple(slice(0, n) for n in idx.shape)
        vals = _SourcePart.apply(src, part=part) if src._requires_grad and _GradState.enabled else src[part]
    setitem(out, tuple(Tensor._make(xp.broadcast_to(gr, idx.shape)) for gr in grids), vals)
    # (an index_put into a copy: one node, named as PyTorch's by a tensor source or a number)
    number = not isinstance(src, Tensor)
    out = shown_as(written_copy_of(x, out, number), "ScatterBackward1" if number else "ScatterBackward0")
    if out.grad_fn is not None:  # (read as PyTorch's node's ``_saved_dim`` and ``_saved_index``)
        out.grad_fn.dim, out.grad_fn.index = d, idx
        keep_dim_as_given(out, dim)
    return version_checked(out, index)


class _SourcePart(Node):
    """scatter's source larger than its index: its leading part, index-shaped, is written. PyTorch's scatter
    computes the source's gradient of the index's shape, which its engine refuses for a source of another shape
    (one it cannot be summed to): backward here is that error."""

    linear = True  # (forward-mode AD: the tangent's part, as the value's)

    def forward(self, src, part, node="ScatterBackward0"):
        self.shapes, self.node = (src.shape, src[part].shape), node
        return src[part]

    def backward(self, g):
        src_shape, got = self.shapes
        raise RuntimeError(f"Function {self.node} returned an invalid gradient at index 1 - got {list(got)} but "
                           f"expected shape compatible with {list(src_shape)}")


def written_copy_of(x: Tensor, out: Tensor, number: bool = False) -> Tensor:
    """``out``, an index write (``setitem``) into a copy of ``x`` (``x.clone()``, expanded first or not), its node
    reading ``x`` itself as PyTorch's one node does (scatter, index_put, masked_scatter record no CloneBackward0):
    its first edge is ``x``'s own (None where ``x`` needs no gradient, and a value-only node keeps only its
    value's), the gradient summed to ``x``'s shape down it. The copy's node passed the gradient on unchanged.
    ``number``: the value written was a Python number, for which PyTorch's node has no edge (ScatterBackward1); a
    tensor that needs no gradient keeps its None edge, as PyTorch's."""
    node = out.grad_fn
    if node is None:
        return out
    if x._requires_grad and _GradState.enabled:
        node.next_edges[0], node.input_shapes[0] = input_edge(x), x._data.shape
    else:
        node.next_edges[0], node.input_shapes[0] = None, None
        node.needs_input_grad = (False, *node.needs_input_grad[1:])
    if number and len(node.next_edges) > 1 and node.next_edges[1] is None and type(node).__name__ != "CopySlices":
        del node.next_edges[1:], node.input_shapes[1:]  # (a number written: PyTorch's node has no edge for it)
        node.needs_input_grad = node.needs_input_grad[:1]
    return out


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    idx = _check_index(index, "index_select")
    if idx.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got shape {list(index.shape)}")
    d = _wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    why = out_of_bounds(idx, x._data.shape[d] if x._data.ndim else 1, d)
    if why:  # PyTorch's error type depends on the dimension (two kernels)
        raise IndexError(f"index out of range in self: {why}") if d == 0 else RuntimeError(
            f"INDICES element is out of DATA bounds: {why}")
    # (a 0-d input keeps its index as given, 0-d or of one element, which PyTorch's node shows as ``_saved_index``)
    out = IndexSelect.apply(x, dim=d, index=idx if x._data.ndim == 0 else idx.reshape(-1))
    return version_checked(keep_dim_as_given(out, dim), index)


class IndexSelect(Node):
    """``index_select``, recorded as PyTorch's IndexSelectBackward0 (its saved ``dim``, ``index`` and input sizes
    readable as PyTorch's ``_saved_*``): the gradient of each selected slice summed into its place."""
    linear = True

    def forward(self, x, dim, index):
        self.shape, self.dim, self.index = x.shape, dim, index
        if not x.ndim:  # (a 0-d input, its index one element: the input itself, as PyTorch's, in its one node)
            return x.reshape(1)[index.reshape(-1)].reshape(())
        if is_meta(x):
            return x[(slice(None),) * dim + (index,)]
        return xp.take(x, index, axis=dim)  # (contiguous, as PyTorch's result; NumPy's x[:, index] is not)

    def backward(self, g):
        shape, index = self.shape, self.index
        if not shape:  # (a 0-d input's: as a vector of one element's)
            shape, index, g = (1,), index.reshape(-1), g.reshape(-1)
        if type(g) is RecordedArray:  # (create_graph: recorded as PyTorch's formula, an index_add into zeros)
            into = Tensor._make(xp.zeros(shape, dtype=g.dtype))
            out = RecordedArray(into.index_add(self.dim, Tensor._make(index), g.t))
        else:
            out = xp.zeros_like(g, shape=shape)
            xp.add.at(out, (slice(None),) * self.dim + (index,), g)  # repeated indices accumulate
        return (out if self.shape else out.reshape(()),)  # (a 0-d input: its gradient 0-d again)

    @property
    def _saved_dim(self) -> int:
        return saved_dim(self, self.dim)

    @property
    def _saved_index(self) -> Tensor:
        return held_tensor(self, self.index)

    @property
    def _saved_self_sym_sizes(self) -> tuple:
        return tuple(self.shape)


@torch_named("WhereBackward0")
class Where(Node):
    """``where(cond, a, b)``: the condition, which takes no gradient, is a parameter, not an input, so the node's
    next functions are PyTorch's two (``a``'s and ``b``'s)."""
    diagonal_jacobian = True
    own_layout = True
    _saved_condition, _raw_saved_condition = saved_tensor(0)  # (PyTorch's name of what its node saves)

    def forward(self, a, b, cond):
        self.saved = (cond,)  # (its version is checked as PyTorch's saved condition's: ``where``)
        return iterator_layout(xp.where(cond, a, b), (cond, a, b))  # (the condition first, as PyTorch's)

    def backward(self, g):
        (cond,) = self.saved
        na, nb = self.needs_input_grad
        # (PyTorch's where(cond, grad, 0) and where(cond, 0, grad): +0.0 on the side not taken, whatever g)
        return (selected_gradient(g, cond) if na else None), (selected_gradient(g, ~cond) if nb else None)


def where(condition: Tensor, input=None, other=None):
    if input is None and other is None:
        return tuple(Tensor._make(i.astype(xp.int64)) for i in xp.nonzero(condition._data))
    if isinstance(condition, Tensor) and condition._data.dtype == xp.uint8:  # as PyTorch: a mask, warned once
        warn_once("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                  "future version of PyTorch. Use a boolean condition instead.")
        condition = Tensor._make(condition._data != 0)
    if not isinstance(condition, Tensor) or condition._data.dtype != xp.bool_:
        got = f", but got a tensor with dtype {SCALAR_TYPE_NAMES[condition.dtype.name]}" \
            if isinstance(condition, Tensor) else ""
        raise RuntimeError(f"where expected condition to be a boolean tensor{got}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = Tensor._make(xp.asarray(input, dtype=category_dtype(scalar_category(input)).np))
    # an int beside an integer tensor is converted as a fill value (300 for int8: PyTorch's error, not wrapped)
    if input.__class__ is int and _dtype.np_kind(other._data.dtype) in "iu":
        input = _dtype.checked_fill(input, other._data.dtype)
    elif other.__class__ is int and _dtype.np_kind(input._data.dtype) in "iu":
        other = _dtype.checked_fill(other, input._data.dtype)
    a, b = promote(input, other)
    try:
        out = Where.apply(a, b, cond=condition._data)
    except (ValueError, RuntimeError) as err:  # (the recorder's message names a's and b's shapes, not the condition's)
        operands = tuple(v._data if isinstance(v, Tensor) else xp.asarray(v) for v in (a, b))  # (b may be a number)
        raise _graph.shape_error("where", (condition._data, *operands), err) from None
    return version_checked(out, condition)


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    return masked_fill_value(x, mask, value)


def masked_fill_value(x: Tensor, mask: Tensor, value, in_place: bool = False) -> Tensor:
    """``masked_fill``; ``in_place``: for ``masked_fill_``, which PyTorch records (MaskedFillBackward1) where an
    integer or bool ``x`` takes a value tensor that requires grad, the out-of-place form refusing it."""
    if not isinstance(mask, Tensor):  # (a NumPy array, a list: PyTorch's parser matches no overload)
        raise TypeError(f"masked_fill(): argument 'mask' (position 1) must be Tensor, not {c_type_name(mask)}")
    if mask._data.dtype != xp.bool_:
        got = getattr(mask, "dtype", type(mask))
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}")
    try:
        xp.broadcast_shapes(mask._data.shape, x._data.shape)
    except ValueError:
        raise RuntimeError(
            f"The size of the mask {list(mask.shape)} must be broadcastable to the tensor's size {list(x.shape)}"
        ) from None
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor")
        if value._requires_grad and _GradState.enabled and x.dtype._category < 2 and not in_place:
            # (the result, x's integer or bool dtype, would have a history: PyTorch's autograd refuses one)
            raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE_NAMES[x.dtype.name]}")
        if not (in_place and value._requires_grad and x.dtype._category < 2):
            value = promoted(value, x.dtype)  # (else kept: a cast to x's integer dtype would drop its history)
        out = _MaskedFillTensor.apply(x, value, mask=mask._data)
    else:
        if isinstance(value, xp.ndarray):  # (a Number or a 0-d tensor to PyTorch's parser, not an array)
            refuse_numpy_array("masked_fill", value, "value", 2)
        value = _dtype.checked_fill(value, x._data.dtype)
        out = _MaskedFill.apply(x, value=xp.asarray(half_number(value, x._data.dtype), dtype=x._data.dtype),
                                mask=mask._data)
    if _meta_made[0] and is_meta(out._data):  # (row-major on the meta device too, not its input's layout)
        record_layout(out._data, contiguous_strides(out._data.shape), 0)
    return version_checked(out, mask)  # (PyTorch saves the mask)


@torch_named("MaskedFillBackward0")
class _MaskedFill(Node):
    """``masked_fill`` with a number: ``where(mask, value, x)`` with one input, ``x`` (the mask and the value are
    parameters), as PyTorch's node."""
    diagonal_jacobian = True
    own_layout = True  # (row-major: _row_major)

    _saved_mask, _raw_saved_mask = saved_tensor(0)  # (PyTorch's name of what its node saves)

    def forward(self, x, value, mask):
        self.saved = (mask,)
        return _row_major(xp.where(mask, value, x))

    def backward(self, g):  # g with the filled places zeroed (selected, not multiplied: an inf or NaN g gives 0 there)
        return (selected_gradient(g, ~self.saved[0]),)


def _row_major(out):
    """``masked_fill``'s result row-major, as PyTorch's (``self.clone(at::MemoryFormat::Contiguous)``, then filled in
    place), whatever the input's layout; a size-1 dimension's stride too. (A meta result's layout is recorded.)"""
    if _meta_made[0] and is_meta(out):
        return out
    if not out.flags.c_contiguous:
        out = xp.ascontiguousarray(out)
    return strides_at_size_one(out, tuple(s * out.itemsize for s in contiguous_strides(out.shape)))


@torch_named("MaskedFillBackward1")
class _MaskedFillTensor(Node):
    """``masked_fill`` with a 0-d tensor value: inputs ``x`` and ``value``, in PyTorch's order (the value's gradient
    is ``g`` summed over the mask)."""
    diagonal_jacobian = True
    own_layout = True  # (row-major: _row_major)

    _saved_mask, _raw_saved_mask = saved_tensor(0)  # (PyTorch's name of what its node saves)

    def forward(self, x, value, mask):
        self.saved = (mask,)
        return _row_major(xp.where(mask, value, x).astype(x.dtype, copy=False))  # (masked_fill_'s float value)

    def backward(self, g):
        (mask,) = self.saved
        nx, nv = self.needs_input_grad
        # (selected as in _MaskedFill, not multiplied: an inf or NaN g reaches only its own side)
        return (selected_gradient(g, ~mask) if nx else None), (selected_gradient(g, mask) if nv else None)


def nonzero(x: Tensor, *, as_tuple: bool = False):
    """The indices of the non-zero elements: an (n, x.dim()) int64 tensor, or with ``as_tuple`` one index tensor
    per dimension. A 0-d tensor gives an (n, 0) tensor (n is 1 or 0), or as a tuple one index tensor over it as if
    it had one element, as in PyTorch. On the meta device the count depends on values there are not: PyTorch's
    NotImplementedError."""
    if is_meta(x._data):
        raise nonzero_error()
    if x._data.ndim == 0:
        hits = xp.nonzero(xp.reshape(x._data, (1,)))[0].astype(xp.int64)
        return (Tensor._make(hits),) if as_tuple else Tensor._make(xp.zeros((hits.shape[0], 0), xp.int64))
    idx = xp.nonzero(x._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(xp.int64)) for i in idx)
    # PyTorch's layout: column-major, strides (1, n) (one index column per dimension, each contiguous), the
    # stride n kept as it is when n is 0
    columns = xp.stack(idx).astype(xp.int64)
    (ndim, n), step = columns.shape, columns.itemsize
    return Tensor._make(xp.lib.stride_tricks.as_strided(columns, (n, ndim), (step, step * n)))


def argwhere(x: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row per element (int64, shape (n, x.dim())): ``nonzero(x)``."""
    return nonzero(x)


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    if not isinstance(mask, Tensor) or mask._data.dtype != xp.bool_:
        refuse_numpy_array("masked_select", mask, "mask", 1)  # (PyTorch's parser refuses an array: TypeError)
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {getattr(mask, 'dtype', type(mask))}")
    refuse_meta("masked_select", x._data, mask._data)
    shape = xp.broadcast_shapes(x._data.shape, mask._data.shape)
    from .shape import expand

    out = getitem(expand(x, shape), Tensor._make(xp.broadcast_to(mask._data, shape)))
    return version_checked(shown_as(out, "MaskedSelectBackward0"), mask)  # (PyTorch's own op and node)
