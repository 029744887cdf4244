"""Updates along a dimension at given indices (index_add/index_fill/index_copy), and the in-place forms
of the indexing ops (masked_fill_, scatter_, scatter_add_, index_*_).

An in-place form runs the out-of-place op and writes the result back: recorded (the tensor takes the
result's graph history, as ``inplace.py`` does) when it needs a gradient, plain otherwise.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._arg_aliases import refuse_numpy_array
from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES
from .._out import refuse_index_put_overlap, refuse_partial_overlap
from .._size import c_type_name
from .._tensor import Tensor, _wrap_dim
from .._warnings import warn_once
from ..autograd.grad_mode import _GradState, no_grad
from ..autograd.graph import Node, shown_as, torch_named, version_checked
from ..autograd.saved_attributes import (
    checked_argument,
    held_tensor,
    keep_dim_as_given,
    not_saved,
    saved_tensor,
    unreleased,
)
from .indexing import (
    SAVED_DIM,
    SAVED_INDEX,
    _overlaps,
    as_vector,
    check_inplace,
    check_scatter_index,
    masked_fill,
    masked_fill_value,
    out_of_bounds,
    saved_indices,
    scatter,
    scatter_add,
    write_expanded,
)
from .inplace import _same_shape, _write_back

# PyTorch's errors for an index outside the dimension and for one that is not a vector, and whether it counts
# negative indices from the end
_BOUNDS = {"index_add": (RuntimeError, IndexError, False), "index_copy": (IndexError, IndexError, False),
           "index_fill": (IndexError, RuntimeError, True), "index_reduce": (IndexError, IndexError, False)}


# The index dtypes each op's kernel takes, and PyTorch's error for another ({} is its scalar type name)
_INDEX_DTYPES = {
    "index_add": ("int32", "int64", RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: {}"),
    "index_reduce": ("int32", "int64", RuntimeError,
                     "index_reduce_(): Expected dtype int32/int64 for index but got: {}"),
    "index_copy": ("int64", RuntimeError, "index_copy_(): Expected a long tensor for index, but got {}"),
    "index_fill": ("int64", IndexError, "index_fill_(): Expected dtype int64 for index."),
}


def _index_arg(x: Tensor, dim: int, index: Tensor, name: str, bounds: bool = True):
    """(wrapped dim, 1-D int64 index array), with PyTorch's errors for bad indices (their range checked unless
    ``bounds`` is False: index_add and index_copy check it after the source, ``_check_bounds``)."""
    if not isinstance(index, Tensor):
        refuse_numpy_array(name, index, "index", 2)  # (an array: PyTorch's parser refuses it first, TypeError)
        raise IndexError(f"{name}(): Expected dtype int64 for index (got {type(index).__name__})")
    if name != "index_fill":  # (PyTorch's other index ops check the dim before the index)
        _wrap_dim(dim, x._data.ndim)
    *allowed, error, message = _INDEX_DTYPES[name]
    if index._data.dtype.name not in allowed:
        raise error(message.format(SCALAR_TYPE_NAMES.get(index._data.dtype.name, index.dtype)))
    error, not_vector, negative = _BOUNDS[name]
    if index._data.ndim > 1:
        raise not_vector(f"{name}_(): Index is supposed to be a vector (or a scalar), got shape {list(index.shape)}")
    d = _wrap_dim(dim, x._data.ndim)
    idx = index._data.reshape(-1).astype(xp.int64)
    if bounds:
        _check_bounds(x, d, idx, name)
    return d, idx


def _check_bounds(x: Tensor, d: int, idx, name: str) -> None:
    """PyTorch's error for an index past dimension ``d`` (its kernels check the range last: after the source's
    dtype and shape)."""
    error, _, negative = _BOUNDS[name]
    why = out_of_bounds(idx, x._data.shape[d] if x._data.ndim else 1, d, negative)
    if why:
        if name == "index_add" and not (x._data.ndim > 1 and d in (0, x._data.ndim - 1)):
            # PyTorch adds slice by slice here (not by its scatter kernel), with the IndexError of indexing
            raise IndexError(f"index out of range in self: {name}_(): {why}")
        raise error(f"{name}_(): {why}")


def _check_source(x: Tensor, d: int, idx, source: Tensor, name: str) -> None:
    want = x._data.shape[:d] + (idx.size,) + x._data.shape[d + 1:]
    if not x._data.ndim:  # (PyTorch's index_add and index_reduce take a 0-d source only; index_copy any as many)
        wrong = source._data.size != idx.size if name == "index_copy" else source._data.ndim != 0
    else:
        wrong = source._data.shape != want
    if wrong:
        raise RuntimeError(
            f"{name}(): source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(x.shape)} source.shape = {list(source.shape)} (index has {idx.size} entries)"
        )


def _along(d: int, idx):
    """An index expression selecting positions ``idx`` of dimension ``d``."""
    return (slice(None),) * d + (idx,)


def _zeroed(g, at):
    """A copy of ``g`` with the positions ``at`` zeroed (recorded under create_graph). A 0-d ``g`` (a 0-d x's,
    perhaps a NumPy scalar, whose copy is no array to write into) is zero if ``at`` names its one element."""
    if g.ndim == 0:
        return xp.zeros((), dtype=g.dtype) if at[-1].size else g  # (a constant: zero even where g is nan)
    gx = g.copy()
    gx[at] = 0
    return gx


def _lined(a):
    """``a``, or a 0-d ``a`` as a vector of its one element (a view: writes reach ``a``): PyTorch's index_add,
    index_copy and index_fill take a 0-d tensor as such a vector along dimension 0 (or -1)."""
    return a.reshape(1) if a.ndim == 0 else a


@torch_named("IndexAddBackward0")
class IndexAdd(Node):
    # (PyTorch's names of what its node saves; the source as an argument whose version is checked, ``index_add``)
    _saved_alpha = property(lambda node: node.alpha)
    _saved_dim = SAVED_DIM
    # (the index and the source only for the source's gradient, as PyTorch saves them)
    _saved_index = property(lambda node: held_tensor(node, node.at[-1]) if node.needs_input_grad[1] else None)
    _saved_source = property(lambda node: checked_argument(node, 1, 1))
    _saved_source_dim = property(lambda node: node.source_dim)

    def forward(self, x, source, dim, index, alpha):
        self.at, self.alpha, self.dim, self.source_dim = _along(dim, index), alpha, dim, source.ndim
        self.source_shape = source.shape
        out = x.copy()
        xp.add.at(_lined(out), self.at, source * alpha if alpha != 1 else source)  # repeated indices accumulate
        return out

    def backward(self, g):
        gs = None
        if self.needs_input_grad[1]:  # (of the source's shape: a 0-d x takes a 0-d source)
            gs = _lined(g)[self.at].reshape(self.source_shape) * self.alpha
        return g, gs


@torch_named("IndexCopyBackward0")
class IndexCopy(Node):
    # (PyTorch's names of what its node saves: the dim as given, the index given, the source for its own gradient)
    _saved_dim = SAVED_DIM
    _saved_index = SAVED_INDEX
    _saved_source = property(lambda node: checked_argument(node, 1, 1) if node.needs_input_grad[1] else None)
    _saved_source_dim = property(lambda node: node.source_dim)

    def forward(self, x, source, dim, index):
        self.at, self.dim, self.source_dim = _along(dim, index), dim, source.ndim
        self.source_shape = source.shape
        out = x.copy()
        _lined(out)[self.at] = source
        return out

    def backward(self, g):  # overwritten positions pass nothing to the old x
        gx = None
        if self.needs_input_grad[0]:
            gx = _zeroed(g, self.at)
        # (of the source's shape: a 0-d x takes a 0-d or one-element source)
        return gx, (_lined(g)[self.at].reshape(self.source_shape) if self.needs_input_grad[1] else None)


@torch_named("IndexFillBackward0")
class IndexFill(Node):
    _saved_dim, _saved_index = SAVED_DIM, SAVED_INDEX  # (PyTorch's names of what its node saves)

    def forward(self, x, value, dim, index):
        self.at, self.dim = _along(dim, index), dim
        out = x.copy()
        _lined(out)[self.at] = value
        return out

    def backward(self, g):  # a tensor value gets the sum of the gradients of the positions it filled
        gx = _zeroed(g, self.at)
        if len(self.needs_input_grad) == 1:  # (a number: no edge)
            return (gx,)
        if not self.needs_input_grad[1]:
            return gx, None
        # the value's gradient: g's selection at each distinct index (a repeated one counts once), as PyTorch's
        # formula; its index_select refuses a negative index (dimension 0's error, or another's) and, of a 0-d g,
        # more than one
        index = xp.unique(self.at[-1])
        if g.ndim == 0 and index.size > 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)")
        if index.size and index[0] < 0:
            if self.dim == 0:
                raise IndexError("index out of range in self")
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(index[0])} "
                               f"axis_dim={g.shape[self.dim]}")
        return gx, _lined(g)[_along(self.dim, index)].sum()


@torch_named("IndexFillBackward1")
class IndexFillTensor(IndexFill):
    """index_fill with a 0-d tensor value (PyTorch's index_fill.int_Tensor: the value takes a gradient)."""


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """x with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
    if isinstance(alpha, Tensor):  # (PyTorch's Scalar: a 0-d tensor's number)
        alpha = _dtype.scalar_tensor_number(alpha, "index_add", "alpha")
    _dtype.scalar_ints((alpha,))
    if isinstance(alpha, float) and math.isfinite(alpha) and not (x.is_floating_point() or x.is_complex()):
        # PyTorch converts alpha to the tensor's scalar type (C's conversion): 0.5 is 0 for an integer tensor
        alpha = bool(alpha) if x.dtype == _dtype.bool_ else int(alpha)
    d, idx = _index_arg(x, dim, index, "index_add", bounds=False)
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_add_(): self ({SCALAR_TYPE_NAMES[x.dtype.name]}) and source "
                           f"({SCALAR_TYPE_NAMES[source.dtype.name]}) must have the same scalar type")
    _check_source(x, d, idx, source, "index_add")
    _check_bounds(x, d, idx, "index_add")
    # (PyTorch saves the index and the source, expanded to its shape, for the source's gradient)
    out = keep_dim_as_given(IndexAdd.apply(x, source, dim=d, index=idx, alpha=alpha), dim)
    return version_checked(out, index, source, reader=1)


def _given(out: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out``, whose node keeps ``dim`` and ``index`` as given, which PyTorch's node saves (``_saved_dim``,
    ``_saved_index``: a 0-d index stays 0-d)."""
    if out.grad_fn is not None:
        out.grad_fn.index = index._data
    return keep_dim_as_given(out, dim)


def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """x with the slices at ``index`` along ``dim`` replaced by ``source``'s slices, in order."""
    d, idx = _index_arg(x, dim, index, "index_copy", bounds=False)
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]} and (source) {SCALAR_TYPE_NAMES[source.dtype.name]}")
    _check_source(x, d, idx, source, "index_copy")
    _check_bounds(x, d, idx, "index_copy")
    out = version_checked(_given(IndexCopy.apply(x, source, dim=d, index=idx), dim, index), index)
    return version_checked(out, source, reader=1)  # (as index_add's)


def index_fill(x: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """x with every element of the slices at ``index`` along ``dim`` set to ``value`` (a number or 0-d tensor).
    An integer or bool ``x`` with a value tensor that requires grad is refused, as PyTorch's autograd refuses such
    a result a history; ``index_fill_`` records it (``_index_fill``)."""
    return _index_fill(x, dim, index, value)


def _index_fill(x: Tensor, dim: int, index: Tensor, value, in_place: bool = False) -> Tensor:
    """``index_fill``; ``in_place``: for ``index_fill_``, which records an integer ``x`` filled from a value tensor
    that requires grad (IndexFillBackward1), as PyTorch's."""
    d, idx = _index_arg(x, dim, index, "index_fill")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        if not in_place and value._requires_grad and _GradState.enabled and x.dtype._category < 2:
            raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE_NAMES[x.dtype.name]}")  # (masked_fill's)
        return version_checked(_given(IndexFillTensor.apply(x, value, dim=d, index=idx), dim, index), index)
    if isinstance(value, (complex, xp.complexfloating)) and x._data.dtype.kind != "c":  # (even with no imaginary part)
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    value = _dtype.checked_fill(value, x._data.dtype)
    # (a number is no input: PyTorch's node has the tensor's edge only)
    out = IndexFill.apply(x, value=xp.asarray(value, dtype=x._data.dtype), dim=d, index=idx)
    return version_checked(_given(out, dim, index), index)


# ----------------------------------------------------------------- in-place forms
def masked_fill_(x: Tensor, mask: Tensor, value) -> Tensor:
    """``masked_fill`` in place. An integer or bool ``x`` filled from a value tensor that requires grad takes a
    history (MaskedFillBackward1, requiring grad) as PyTorch's, as ``index_fill_``'s does; the out-of-place form
    refuses it ("Autograd not support dtype: Long")."""
    if _expanded_untracked(x, value):  # (as index_fill_'s)
        filled = _same_shape(masked_fill(x, mask, value), x)
        return _write_selected(x, xp.broadcast_to(mask._data, x._data.shape), filled)
    return _write_back(x, lambda t: masked_fill_value(t, mask, value, in_place=True), value)


def fill_diagonal_(x: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Set the main diagonal (every index equal) of a tensor of 2 or more dimensions, all of one length beyond 2,
    to ``fill_value``, in place; ``wrap`` continues the diagonal of a tall matrix below its first square block
    every ``columns + 1`` rows, as PyTorch (and ``numpy.fill_diagonal``) do. The filled positions pass no
    gradient back."""
    shape = x._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = xp.zeros(shape, dtype=bool)
    xp.fill_diagonal(mask, True, wrap=wrap)
    return masked_fill_(x, Tensor._make(mask), fill_value)


SCATTER_REDUCE_DEPRECATION = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                              "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                              "reduction options.")


def scatter_(x: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    """In-place scatter; ``reduce="add"``/``"multiply"`` combine with the existing values instead (with a Tensor
    ``src``, deprecated: PyTorch's UserWarning, once per process, as PyTorch's; a number ``src`` is not)."""
    src = value if src is None else src
    refuse_partial_overlap(x._data, src, full=True)  # (PyTorch's index ops refuse any overlap of their source)
    if reduce is None:
        return _write_back(x, lambda t: scatter(t, dim, index, src), src)
    if isinstance(src, Tensor):  # PyTorch's TORCH_WARN_ONCE, before it looks at the reduction's name
        warn_once(SCATTER_REDUCE_DEPRECATION)
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
    if _GradState.enabled and (x._requires_grad or isinstance(src, Tensor) and src._requires_grad):
        raise RuntimeError(f"scatter_(reduce={reduce!r}) has no gradient, as in PyTorch: use scatter_add "
                           "(for 'add') or an out-of-place expression where a gradient is needed")
    if reduce == "add":
        if not isinstance(src, Tensor):
            src = Tensor._make(xp.full(index._data.shape, src, dtype=x._data.dtype))
        return _write_back(x, lambda t: scatter_add(t, dim, index, src), src)
    if reduce == "multiply":
        check_inplace(x, False)
        if not x._data.ndim:  # (a vector of its one element, as scatter's: the view writes x)
            with no_grad():
                scatter_(x.view(1), _wrap_dim(dim, 0), index.reshape(-1), src.reshape(-1)
                         if isinstance(src, Tensor) else src, reduce=reduce)
            return x
        d = _wrap_dim(dim, x._data.ndim)
        check_scatter_index(x, d, index._data, src._data if isinstance(src, Tensor) else None)
        grids = list(xp.indices(index._data.shape, sparse=True))
        grids[d] = index._data
        if isinstance(src, Tensor):  # only src's leading part (index's shape) is used
            src = src._data[tuple(slice(0, n) for n in index._data.shape)]
        xp.multiply.at(x._data, tuple(grids), src)
        x._vc[0] += 1
    return x


def scatter_add_(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    refuse_partial_overlap(x._data, src, full=True)
    return _write_back(x, lambda t: scatter_add(t, dim, index, src), src)


def index_add_(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    refuse_partial_overlap(x._data, source, full=True)
    return _write_back(x, lambda t: index_add(t, dim, index, source, alpha=alpha), source)


def index_copy_(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    refuse_partial_overlap(x._data, source, full=True)
    return _write_back(x, lambda t: index_copy(t, dim, index, source), source)


def index_fill_(x: Tensor, dim: int, index: Tensor, value) -> Tensor:
    if _expanded_untracked(x, value):  # (PyTorch fills the slices through the shared elements: no overlap check)
        filled = _index_fill(x, dim, index, value, in_place=True)
        return _write_selected(x, (slice(None),) * _wrap_dim(dim, x._data.ndim) + (index._data,), filled)
    return _write_back(x, lambda t: _index_fill(t, dim, index, value, in_place=True), value)


def _expanded_untracked(x: Tensor, *others) -> bool:
    """Whether ``x`` is an expanded tensor (elements sharing memory, read-only to NumPy) written in place with
    nothing recorded: the index fills PyTorch allows there write only their positions (``_write_selected``), where
    ``_write_back`` would write every element back, the last write to a shared location winning."""
    return not x._data.flags.writeable and _overlaps(x._data) and not (_GradState.enabled and (
        x._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)))


def _write_selected(x: Tensor, key, result: Tensor) -> Tensor:
    """``x[key] = result[key]`` into expanded ``x`` (``_expanded_untracked``), after PyTorch's checks."""
    check_inplace(x, False, overlap_ok=True)
    write_expanded(x._data, key, result._data[key])
    x._vc[0] += 1
    return x


@torch_named("IndexPutBackward0")  # (PyTorch's one index_put node, accumulating or not)
class IndexAccumulate(Node):
    """``x[indices] += values`` with repeated positions accumulating (``index_put(accumulate=True)``)."""

    # (PyTorch's names of what its node saves)
    _saved_indices = property(lambda node: saved_indices(unreleased(node).indices, node.ndim))
    _saved_accumulate = True

    def forward(self, x, values, indices):
        self.indices, self.ndim = indices, x.ndim
        out = x.copy()
        xp.add.at(out, indices, values)
        return out

    def backward(self, g):  # values broadcast into the indexed shape: the engine sums them back down
        return g, (g[self.indices] if self.needs_input_grad[1] else None)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """``torch.index_put``: input with ``input[indices]`` set to ``values`` (added, with repeats accumulating, when
    ``accumulate``); ``indices`` a tuple (or list) of integer or bool tensors, one per leading dimension (a slice,
    an int or None among them is PyTorch's TypeError: its argument parser takes tensors only)."""
    return indexed_put(input, public_indices("index_put", indices, function=True), values, accumulate)


def indexed_put(x: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """``index_put`` of any index ``x[...]`` takes (slices, ints and None among the tensors): ember's own formulas
    index so."""
    from .indexing import _index_tensors, convert_index, setitem, written_copy_of

    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): indices must be a tuple of tensors, not {c_type_name(indices)}")
    refuse_array_indices(indices)
    if len(indices) > x._data.ndim and all(isinstance(i, Tensor) for i in indices):
        # (PyTorch counts each index tensor as one dimension here, a 0-d bool one too, where x[...] would not)
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim} (got {len(indices)})")
    if not isinstance(values, Tensor):
        values = Tensor._make(xp.asarray(values, dtype=x._data.dtype))
    elif values._data.dtype != x._data.dtype:
        if accumulate or not fills_through_mask(indices, values, False):
            refuse_index_put_dtype(x, tuple(indices), values)
        values = mask_fill_value(x, values)
    if not accumulate:
        out = x.clone()
        setitem(out, tuple(indices), values)
        return written_copy_of(x, out)
    idx = convert_index(tuple(indices))
    try:
        return version_checked(IndexAccumulate.apply(x, values, indices=idx), *_index_tensors(tuple(indices)))
    except IndexError as err:  # past the end (a negative index counts from the end, as in PyTorch)
        raise IndexError(f"index_put(): {err} (indexing a tensor of shape {list(x.shape)})") from None
    except ValueError as err:
        raise RuntimeError(f"index_put(): {err} (indexing a tensor of shape {list(x.shape)})") from None


def fills_through_mask(parts, values: Tensor, zero_d_basic: bool) -> bool:
    """Whether PyTorch's index_put_ (not accumulating) writes ``values`` with masked_fill_, which reads it as a number
    and checks no dtype: ``values`` has one element and the index's only tensor is a bool mask (a Python bool among
    the parts is an index tensor of its own there). ``zero_d_basic``: a 0-d integer tensor is a basic index
    (``x[t, mask] = v``), not an index tensor (``index_put_``'s list)."""
    if values._data.size != 1:
        return False
    masks = 0
    for p in parts:
        if isinstance(p, Tensor):
            a = p._data
        elif p.__class__ is list or p.__class__ is tuple or p.__class__ is xp.ndarray:
            a = xp.asarray(p)
        elif isinstance(p, (bool, xp.bool_)):
            return False
        else:
            continue  # (a number, a slice, None, ...: a view taken first)
        if a.dtype == xp.bool_:
            masks += 1
        elif not (zero_d_basic and a.ndim == 0 and a.dtype.kind in "iu"):
            return False
    return masks == 1


def mask_fill_value(x: Tensor, values: Tensor) -> Tensor:
    """``values`` (one element, another dtype than ``x``) as masked_fill_ takes it for ``x``: its number checked as
    PyTorch converts it (one that does not fit, or a complex one with an imaginary part for a real ``x``: its
    RuntimeError), then cast to ``x``'s dtype (recorded: a gradient still reaches ``values``, in its dtype)."""
    number = values._data.reshape(-1)[0].item()
    target = x._data.dtype
    if number.__class__ is complex and target.kind != "c":
        if number.imag:
            raise _dtype._overflow(target)
        number, values = number.real, values.real  # (a number's conversion: no warning of a discarded part)
    _dtype.checked_fill(number, target)
    return values.to(x.dtype)


def refuse_index_put_dtype(x: Tensor, indices, values: Tensor) -> None:
    """PyTorch's index_put (``x[index_tensors] = values`` too) refuses ``values`` of another dtype than ``x``, after
    its index and shape checks (those errors first, from a write into a detached copy) and before the indices'
    range (its kernel checks that last)."""
    from .indexing import setitem

    try:
        with no_grad():
            setitem(Tensor._make(x._data.copy()), indices, Tensor._make(values._data.astype(x._data.dtype)))
    except IndexError as e:
        if "is out of bounds for dimension" not in str(e):
            raise
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                       f"{SCALAR_TYPE_NAMES[x.dtype.name]} for the destination and "
                       f"{SCALAR_TYPE_NAMES[values.dtype.name]} for the source.")


def refuse_array_indices(indices, tensors_only: bool = False, argument: int = 0) -> None:
    """PyTorch's TypeError for an ``index_put`` index that is a NumPy array or a list: its argument parser takes a
    tuple of tensors only. ``tensors_only`` (the Tensor methods and ``torch.index_put``, what a program calls): a
    slice, None, an int or an Ellipsis is its TypeError too; ember's own formulas index with those through the
    functions here. ``argument``: the indices' position as PyTorch's message counts it (a method's 0, the
    function's 1)."""
    for position, index in enumerate(indices):
        if isinstance(index, (xp.ndarray, list)) or tensors_only and not isinstance(index, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument {argument}, but got "
                            f"{c_type_name(index)}")


def public_indices(op: str, indices, function: bool = False):
    """``indices`` of the ``index_put``/``index_put_`` methods (``function``: of ``torch.index_put``) as PyTorch's
    parser takes them: a tuple or list of tensors, else its TypeError."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position {1 + function}) must be tuple of Tensors, not "
                        f"{c_type_name(indices)}")
    refuse_array_indices(indices, tensors_only=True, argument=int(function))
    return indices


def index_put_(x: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    if isinstance(indices, (tuple, list)):
        refuse_array_indices(indices)
    if isinstance(values, Tensor) and values._data.dtype != x._data.dtype and isinstance(indices, (tuple, list)) \
            and (accumulate or not fills_through_mask(indices, values, False)):
        refuse_index_put_dtype(x, tuple(indices), values)  # (before the overlap checks, as PyTorch's)
    if accumulate:
        refuse_partial_overlap(x._data, values, full=True)
        if _expanded_untracked(x, values) and isinstance(indices, (tuple, list)):  # (as index_fill_'s: each
            # position selected adds once, the shared locations as often as they are reached, as PyTorch's)
            from .indexing import convert_index

            added = indexed_put(x, indices, values, accumulate=True)  # (PyTorch's checks, on a copy)
            check_inplace(x, False, overlap_ok=True)
            a, idx = x._data, convert_index(tuple(indices))
            write_expanded(a, idx, xp.broadcast_to(values._data if isinstance(values, Tensor) else values,
                                                   added._data[idx].shape).astype(a.dtype), add=True)
            x._vc[0] += 1
            return x
    else:
        refuse_index_put_overlap(x._data, indices, values)
        if _expanded_untracked(x, values) and isinstance(indices, (tuple, list)):  # (as index_fill_'s)
            from .indexing import setitem

            setitem(x, tuple(indices), values if isinstance(values, Tensor) else Tensor._make(
                xp.asarray(values, dtype=x._data.dtype)))
            return x
    return _write_back(x, lambda t: indexed_put(t, indices, values, accumulate), values)


def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``x`` (broadcast with ``mask``) with the positions where ``mask`` is True filled, in row-major order, from
    the leading elements of ``source``; differentiable in ``x`` and ``source`` (a clone and an index_put)."""
    from ..autograd.graph import input_edge
    from .indexing import MaskedScatter, setitem, written_copy_of
    from .shape import expand

    if not isinstance(mask, Tensor) or mask._data.dtype != xp.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask))}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{x.dtype} and {source.dtype}")
    shape = xp.broadcast_shapes(x._data.shape, mask._data.shape)
    m = xp.broadcast_to(mask._data, shape)
    n = int(m.sum())
    if source._data.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = (expand(x, shape) if shape != x._data.shape else x).clone()
    flat = source.detach().reshape(-1)[:n]
    if source._requires_grad and _GradState.enabled:  # (a stand-in needing a gradient: its edge is replaced below)
        flat = flat.requires_grad_()
    setitem(out, Tensor._make(m), flat)
    out = written_copy_of(x, out)
    node = out.grad_fn
    if node is not None:  # the source's own edge: its gradient padded back to its shape (MaskedScatter)
        node.__class__, node.source_shape, node.mask = MaskedScatter, source._data.shape, mask
        if source._requires_grad and _GradState.enabled:
            node.next_edges[1], node.input_shapes[1] = input_edge(source), source._data.shape
    return version_checked(out, mask)


def masked_scatter_(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    if xp.broadcast_shapes(x._data.shape, mask._data.shape) != x._data.shape:
        raise RuntimeError(f"masked_scatter_: the mask of shape {list(mask.shape)} does not broadcast to the "
                           f"tensor's shape {list(x.shape)}")
    return _write_back(x, lambda t: masked_scatter(t, mask, source), source)


# ----------------------------------------------------------------- scatter_reduce / index_reduce
_REDUCE_UFUNC = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}


def _identity(reduce: str, dtype):
    """The value a position starts from when ``include_self=False``: nothing of the old value remains."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = xp.finfo(dtype) if dtype.kind in "fc" else xp.iinfo(dtype) if dtype.kind in "iu" else None
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind == "f":
        return -xp.inf if reduce == "amax" else xp.inf
    return info.min if reduce == "amax" else info.max


def _leading(a, shape):
    """The leading block of ``a`` that an index of ``shape`` covers (PyTorch reads only that part)."""
    return a[tuple(slice(0, n) for n in shape)]


def _scatter_reduced(x, src, at, reduce, include_self):
    """x with src reduced into positions ``at`` (a tuple of index arrays): the forward of scatter_reduce."""
    out = x.copy()
    if not include_self:
        out[at] = _identity(reduce, x.dtype)
    _REDUCE_UFUNC[reduce].at(out, at, src)
    if reduce == "mean":
        count = xp.ones_like(out) if include_self else xp.zeros_like(out)
        xp.add.at(count, at, 1)
        count[count == 0] = 1
        out = out // count if out.dtype.kind in "iu" else (out / count).astype(out.dtype, copy=False)
    return out


@torch_named("ScatterReduceBackward0")
class ScatterReduce(Node):
    """PyTorch's scatter_reduce and its backward (``scatter_reduce_backward``): ties in amax/amin share the
    gradient evenly among the values equal to the result, the old value counted even when ``include_self=False``
    (as PyTorch counts it); prod divides out each factor, a single zero factor getting the product of the others.
    index_reduce's node is this one, shown as PyTorch's IndexReduceBackward0 (its ``_saved_source``, the index as
    given)."""

    # (PyTorch's names of what its node saves: the dim as given, the index, the input, source and result)
    _saved_dim = SAVED_DIM
    _saved_index = property(lambda node: held_tensor(node, node.index))
    _saved_include_self = property(lambda node: node.include_self)
    _saved_reduce = property(lambda node: node.reduce)
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_src, _raw_saved_src = saved_tensor(1)
    _saved_result, _raw_saved_result = saved_tensor(2)
    attributes_shown = {"IndexReduceBackward0": {
        "_saved_source": saved_tensor(1)[0], "_raw_saved_source": saved_tensor(1)[1], **not_saved("src")}}

    def forward(self, x, src, at, reduce, include_self):
        self.at, self.reduce, self.include_self = at, reduce, include_self
        out = _scatter_reduced(x, src, at, reduce, include_self)
        # saved for every reduction, as PyTorch saves self, src and the result: changing one in place before
        # backward is its error, also for sum and mean, whose formulas read none of them
        self.saved = (x, src, out)
        return out

    def backward(self, g):
        at, reduce = self.at, self.reduce
        if reduce == "sum":
            gx, gsrc = g.copy(), g[at]
        elif reduce == "mean":
            count = xp.ones_like(g) if self.include_self else xp.zeros_like(g)
            xp.add.at(count, at, 1)
            count[count == 0] = 1
            gx = g / count
            gsrc = gx[at]
        elif reduce in ("amax", "amin"):
            x, src, out = self.saved
            x_is = (x == out).astype(g.dtype)
            src_is = (src == out[at]).astype(g.dtype)
            n = x_is.copy()
            xp.add.at(n, at, src_is)
            share = g / n
            gx, gsrc = x_is * share, src_is * share[at]
        else:  # prod
            x, src, out = self.saved
            masked_x = xp.where(x == 0, 1, x)
            gx = g * _scatter_reduced(masked_x, src, at, "prod", self.include_self) / masked_x
            src_zero = src == 0
            zeros = xp.zeros_like(g)
            xp.add.at(zeros, at, src_zero.astype(g.dtype))
            single_zero = src_zero & (zeros[at] == 1)
            others = _scatter_reduced(x, xp.where(single_zero, 1, src), at, "prod", self.include_self)
            gsrc = xp.where(single_zero, (g * others)[at], (g * out)[at] / xp.where(src_zero, 1, src))
        if not self.include_self:
            gx[at] = 0
        return gx, gsrc




def scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """x with ``src`` reduced ("sum", "prod", "mean", "amax", "amin") into the positions ``index`` names along
    ``dim``; ``include_self=False`` leaves x's old value out of the positions scattered to. Differentiable in
    both (PyTorch's backward, ties included)."""
    from .indexing import _check_index

    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's forward takes the older names too
    if reduce not in _REDUCE_UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not x._data.ndim:
        return as_vector(scatter_reduce, x, dim, index, src, reduce=reduce, include_self=include_self)
    d = _wrap_dim(dim, x._data.ndim)  # (PyTorch checks the dim before the index)
    idx = _check_index(index, "scatter_reduce")
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, got {x.dtype} and "
                           f"{src.dtype}")
    if idx.ndim != x._data.ndim or src._data.ndim != x._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    check_scatter_index(x, d, idx, src._data)
    if src._data.shape != idx.shape:
        src = src[tuple(slice(0, n) for n in idx.shape)]
    grids = list(xp.indices(idx.shape, sparse=True))
    grids[d] = idx
    out = ScatterReduce.apply(x, src, at=tuple(grids), reduce=reduce, include_self=include_self)
    if out.grad_fn is not None:  # (read as PyTorch's node's ``_saved_dim`` and ``_saved_index``)
        out.grad_fn.dim, out.grad_fn.index = d, idx
        keep_dim_as_given(out, dim)
    return version_checked(out, index, reader=1)


def scatter_reduce_(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    refuse_partial_overlap(x._data, src, full=True)
    return _write_back(x, lambda t: scatter_reduce(t, dim, index, src, reduce, include_self=include_self), src)


def index_reduce(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """x with the slices of ``source`` reduced ("prod", "mean", "amax", "amin") into the slices ``index`` names
    along ``dim``: scatter_reduce with the index repeated across the other dimensions."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    warn_once("index_reduce() is in beta and the API may change at any time.")
    d, idx = _index_arg(x, dim, index, "index_reduce")
    _check_source(x, d, idx, source, "index_reduce")
    if x._data.ndim == 0:
        return scatter_reduce(x.reshape(1), 0, index.reshape(1), source.reshape(1), reduce,
                              include_self=include_self).reshape(())
    shape = [1] * x._data.ndim
    shape[d] = idx.size
    full = Tensor._make(xp.broadcast_to(idx.reshape(shape), source._data.shape))
    out = shown_as(scatter_reduce(x, d, full, source, reduce, include_self=include_self), "IndexReduceBackward0")
    if out.grad_fn is not None:  # (PyTorch's node saves the index given, and the dim as given)
        out.grad_fn.index = index._data
        keep_dim_as_given(out, dim)
    return version_checked(out, index)


def index_reduce_(x: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    refuse_partial_overlap(x._data, source, full=True)
    return _write_back(x, lambda t: index_reduce(t, dim, index, source, reduce, include_self=include_self), source)


@torch_named("PutBackward0")
class Put(Node):
    """``x`` seen as 1-D with ``source``'s elements written (added, when ``accumulate``) at ``index`` (wrapped to
    non-negative): the gradient of ``x`` is ``g`` (zero where written, unless accumulated), ``source``'s is
    ``g.take(index)``. PyTorch's node saves the index given and the source, the source only for its own gradient
    (``saved_for``: kept, and its version checked, only then)."""

    saved_for = ((1,),)
    _saved_accumulate = property(lambda node: node.accumulate)
    _saved_index = property(lambda node: held_tensor(node, node.index_given))
    _saved_source, _raw_saved_source = saved_tensor(0)

    def forward(self, x, source, index, accumulate):
        out = x.reshape(-1).copy()
        src = source.reshape(-1)
        if accumulate:
            xp.add.at(out, index, src)
        else:
            out[index] = src
        self.index, self.accumulate, self.source_shape = index, accumulate, source.shape
        self.saved = (source,)
        return out.reshape(x.shape)

    def backward(self, g):
        nx, ns = self.needs_input_grad
        gx = gs = None
        if nx:
            if self.accumulate:
                gx = g
            else:
                written = xp.zeros(g.size, dtype=xp.bool_)
                written[self.index] = True
                gx = xp.where(written.reshape(g.shape), 0, g)
        if ns:
            gs = g.reshape(-1)[self.index].reshape(self.source_shape)
        return gx, gs


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` seen as 1-D (row-major), with ``source``'s elements written at ``index`` (an int64 tensor of as
    many elements, any shape; a negative index counts from the end), added when ``accumulate`` (repeated indices
    then sum; without it, which repeated write stays is unspecified, as PyTorch's). PyTorch's errors: index not
    int64, source of another dtype or element count, an index out of range (IndexError), an empty input."""
    _check_put(input, index, source)
    idx = index._data.reshape(-1)
    n = input._data.size
    if idx.size and n == 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")
    out = Put.apply(input, source, index=xp.where(idx < 0, idx + n, idx), accumulate=bool(accumulate))
    if out.grad_fn is not None:
        out.grad_fn.index_given = index._data
    return version_checked(out, index)


def _check_put(input: Tensor, index: Tensor, source: Tensor) -> None:
    """``put``'s argument checks, which PyTorch's ``put_`` makes before it refuses an input whose elements overlap
    (an expanded one), and that refusal before the indices' range."""
    from .elementwise import require_tensor

    require_tensor("put", index, 1, "index")  # (PyTorch's argument parser: a tensor, not an array nor a list)
    require_tensor("put", source, 2, "source")
    if index._data.dtype != xp.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {SCALAR_TYPE_NAMES[index.dtype.name]}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{SCALAR_TYPE_NAMES[input.dtype.name]} and source.dtype = "
                           f"{SCALAR_TYPE_NAMES[source.dtype.name]}")
    idx = index._data.reshape(-1)
    if source._data.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source._data.size}, index.numel() = {idx.size}")


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``put``, writing into ``input``."""
    if isinstance(index, Tensor) and isinstance(source, Tensor):
        _check_put(input, index, source)
    refuse_partial_overlap(input._data, source, full=True)
    return _write_back(input, lambda t: put(t, index, source, accumulate), source)
