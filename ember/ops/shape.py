"""Shape ops: reshape/view, permute/transpose, expand, squeeze/unsqueeze, cat/stack, split/chunk.

Ops marked ``is_view`` return a tensor that shares storage and version counter
with their input, as PyTorch's views do.
"""

from __future__ import annotations

import builtins
import functools

from .. import _warnings
from .._arg_aliases import MethodArgumentError
from .._backend import xp
from .._creation import laid_out_like
from .._dtype import promote_types
from .._memory_format import (
    channels_last_order,
    concatenated_format,
    contiguous_format,
    format_strides,
    has_format_strides,
    laid_out,
)
from .._meta import check_operand_devices, follow_view, is_meta, meta_array, meta_layout, record_layout, view_strides
from .._meta import made as _meta_made
from .._shown_name import package_name
from .._size import c_type_name, check_nonnegative, int_argument, parsed_int
from .._tensor import Tensor, _wrap_dim, wrap_dims_once
from .._uninitialized import UnmaterializedArray, uninitialized_error
from ..autograd.grad_mode import _GradState
from ..autograd.graph import Node, apply_one, torch_named, unrecorded_view
from ..autograd.recorded import RecordedArray
from ..autograd.saved_attributes import given_argument, input_sizes, keep_as_given, keep_dim_as_given, saved_dim
from ..storage import root_array
from .elementwise import promoted
from .indexing import SplitPieces, SplitWithSizesPieces, UnbindPieces, basic_view, view_at, view_pieces
from .strided import strided_view


def _shape_arg(shape, keyword=None, name: str = "size", op: str | None = None) -> tuple:
    """Accept view(2, 3), view((2, 3)), view([2, 3]), view(ember.Size) and, as PyTorch, the sizes as
    a keyword (``view(size=(2, 3))``, ``reshape(shape=...)``): ``keyword`` is that keyword's value. ``op``
    given, no sizes at all is PyTorch's TypeError for that op called without its required argument (an empty
    tuple, ``view(())``, is a 0-d shape)."""
    if not shape and keyword is None and op is not None:
        raise missing_sizes(op, name)
    if keyword is not None:
        if shape:
            raise TypeError(f"got the sizes both as positional arguments and as the keyword '{name}'")
        shape = (keyword,)
    whole = len(shape) == 1 and not isinstance(shape[0], (tuple, list))  # (one argument: not a sequence)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    for s in shape:  # (plain ints, the usual case, as they are: no per-size conversion)
        if s.__class__ is not int:
            return index_sizes(shape, name, op, whole=whole)
    return tuple(shape)


def missing_sizes(op: str, name: str) -> TypeError:
    """PyTorch's error for ``x.op()`` called without the sizes or dims it requires."""
    return TypeError(f'{op}() missing 1 required positional arguments: "{name}"')


def index_sizes(shape, name: str, op: str | None = None, position: int | None = None, whole: bool = False) -> tuple:
    """Sizes that are integers of another kind (bools, NumPy integers, one-element integer tensors) as ints; a
    float or any other object is PyTorch's TypeError, not truncated, naming ``op`` and the argument's ``position``
    where given (``op`` alone: a method's, whose function's wrapper names the position the function's sizes
    have). ``whole``: ``shape`` is the one object given for the argument, not a sequence (``zeros(Decimal(2))``),
    which PyTorch's parser words as not a tuple ("must be tuple of ints, not decimal.Decimal")."""
    out = []
    for pos, s in enumerate(shape):
        try:
            out.append(parsed_int(s, bool_ok=pos > 0))
        except TypeError:
            problem = f"must be tuple of ints, but found element of type {c_type_name(s)} at pos {pos}"
            if whole:
                problem = f"must be tuple of ints, not {c_type_name(s)}"
            if op is None:
                raise TypeError(f"argument '{name}' {problem}") from None
            if pos:  # (PyTorch's parser words an element after the first otherwise, counting from 1, no position)
                raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {pos + 1} with error "
                                f"\"type must be tuple of ints,but got {c_type_name(s)}\"") from None
            if position is not None:
                raise TypeError(f"{op}(): argument '{name}' (position {position}) {problem}") from None
            raise MethodArgumentError(op, name, 1, problem) from None
    return tuple(out)


def _infer_shape(shape: tuple, numel: int, src) -> tuple:
    """``shape`` with its -1 worked out, checked against ``numel`` elements (of the array ``src``, named in the
    error)."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {numel} (input shape {list(src.shape)})"
        )
    return shape


class Reshape(Node):
    is_view = True

    def forward(self, x, shape):
        self.shape = x.shape
        out = x.reshape(shape)
        if _meta_made[0] and self.is_view and is_meta(x):  # (a meta view: PyTorch's strides, where it has them)
            strides = view_strides(x.shape, meta_layout(x)[0], shape)
            if strides is not None:
                follow_view(x, out, strides)
        elif 1 in out.shape and self.is_view and not x.flags.c_contiguous:
            out = _size_one_strides(x, out)
        return out

    def backward(self, g):
        return (g.reshape(self.shape),)


def _reshaped_view(a):
    """The maker of ``a``'s views as another shape: NumPy's ``reshape``, and for a non-contiguous ``a`` with PyTorch's
    strides for the dimensions of size 1 (``_size_one_strides``)."""
    if a.flags.c_contiguous:
        return a.reshape
    return lambda shape: _size_one_strides(a, a.reshape(shape))


def _size_one_strides(x, out):
    """``out``, NumPy's view of ``x`` reshaped, with PyTorch's strides for its dimensions of size 1 (its
    computeStride: ``x[:, 1:2].view(6, 1)`` of a (2, 3, 4) ``x`` steps 1 there, where NumPy repeats the stride
    before it). Only a dimension of size 1 differs, which never steps: its stride is only reported."""
    if 1 not in out.shape:
        return out
    strides = _view_byte_strides(x.shape, x.strides, out.shape, x.itemsize)
    if strides is None:
        return out
    # (strided_view, not NumPy's as_strided, which hides the base: the view's storage and offset are its base's)
    return out if strides == out.strides else strided_view(out, out.shape, strides)


@functools.lru_cache(maxsize=1024)
def _view_byte_strides(shape: tuple, strides: tuple, new_shape: tuple, itemsize: int) -> tuple | None:
    """``view_strides`` in bytes for a view of an array of ``shape`` and ``strides`` (bytes) as ``new_shape``: a
    function of these alone, kept for the few a model views on every call (attention's head split views each
    ``split`` piece the same way, where working it out took about 1.5 µs a view)."""
    found = view_strides(shape, [s // itemsize for s in strides], new_shape)
    return None if found is None else tuple(s * itemsize for s in found)


_view_layouts: dict = {}  # _view_layout's answers, by (shape, strides, new shape, item size)


def _view_layout(a, shape: tuple):
    """For a view of the non-contiguous array ``a`` as ``shape`` (not a meta array): None where NumPy cannot
    reshape it without a copy (``_viewable``), True where NumPy's reshape has PyTorch's strides already, else
    PyTorch's strides in bytes (``_size_one_strides``: a dimension of size 1 NumPy strides otherwise). A function of
    the shapes, the strides and the item size alone, kept for up to 1,024 of them (forgotten all at once when full):
    a model views the same pieces the same way every call (attention's head split, where the two tests took about
    1.2 µs a view)."""
    key = (a.shape, a.strides, shape, a.itemsize)
    found = _view_layouts.get(key, _view_layouts)
    if found is _view_layouts:
        found = None
        if _viewable(a, shape):
            strides = _view_byte_strides(*key) if 1 in shape else None
            found = True if strides is None or strides == a.reshape(shape).strides else strides
        if len(_view_layouts) >= 1024:  # (a process that has viewed many layouts keeps the newest, not the first)
            _view_layouts.clear()
        _view_layouts[key] = found
    return found


class ReshapeCopy(Reshape):
    """A reshape that is no view: of a layout no strides can express (``x.t().reshape(-1)``, a copy as PyTorch's),
    or of an intermediate its calling op made and alone holds (``reshape_owned``)."""
    is_view = False


# The reshapes under PyTorch's node names (``type(y.grad_fn).__name__``, ``repr``, a printed tensor's grad_fn=)
class ViewBackward0(Reshape):
    """``view``, ``reshape`` (as a view), ``flatten``, ``unflatten``."""

    _saved_self_sym_sizes = property(input_sizes)  # (PyTorch's name: the input's shape)


class ReshapeAliasBackward0(ViewBackward0):
    """``reshape`` as a view of a tensor that is not contiguous (a permuted or sliced one whose strides give the new
    shape): PyTorch's reshape takes ``_reshape_alias`` there, a view (``view`` itself, and reshape of a contiguous
    tensor, are ViewBackward0)."""


class UnsafeViewBackward0(ReshapeCopy):
    """``reshape`` that copies."""

    _saved_self_sym_sizes = property(input_sizes)


class UnsqueezeBackward0(Reshape):
    """``unsqueeze``: NumPy's reshape, where it gives the new dimension PyTorch's stride (the size times the stride
    of the dimension it goes before, 1 at the end); otherwise, and always for an empty array (which NumPy lays
    out anew), the view ``x[:, ..., None]``, laid out as PyTorch's (``basic_view``)."""

    _saved_dim = property(lambda node: saved_dim(node, node.dim))  # (as given, ``unsqueeze``)

    def forward(self, x, shape, dim):
        self.dim = dim
        if _meta_made[0] and is_meta(x):  # (PyTorch's stride for the new dimension, as below)
            strides = list(meta_layout(x)[0])
            strides.insert(dim, x.shape[dim] * strides[dim] if dim < x.ndim else 1)
            out = x.reshape(shape)
            follow_view(x, out, strides)
            return out
        out = Reshape.forward(self, x, shape)
        if out.__class__ is not xp.ndarray or _unsqueezed(x, out, dim):
            return out
        return basic_view(x, (slice(None),) * dim + (None,))

    def backward(self, g):
        if type(g) is RecordedArray:  # create_graph: a squeeze of that dimension, recorded as PyTorch's
            return (RecordedArray(g.t.squeeze(_size_one_dims(self.shape, g.shape)[0])),)
        return Reshape.backward(self, g)


def _size_one_dims(short: tuple, long: tuple) -> list:
    """The dimensions of ``long`` (of size 1) that ``short`` lacks: those a squeeze took, an unsqueeze adds back."""
    dims, j = [], 0
    for i, n in enumerate(long):
        if j < len(short) and short[j] == n:
            j += 1
        else:
            dims.append(i)
    return dims


def _unsqueezed(x, out, dim: int) -> bool:
    """Whether NumPy's reshape ``out`` of ``x`` has PyTorch's strides for ``x.unsqueeze(dim)``: ``x``'s own, with the
    size times the stride of the dimension it goes before (1 at the end) inserted. NumPy lays an empty array out anew
    and may restride any other dimension of size 1 (``x.t().unsqueeze(1)`` of a (3, 1) ``x``)."""
    shape, before, after = x.shape, x.strides, out.strides  # (each NumPy property a new tuple: read once)
    new = before[dim] * shape[dim] if dim < len(shape) else x.itemsize
    return after[dim] == new and out.size != 0 and (1 not in shape or after == before[:dim] + (new,) + before[dim:])


class _Squeeze(Reshape):
    _saved_self_sym_sizes = property(input_sizes)

    def forward(self, x, shape, dims=()):
        if x.size == 0 and not (_meta_made[0] and is_meta(x)):  # (NumPy's reshape lays an empty array out anew)
            # PyTorch's squeeze drops the dimensions' sizes and strides, keeping the others' (an empty view of a
            # transposed or sliced tensor keeps its steps): x[..., 0, ...] there
            self.shape = x.shape
            return x[tuple(0 if i in dims else slice(None) for i in range(x.ndim))]
        return Reshape.forward(self, x, shape)

    def backward(self, g):
        if type(g) is RecordedArray:  # create_graph: an unsqueeze of each dimension taken, recorded as PyTorch's
            t = g.t
            for d in _size_one_dims(g.shape, self.shape):
                t = t.unsqueeze(d)
            return (RecordedArray(t),)
        return Reshape.backward(self, g)


class SqueezeBackward0(_Squeeze):
    """``squeeze()``."""


class SqueezeBackward1(_Squeeze):
    """``squeeze(dim)``."""

    _saved_dim = given_argument("dim")


class SqueezeBackward2(_Squeeze):
    """``squeeze(dims)``."""

    _saved_dim = given_argument("dim")


def _viewable(a, shape: tuple) -> bool:
    """Whether NumPy can give ``a`` the ``shape`` without copying (a meta array: whether PyTorch's view can, from the
    strides it reports)."""
    if _meta_made[0] and is_meta(a):
        return view_strides(a.shape, meta_layout(a)[0], shape) is not None
    if a.flags.c_contiguous or a.size <= 1:
        return True
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return False
    return True


def reshape(x: Tensor, *sizes, shape=None) -> Tensor:
    a = x._data
    if shape is None and not (_meta_made[0] and is_meta(a)):  # (plain int sizes as view's: the same target,
        # without the parsing; a meta array takes the general path, which reads PyTorch's strides it records)
        known = 1
        for s in sizes:
            if s.__class__ is not int or s < 0:
                break
            known *= s
        else:
            if known == a.size and a.flags.c_contiguous and sizes:  # (no sizes: PyTorch's TypeError, below)
                out = unrecorded_view(x, a.reshape, sizes, ViewBackward0)
                return out if out is not None else ViewBackward0.apply(x, shape=sizes)
    shape = _infer_shape(_shape_arg(sizes, shape, "shape", "reshape"), a.size, a)
    if _viewable(a, shape):
        out = unrecorded_view(x, _reshaped_view(a), shape, ViewBackward0)
        if out is not None:
            return out
        return (ViewBackward0 if x.is_contiguous() else ReshapeAliasBackward0).apply(x, shape=shape)
    return UnsafeViewBackward0.apply(x, shape=shape)


def reshape_owned(x: Tensor, *shape: int) -> Tensor:
    """``x``, a fresh result its caller made and alone holds, reshaped without making the result a view of it (as
    PyTorch's ``_unsafe_view``): the caller returns a tensor that is no view, as PyTorch's (in-place ops on it
    rewrite its own history, not a base's)."""
    return UnsafeViewBackward0.apply(x, shape=_infer_shape(shape, x._data.size, x._data))


def view(x: Tensor, *shape, size=None, dtype=None) -> Tensor:
    if size is None and dtype is None and not (_meta_made[0] and is_meta(x._data)):
        # The common case, sizes as plain non-negative ints whose product is the element count (attention's
        # ``view(B, T, heads, C // heads)``), without the general parsing below: the same target, test and view
        # (a meta array takes the general path, which reads PyTorch's strides it records; any other array this
        # one, meta tensors made or not: a model built on the meta device, then trained, keeps it)
        a = x._data
        known = 1
        for s in shape:
            if s.__class__ is not int or s < 0:
                break
            known *= s
        else:
            if known == a.size and shape and ((contiguous := a.flags.c_contiguous)
                                              or (layout := _view_layout(a, shape)) is not None):
                # (no sizes: below)
                out = unrecorded_view(x, a.reshape if contiguous or layout is True else _reshaped_view(a), shape,
                                      ViewBackward0)
                return out if out is not None else ViewBackward0.apply(x, shape=shape)
    if dtype is not None:
        if shape or size is not None:
            raise TypeError("view() takes either a shape or a dtype, not both")
        return view_dtype(x, dtype)
    if size is not None:
        shape = _shape_arg(shape, size)
    elif not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but expected one of:\n"
                        " * (torch.dtype dtype)\n * (tuple of ints size)")
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        from .. import _dtype

        if isinstance(shape[0], _dtype.dtype):
            return view_dtype(x, shape[0])
        # (anything else is one size: a NumPy integer's value, a float's or a Decimal's PyTorch's TypeError below)
    a = x._data
    target = _infer_shape(_shape_arg(shape), a.size, a)
    if not _viewable(a, target):  # (a view is possible when the strides allow it without a copy)
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    out = unrecorded_view(x, _reshaped_view(a), target, ViewBackward0)  # (reshape's test of the layout passed above)
    return out if out is not None else ViewBackward0.apply(x, shape=target)


def view_dtype(x: Tensor, dtype) -> Tensor:
    """``x.view(dtype)``: ``x``'s memory read as ``dtype`` (its bits, not its values converted), as PyTorch's: the
    last dimension scaled by the ratio of the element sizes (then it must have stride 1, and a larger element
    must not start mid-way). It shares ``x``'s memory and version counter but, as PyTorch's, takes no gradient
    (the bits of one dtype say nothing differentiable about another's)."""
    from .._dtype import SCALAR_TYPE_NAMES

    a = x._data
    src, dst = a.dtype.itemsize, dtype.np.itemsize
    if src != dst:
        what = (f"to view {SCALAR_TYPE_NAMES[x.dtype.name]} as {SCALAR_TYPE_NAMES[dtype.name]} "
                "(different element sizes)")
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.strides[-1] != src and a.shape[-1] != 1 and a.size:  # (NumPy gives an empty array's strides as 0)
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {a.strides[-1] // src}")
        if dst > src:
            ratio = dst // src
            if a.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {a.shape[-1]}")
            from ..storage import data_ptr, storage_root

            offset = (data_ptr(a) - data_ptr(storage_root(a))) // src
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
            for d in range(a.ndim - 1):
                if (a.strides[d] // src) % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got "
                                       f"{a.strides[d] // src}")
    if src != dst and a.strides[-1] != src:  # (a last dimension of 1 at another stride: NumPy wants it unit)
        a = xp.lib.stride_tricks.as_strided(a, a.shape, a.strides[:-1] + (src,))
    out = Tensor._make(a.view(dtype.np))
    out._vc = x._vc  # in-place changes through either bump the one version
    return out


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    nd = x._data.ndim
    if nd == 0:
        return reshape(x, 1)
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:  # (nothing to flatten: PyTorch's flatten returns the tensor itself, no node)
        return x
    shp = x._data.shape
    return reshape(x, shp[:s] + (-1 if x._data.size else _prod(shp[s:e + 1]),) + shp[e + 1:])


def ravel(input: Tensor) -> Tensor:
    """``torch.ravel``: the elements as a vector, a view of a contiguous tensor. As PyTorch's
    ``contiguous().view(-1)``: a copy of a tensor that is not contiguous (CloneBackward0, then a view)."""
    return reshape(contiguous(input), -1)


def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    d = _wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0:  # (a 0-d tensor has no dim to unflatten: PyTorch's error, its first lines)
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    shp = x._data.shape
    sizes = tuple(sizes)
    if any(s.__class__ is not int for s in sizes):  # (PyTorch's parser reads them as a list of its own: a bool first)
        sizes = index_sizes(sizes, "sizes", "unflatten", position=3)
    # (one dimension split: always a view, PyTorch's ``view``, ViewBackward0 whatever the layout)
    return view(x, shp[:d] + sizes + shp[d + 1:])


def _prod(xs) -> int:
    out = 1
    for v in xs:
        out *= v
    return out


class Permute(Node):
    is_view = True

    def forward(self, x, dims):
        self.dims = dims  # the inverse is worked out in backward: forward stays one attribute and a view
        out = x.transpose(dims)
        if _meta_made[0] and is_meta(x):
            strides = meta_layout(x)[0]
            follow_view(x, out, [strides[d] for d in dims])
        return out

    def backward(self, g):
        inverse = [0] * len(self.dims)  # out dim i came from input dim dims[i]
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return (g.transpose(inverse),)


class PermuteBackward0(Permute):
    """``permute``, ``T``, ``movedim``: the node under PyTorch's name, which shows the dims as given (``movedim``'s
    and ``T``'s wrapped)."""

    _saved_dims = given_argument("dims", lambda node: node.dims)


def _swapped(node: Node) -> tuple:
    """The two dims a transpose's ``node`` swapped, where it kept none as given (the same dim twice: no change)."""
    return tuple([i for i, d in enumerate(node.dims) if d != i] or [0, 0])


class TransposeBackward0(Permute):
    """``transpose``, ``swapaxes``, ``mT``: the node under PyTorch's name, which shows the two dims as given."""

    _saved_dim0 = given_argument("dim0", lambda node: _swapped(node)[0])
    _saved_dim1 = given_argument("dim1", lambda node: _swapped(node)[1])

    def backward(self, g):
        if type(g) is RecordedArray:  # create_graph: the gradient transposed back, recorded as PyTorch's (a
            swapped = [i for i, d in enumerate(self.dims) if d != i] or [0, 0]  # transpose, not a permute)
            return (RecordedArray(g.t.transpose(*swapped)),)
        return Permute.backward(self, g)


class TBackward0(Permute):
    """``t``."""

    def backward(self, g):
        if type(g) is RecordedArray:  # create_graph: ``t()`` again, recorded as PyTorch's (TBackward0)
            return (RecordedArray(g.t.t()),)
        return Permute.backward(self, g)


def permute(x: Tensor, *sizes, dims=None) -> Tensor:
    a = x._data
    nd = a.ndim
    if dims is None and len(sizes) == nd and not x.is_sparse:
        # The common case, each dimension once as a plain int in range (``permute(0, 2, 1, 3)``), without the
        # general parsing below: the same dims and view
        seen = 0
        for d in sizes:
            if d.__class__ is not int or not 0 <= d < nd or seen >> d & 1:
                break
            seen |= 1 << d
        else:
            out = unrecorded_view(x, a.transpose, sizes, PermuteBackward0)
            return out if out is not None else PermuteBackward0.apply(x, dims=sizes)
    dims = _shape_arg(sizes, dims, "dims", "permute")
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    given, dims = tuple(dims), tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {list(dims)}")
    if x.is_sparse:
        from .._sparse import permute as sparse_permute

        return sparse_permute(x, dims)
    wrapped = dims
    out = PermuteBackward0.apply(x, dims=wrapped)
    return out if wrapped == given else keep_as_given(out, dims=given)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    if x.is_sparse:  # (a sparse COO tensor: its index rows swapped)
        from .._sparse import transpose as sparse_transpose

        return sparse_transpose(x, dim0, dim1)
    nd = x._data.ndim
    if nd == 0:  # (dims in [-1, 0] only, checked as PyTorch does)
        _wrap_dim(dim0, 0)
        _wrap_dim(dim1, 0)
        return keep_as_given(TransposeBackward0.apply(x, dims=()), dim0=dim0, dim1=dim1)
    # (dims already in range, the usual case, without _wrap_dim's calls: attention transposes several per layer)
    d0 = dim0 if dim0.__class__ is int and 0 <= dim0 < nd else _wrap_dim(dim0, nd)
    d1 = dim1 if dim1.__class__ is int and 0 <= dim1 < nd else _wrap_dim(dim1, nd)
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    dims = tuple(dims)
    out = unrecorded_view(x, x._data.transpose, dims, TransposeBackward0)
    if out is not None:
        return out
    out = TransposeBackward0.apply(x, dims=dims)
    # (the dims as given where the node's own reading, the two swapped in order, differs: ``_swapped``)
    return out if dim0 is d0 and dim1 is d1 and d0 < d1 else keep_as_given(out, dim0=dim0, dim1=dim1)


def t(x: Tensor) -> Tensor:
    return t_as(x, "t")


def t_as(x: Tensor, name: str) -> Tensor:
    """``x.t()``, its errors naming the method ``name`` (``t_`` for the in-place one), as PyTorch's."""
    if x.is_sparse:
        from .._sparse import t as sparse_t

        return sparse_t(x, name)
    if x._data.ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    # (a 0-d or 1-d tensor: a view of it all the same, as PyTorch's)
    dims = (1, 0) if x._data.ndim == 2 else tuple(range(x._data.ndim))
    if _GradState.enabled and x._requires_grad:  # (recorded: unrecorded_view would decline; its call costs 0.2 µs)
        return TBackward0.apply(x, dims=dims)
    out = unrecorded_view(x, x._data.transpose, dims, TBackward0)
    return out if out is not None else TBackward0.apply(x, dims=dims)


def T(x: Tensor) -> Tensor:
    """``Tensor.T``: the dimensions reversed, with PyTorch's (once per process) deprecation warnings for other
    than 2-D tensors."""
    if x._data.ndim == 0:
        _warnings.warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif x._data.ndim != 2:
        _warnings.warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                            "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
                            "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                            "dimensions of a tensor.")
    return permute(x, dims=tuple(range(x._data.ndim - 1, -1, -1)))


def matrices_only(x: Tensor, name: str, identity_on_0d: str) -> bool:
    """PyTorch's check of ``tensor.<name>`` (mT, mH, adjoint()) on matrices or batches of them: 1-D input is a
    RuntimeError; 0-D input is deprecated (warned once) and False is returned: the op is ``identity_on_0d``."""
    if x._data.ndim == 0:
        _warnings.warn_once(f"{'' if name.endswith(')') else 'Tensor.'}{name} is deprecated on 0-D tensors. "
                            f"{identity_on_0d}")
        return False
    if x._data.ndim == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return True


def mT(x: Tensor) -> Tensor:
    """``Tensor.mT``: the last two dimensions swapped."""
    if matrices_only(x, "mT", "This function is the identity in these cases."):
        return transpose(x, -2, -1)
    return Permute.apply(x, dims=())


class Expand(Node):
    is_view = True

    def forward(self, x, shape):
        out = xp.broadcast_to(x, shape)  # always read-only
        repeated = out.size != x.size
        if _meta_made[0] and is_meta(x):  # (no storage to lie over: PyTorch's strides recorded)
            if not repeated and x.flags.writeable:
                out = xp.lib.stride_tricks.as_strided(x, out.shape, out.strides)
            follow_view(x, out, _expanded_strides(x.shape, meta_layout(x)[0], shape))
            return out
        if repeated and x.size and 1 not in shape or not repeated and not x.flags.writeable:
            # The common broadcast, to no dimension of size 1: NumPy's read-only view already has PyTorch's strides
            # (a kept dimension keeps its stride, a repeated or new one steps 0) and starts at the base's first
            # element (NumPy's strides differ only on dimensions of size 1)
            return out
        # PyTorch's strides (a new dimension's: the size times the stride of the one after it, where NumPy's is 0),
        # over the storage where it is one dense block, so the view keeps its base's storage and offset (NumPy
        # moves an empty view's start, and as_strided hides the base)
        strides = _expanded_strides(x.shape, tuple(n // x.itemsize for n in x.strides), shape)
        root = root_array(x)
        if min(x.strides, default=0) >= 0 and (root.flags.c_contiguous or root.flags.f_contiguous):
            view = view_at(x, root, shape, strides, 0)
            if view is not None:
                if repeated:  # a real broadcast stays read-only: in-place writes to it fail as PyTorch's do
                    view.flags.writeable = False
                return view
        if repeated:
            return out
        # No element repeated (only dims of size 1 added or kept): as in PyTorch, a view that can be written in place
        return xp.lib.stride_tricks.as_strided(x, out.shape, tuple(n * x.itemsize for n in strides))

    def backward(self, g):
        return (g,)  # the engine sums it back to the input's shape


def _expanded_strides(sizes: tuple, strides: tuple, target: tuple) -> tuple:
    """PyTorch's strides, in elements, of a tensor of ``sizes`` and ``strides`` expanded to ``target``: a kept
    dimension keeps its stride, a dimension of size 1 made another size (0 included) steps 0, and so does a new
    leading dimension, but one of size 1, which steps the size times the stride of the dimension after it (all 0
    for a 0-d tensor)."""
    if not sizes:
        return (0,) * len(target)
    out = [0] * len(target)
    lead = len(target) - len(sizes)
    for i in range(len(target) - 1, -1, -1):
        if i >= lead:
            out[i] = strides[i - lead] if sizes[i - lead] == target[i] else 0
        else:
            out[i] = target[i + 1] * out[i + 1] if target[i] == 1 else 0
    return tuple(out)


class ExpandBackward0(Expand):
    """``expand``'s node under PyTorch's name."""

    _saved_self_sym_sizes = property(input_sizes)


def expand(x: Tensor, *sizes, size=None) -> Tensor:
    sizes = _shape_arg(sizes, size, "size", "expand")
    shp = x._data.shape
    if len(sizes) < len(shp):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shp)})"
        )
    lead = len(sizes) - len(shp)
    target = []
    for i, s in enumerate(sizes):
        cur = shp[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            s = cur
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shp)}"
            )
        target.append(s)
    return ExpandBackward0.apply(x, shape=tuple(target))


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return expand(x, other._data.shape)


def broadcast_to(x: Tensor, shape) -> Tensor:
    return expand(x, tuple(shape))


def squeeze(x: Tensor, dim=None) -> Tensor:
    shp = x._data.shape
    if dim is None:
        new = tuple(s for s in shp if s != 1)
        node = SqueezeBackward0
        dims = range(len(shp))
    else:
        dims = wrap_dims_once(dim if isinstance(dim, (tuple, list)) else (dim,), len(shp))
        new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
        node = SqueezeBackward2 if isinstance(dim, (tuple, list)) else SqueezeBackward1
    if 0 in shp:  # (the dimensions taken out, for an empty tensor's strides: _Squeeze)
        out = node.apply(x, shape=new, dims=tuple(i for i in dims if shp[i] == 1))
    else:
        out = node.apply(x, shape=new)
    return out if dim is None else keep_as_given(out, dim=dim)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    a = x._data
    nd = a.ndim + 1
    d = dim if dim.__class__ is int and 0 <= dim < nd else _wrap_dim(dim, nd)
    shp = a.shape
    shape = shp[:d] + (1,) + shp[d:]
    # NumPy's reshape where it gives PyTorch's stride (the node's forward's test), without a node where none records
    if not (_meta_made[0] and is_meta(a) or x._requires_grad and _GradState.enabled):
        out = a.reshape(shape)
        if _unsqueezed(a, out, d):
            view = unrecorded_view(x, _as_is, out, UnsqueezeBackward0)
            if view is not None:
                return view
    return keep_dim_as_given(UnsqueezeBackward0.apply(x, shape=shape, dim=d), dim)


def _as_is(a):
    """``a`` itself: ``unrecorded_view``'s maker of a view already made."""
    return a


class Contiguous(Node):
    linear = True

    def forward(self, x, fmt=None):
        if _meta_made[0] and is_meta(x):  # (no data: the layout recorded, PyTorch's strides)
            out = meta_array(x.shape, x.dtype)
            record_layout(out, format_strides(x.shape, fmt), 0)
            return out
        return xp.ascontiguousarray(x) if fmt is None else laid_out(x, fmt)

    def backward(self, g):
        return (g,)


class CloneBackward0(Contiguous):
    """``contiguous`` of a tensor that is not: PyTorch's node is a clone's. Also the node of the copy an in-place
    op saves of its input (PyTorch's ``self.clone()``, ``inplace._saved_as_clone``)."""


def contiguous(x: Tensor, memory_format=None) -> Tensor:
    """``x`` when laid out as ``memory_format`` names (row-major by default; ``channels_last``: channels fastest),
    else a copy so laid out (PyTorch's strides, the same values)."""
    if channels_last_order(memory_format, x._data.ndim) is not None:  # (PyTorch's error for another rank)
        if x.is_contiguous(memory_format=memory_format):
            return x
        return CloneBackward0.apply(x, fmt=memory_format)
    if x._data.flags.c_contiguous:
        return x
    out = apply_one(CloneBackward0, x)  # (a float32/float64 copy: its node without apply's general path)
    if out is not None:
        return out
    return x if x.is_contiguous() else CloneBackward0.apply(x)


class Cat(Node):
    linear = True

    def forward(self, *arrays, dim, skip):
        self.dim, self.skip = dim, skip
        kept = [a for i, a in enumerate(arrays) if i not in skip] if skip else arrays
        self.bounds = list(xp.cumsum([a.shape[dim] for a in kept])[:-1])
        return _in_format(xp.concatenate(kept, axis=dim), arrays)

    def backward(self, g):
        grads = xp.split(g, self.bounds, axis=self.dim)
        for i in self.skip:  # a skipped 1-D empty input gets an empty gradient
            grads.insert(i, xp.zeros(0, dtype=g.dtype))
        return tuple(grads)


def tensor_list(tensors, name: str) -> list:
    """``tensors`` as PyTorch's argument parser takes a list of tensors (``cat``'s, ``stack``'s): a list or a tuple
    whose elements are all Tensors. Anything else is its TypeError: a Tensor (which would otherwise be iterated
    along its first dimension), a generator, a NumPy array, an element that is not a Tensor."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{c_type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {c_type_name(t)}")
    return list(tensors)


def _common(tensors, name: str) -> list:
    tensors = tensor_list(tensors, name)
    if not tensors:  # (PyTorch's cat, under any of its names, raises a ValueError, its stack a RuntimeError)
        if name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList")
        raise ValueError(f"{package_name()}.cat(): expected a non-empty list of Tensors")
    if _meta_made[0]:  # (meta tensors with CPU ones: PyTorch's error)
        check_operand_devices(*(t._data for t in tensors))
    first = tensors[0]
    if builtins.any(t._data.dtype != first._data.dtype for t in tensors):
        target = functools.reduce(lambda d, t: promote_types(d, t.dtype), tensors[1:], first.dtype)
        tensors = [promoted(t, target) for t in tensors]
    return tensors


@torch_named("StackBackward0")
class Stack(Node):
    """``stack``: one node, as PyTorch's (not an unsqueeze of each input, then a cat); each input's gradient is
    its slice of the output's."""

    linear = True
    _saved_dim = given_argument("dim", lambda node: node.dim)  # (as given)

    def forward(self, *arrays, dim):
        self.dim = dim
        out = xp.stack(arrays, axis=dim)
        if dim == arrays[0].ndim:  # (PyTorch's: a cat of the inputs unsqueezed there)
            return _in_format(out, arrays, extra=True)
        # (PyTorch's: their cat along dim, viewed with dim split in two)
        shape = list(arrays[0].shape)
        shape[dim] *= len(arrays)
        return _in_format(out.reshape(shape), arrays).reshape(out.shape)

    def backward(self, g):
        lead = (slice(None),) * self.dim
        return tuple(g[lead + (i,)] for i in range(g.shape[self.dim]))


def _in_format(out, arrays, extra: bool = False):
    """``out``, the concatenation of ``arrays`` (NumPy's, which keeps their layout), laid out as PyTorch's ``cat``
    allocates it: in the memory format all of them suggest (channels-last ones give a channels-last result), else
    row-major (a transposed tensor's cat is contiguous). ``extra``: as ``concatenated_format``'s."""
    if out.__class__ is not xp.ndarray or out.ndim < 2 or _meta_made[0] and is_meta(out):
        return out
    fmt = concatenated_format(arrays, extra)
    if fmt is contiguous_format:
        return out if out.flags.c_contiguous and out.size else xp.ascontiguousarray(out)
    return out if has_format_strides(out, fmt) else laid_out(out, fmt)


class CatBackward0(Cat):
    """``cat``'s node under PyTorch's name, which shows the dim as given."""

    _saved_dim = given_argument("dim", lambda node: node.dim)


def cat(tensors, dim: int = 0) -> Tensor:
    return _concatenated(tensors, dim, CatBackward0)


def concat(tensors, dim: int = 0) -> Tensor:
    """``cat`` under NumPy's name (PyTorch's alias; its errors name ``concat``)."""
    return _concatenated(tensors, dim, CatBackward0, "concat")


def concatenate(tensors, dim: int = 0) -> Tensor:
    """``cat`` under NumPy's name (PyTorch's alias; its errors name ``concatenate``)."""
    return _concatenated(tensors, dim, CatBackward0, "concatenate")


def _concatenated(tensors, dim: int, node: type, name: str = "cat") -> Tensor:
    """``cat``, its node of class ``node``; ``name`` is the function its errors name."""
    tensors = _common(tensors, name)
    for i, t in enumerate(tensors):  # (PyTorch refuses a 0-d tensor anywhere in the list first)
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # PyTorch skips 1-D empty tensors in cat (legacy behaviour)
    skip = tuple(i for i, t in enumerate(tensors) if t._data.shape == (0,))
    for i in skip:  # (a skipped input reaches no NumPy function: an uninitialised parameter's refused here)
        if tensors[i]._data.__class__ is UnmaterializedArray:
            raise uninitialized_error(tensors[i]._data.kind, f"<built-in method {name}>")
    if len(skip) == len(tensors):
        skip = skip[1:]
    kept = [t for i, t in enumerate(tensors) if i not in skip] if skip else tensors
    nd = kept[0]._data.ndim
    d = _wrap_dim(dim, nd)
    ref = kept[0]._data.shape
    for i, t in enumerate(tensors):
        s = t._data.shape
        if i in skip or s == ref:
            continue
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
        for j, (a, b) in enumerate(zip(ref, s)):
            if j != d and a != b:  # (PyTorch's message names the first dimension that differs, and its sizes)
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
    return keep_as_given(node.apply(*tensors, dim=d, skip=skip), dim=dim)



def stack(tensors, dim: int = 0) -> Tensor:
    tensors = _common(tensors, "stack")
    ref = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                f"{list(t._data.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(ref) + 1)
    return keep_as_given(Stack.apply(*tensors, dim=d), dim=dim)


def hstack(tensors) -> Tensor:
    """The tensors, each at least 1-d (``atleast_1d``), concatenated along dimension 1, or 0 for 1-d ones."""
    from .movement import atleast_1d

    tensors = [atleast_1d(t) for t in nonempty_tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """The tensors, each at least 2-d (``atleast_2d``: a 0-d one 1 x 1, a 1-d one a row), concatenated along
    dimension 0."""
    return _rows_stacked(tensors, "vstack")


def row_stack(tensors) -> Tensor:
    """``vstack`` under its alias (its type errors name ``row_stack``, its empty-list error ``vstack``, as
    PyTorch's)."""
    return _rows_stacked(tensors, "row_stack")


def _rows_stacked(tensors, name: str) -> Tensor:
    from .movement import atleast_2d

    tensors = tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([atleast_2d(t) for t in tensors], 0)


def nonempty_tensor_list(tensors, name: str) -> list:
    """``tensor_list``, and PyTorch's RuntimeError for an empty one (``hstack``, ``vstack``, ``dstack`` ...)."""
    tensors = tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def split(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    shp = x._data.shape
    if not shp:  # (a 0-d tensor's dim 0 wraps, but has no size to split)
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = dim if dim.__class__ is int and 0 <= dim < len(shp) else _wrap_dim(dim, len(shp))
    n = shp[d]
    step = split_size_or_sections
    if step.__class__ is int and step > 0 and n:
        # The common case, a positive int size (attention's q, k, v), in one plain loop: the pieces' bounds as the
        # general path's sizes below give them (the last piece shorter where the size does not divide)
        lead = (slice(None),) * d
        idxs = []
        start = 0
        while start < n:
            stop = start + step
            if stop > n:
                stop = n
            idxs.append(lead + (slice(start, stop),))
            start = stop
        return _as_given(view_pieces(x, idxs, SplitPieces), dim, step)
    if not isinstance(step, (tuple, list)):
        # one size: an int or an integer 0-d tensor as PyTorch's parser reads them (its SymInt: not a bool, nor a
        # NumPy integer or array)
        if not isinstance(step, (int, Tensor)):
            raise TypeError(f"split(): argument 'split_size' must be int, not {c_type_name(step)}")
        step = split_size_or_sections = int_argument(step, "split", "split_size")
        if step <= 0 and n > 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [builtins.min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    idxs, start = [], 0
    lead = (slice(None),) * d
    for s in sizes:  # narrow's view of each piece, its bounds checked above
        idxs.append(lead + (slice(start, start + s),))
        start += s
    whole = isinstance(split_size_or_sections, int)
    return _as_given(view_pieces(x, idxs, SplitPieces if whole else SplitWithSizesPieces), dim,
                     split_size_or_sections if whole else None)


def _as_given(pieces: tuple, dim: int, split_size: int | None = None) -> tuple:
    """``pieces``, whose one node keeps what PyTorch's saves as given: the dim (``keep_dim_as_given``), and a
    split's size (``_saved_split_size``; a size larger than the dimension, one piece, is kept as given)."""
    node = pieces[0].grad_fn if pieces else None
    if node is not None and isinstance(node, (SplitPieces, SplitWithSizesPieces, UnbindPieces)):
        if split_size is not None:
            node.split_size = split_size
        keep_dim_as_given(pieces, dim)
    return pieces


def split_with_sizes(x: Tensor, split_sizes, dim: int = 0) -> tuple:
    """``split`` into pieces of the given sizes, which must sum to the size of ``dim``."""
    return split(x, list(split_sizes), dim)


def expand_copy(x: Tensor, size, *, implicit: bool = False) -> Tensor:
    """``x.expand(size)`` in memory of its own (PyTorch's copy variant of the view)."""
    return expand(x, size=tuple(size)).clone()


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    chunks = int_argument(chunks, "chunk", "chunks", False)
    if not x._data.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x._data.shape[_wrap_dim(dim, x._data.ndim)]
    if n == 0:  # PyTorch returns `chunks` empty pieces
        return split(x, [0] * chunks, dim)
    return split(x, -(-n // chunks), dim)


def unbind(x: Tensor, dim: int = 0) -> tuple:
    d = _wrap_dim(dim, x._data.ndim)  # (a 0-d tensor's 0 or -1 wraps to 0: PyTorch's error names that)
    if not x._data.ndim:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    lead = (slice(None),) * d
    return _as_given(view_pieces(x, [lead + (i,) for i in range(x._data.shape[d])], UnbindPieces), dim)


@torch_named("FlipBackward0")
class Flip(Node):
    linear = True
    _saved_dims = given_argument("dims", lambda node: node.dims)

    def forward(self, x, dims):
        self.dims = dims
        # PyTorch's flip copies (writes to the result must not reach x), laid out as x
        return laid_out_like(x, xp.flip(x, dims).copy())

    def backward(self, g):
        return (xp.flip(g, self.dims),)


def flip(x: Tensor, dims) -> Tensor:
    if not isinstance(dims, int):  # (a sequence of ints, or one int of another kind: PyTorch's TypeError else)
        dims = index_sizes(dims if isinstance(dims, (tuple, list)) else (dims,), "dims", "flip",
                           whole=not isinstance(dims, (tuple, list)))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = wrap_dims_once(dims, x._data.ndim)
    # (a scalar's dim 0 or -1: nothing to flip)
    return keep_as_given(Flip.apply(x, dims=wrapped if x._data.ndim else ()), dims=dims)


@torch_named("RepeatBackward0")
class Repeat(Node):
    linear = True
    _saved_repeats = property(lambda node: tuple(node.reps))
    _saved_self_sym_sizes = property(input_sizes)

    def forward(self, x, reps):
        self.in_shape = (1,) * (len(reps) - x.ndim) + x.shape
        self.reps = reps
        return xp.tile(x, reps)

    def backward(self, g):  # fold each repeated copy back onto the input and sum
        shp = []
        for r, s in zip(self.reps, self.in_shape):
            shp += [r, s]
        g = g.reshape(shp).sum(axis=tuple(range(0, 2 * len(self.reps), 2)))
        return (g,)


def repeat(x: Tensor, *sizes, repeats=None) -> Tensor:
    reps = _shape_arg(sizes, repeats, "repeats", "repeat")
    if len(reps) < x._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    if builtins.min(reps, default=0) < 0:  # (the result's shape decides: an empty tensor repeated -1 times is empty)
        check_nonnegative([r * n for r, n in zip(reps, (1,) * (len(reps) - x._data.ndim) + x._data.shape)])
        reps = tuple(builtins.max(r, 0) for r in reps)
    return Repeat.apply(x, reps=reps)

