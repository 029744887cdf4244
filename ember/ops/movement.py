"""Data movement that is not a view: roll, repeat_interleave.

Each output element is one input element, so backward moves the gradient back
(roll by the opposite shift; repeat_interleave sums each element's copies).
"""

from __future__ import annotations

from .._arg_aliases import MethodArgumentError, ParserRuntimeError
from .._backend import xp
from .._memory_format import array_memory_format, contiguous_format, has_format_strides, laid_out
from .._meta import is_meta, meta_array
from .._size import c_type_name, int_argument
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, torch_named
from ..autograd.saved_attributes import given_argument, keep_as_given


@torch_named("RollBackward0")
class Roll(Node):
    linear = True
    _saved_shifts = given_argument("shifts", lambda node: node.shifts)
    _saved_dims = given_argument("dims", lambda node: node.dims or ())

    def forward(self, x, shifts, dims):
        self.shifts, self.dims, self.shape = shifts, dims, x.shape
        if dims is None:  # roll the flattened tensor, then restore the shape
            return xp.roll(x.reshape(-1), shifts).reshape(x.shape)
        # PyTorch's result is laid out as the input's suggested memory format (row-major for a transposed or
        # expanded input), where NumPy's roll keeps the input's stride order
        out, fmt = xp.roll(x, shifts, dims), array_memory_format(x)
        return out if has_format_strides(out, fmt) else laid_out(out, fmt)

    def backward(self, g):
        if self.dims is None:
            return (xp.roll(g.reshape(-1), -self.shifts[0]).reshape(self.shape),)
        return (xp.roll(g, tuple(-s for s in self.shifts), self.dims),)


def roll(x: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements along ``dims`` by ``shifts`` (ints or tuples of equal length), wrapping around.

    Without ``dims`` the tensor is flattened, rolled and reshaped back.
    """
    if isinstance(shifts, xp.ndarray):  # (PyTorch's parser takes no NumPy array for its list of ints)
        if shifts.ndim == 0:  # (read as one int, then an internal assert of PyTorch's parser: a RuntimeError)
            raise ParserRuntimeError("roll(): argument 'shifts' must be a tuple or list of ints, not a 0-d "
                                     "numpy.ndarray (expected tuple or list)")
        raise MethodArgumentError("roll", "shifts", 1, f"must be tuple of ints, not {c_type_name(shifts)}")
    shifts = tuple(int(s) for s in shifts) if isinstance(shifts, (tuple, list)) or \
        isinstance(shifts, Tensor) and shifts.ndim else (int_argument(shifts, "roll", "shifts"),)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(x, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if x._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    out = Roll.apply(x, shifts=shifts, dims=tuple(_wrap_dim(d, x._data.ndim) for d in dims))
    return keep_as_given(out, dims=dims)  # (PyTorch's node shows the dims as given)


def repeat_interleave(x: Tensor, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place: [a, b] -> [a, a, b, b].

    ``repeats`` is an int or a 1-D tensor (one count per slice). Without ``dim`` the input is flattened.
    ``repeat_interleave(counts)`` alone returns each index i repeated counts[i] times.
    """
    from .indexing import index_select
    from .shape import reshape

    if repeats is None:  # torch.repeat_interleave(counts)
        counts = x._data
        if is_meta(counts):  # (no counts to read: the result's length is output_size, as PyTorch's)
            return Tensor._make(meta_array((_meta_output_size(output_size),), xp.int64))
        return Tensor._make(xp.repeat(xp.arange(counts.size, dtype=xp.int64), counts.reshape(-1)))
    if dim is None:
        x, dim = reshape(x, -1), 0
    d = _wrap_dim(dim, x._data.ndim)
    if not isinstance(repeats, Tensor):
        return _repeat_each(x, int(repeats), d, output_size)
    n = x._data.shape[d] if x._data.ndim else 1
    if isinstance(repeats, Tensor) and repeats._data.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    counts = repeats._data.reshape(-1) if isinstance(repeats, Tensor) else xp.asarray([int(repeats)])
    if counts.size not in (1, n):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {n}")
    if is_meta(counts):  # meta repeats: a meta index of output_size entries (PyTorch's meta result)
        index = meta_array((_meta_output_size(output_size),), xp.int64)
        return index_select(x if x._data.ndim else reshape(x, 1), d, Tensor._make(index))
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    index = xp.repeat(xp.arange(n, dtype=xp.int64), counts if counts.size == n else int(counts[0]))
    if output_size is not None and output_size != index.size:
        raise RuntimeError(
            f"repeat_interleave: output_size {output_size} does not match the repeats' total {index.size}")
    if x._data.ndim == 0:
        x = reshape(x, 1)
    return index_select(x, d, Tensor._make(index))  # its gradient sums each element's copies


def _repeat_each(x: Tensor, repeats: int, d: int, output_size: int | None) -> Tensor:
    """``repeat_interleave`` by an int, as PyTorch composes it (and records it: UnsqueezeBackward0, ExpandBackward0,
    CloneBackward0, ViewBackward0): each slice along ``d`` given a new dimension after it, expanded ``repeats``
    times, laid out contiguously and flattened back into ``d``."""
    from .shape import unsqueeze

    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    y = unsqueeze(x, d + 1)
    sizes = list(y._data.shape)
    sizes[d + 1] = repeats
    if output_size is not None and output_size != (x._data.shape[d] if x._data.ndim else 1) * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {x._data.shape[d] * repeats} but "
                           f"got {output_size}")
    return y.expand(sizes).clone(memory_format=contiguous_format).flatten(d, d + 1)


def _meta_output_size(output_size: int | None) -> int:
    """The length of ``repeat_interleave``'s result with meta repeats, which have no values to count: the
    ``output_size`` given, else PyTorch's error."""
    if output_size is None:
        raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
    return output_size


def tile(x: Tensor, dims) -> Tensor:
    """``repeat`` with ``dims`` padded with leading 1s to the tensor's number of dimensions."""
    from .shape import index_sizes, repeat

    if isinstance(dims, (tuple, list)):
        dims = index_sizes(dims, "dims", "tile")
    else:  # (one int of any kind; anything else PyTorch's TypeError, not truncated)
        dims = index_sizes((dims,), "dims", "tile", whole=True)
    dims = (1,) * (x._data.ndim - len(dims)) + dims
    return repeat(x, dims)


def movedim(x: Tensor, source, destination) -> Tensor:
    """The dimensions ``source`` moved to positions ``destination`` (ints or sequences), the others keeping
    their order; a view."""
    from .shape import permute

    nd = x._data.ndim
    # (one dim: an int, a NumPy integer or a 0-d tensor, read by _wrap_dim as PyTorch's parser reads an int)
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src, dst = [_wrap_dim(d, nd) for d in src], [_wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src}) or `destination` ({dst})")
    rest = iter(d for d in range(nd) if d not in src)
    placed = dict(zip(dst, src))
    return permute(x, [placed[i] if i in placed else next(rest) for i in range(nd)])


moveaxis = movedim


def tensor_split(x: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into ``n`` nearly equal parts (the first ``size % n`` one longer), or at the given indices."""
    from .indexing import narrow

    if not x._data.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections._data.ndim == 0:
        indices_or_sections = int(indices_or_sections.item())
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        lengths = [size // n + (1 if i < size % n else 0) for i in range(n)]
        bounds = list(xp.cumsum([0] + lengths))
    else:
        points = [int(i) for i in (indices_or_sections.tolist() if isinstance(indices_or_sections, Tensor)
                                   else indices_or_sections)]
        bounds = [0] + points + [size]
    parts = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        start, stop = min(max(int(start), 0), size), min(max(int(stop), 0), size)
        parts.append(narrow(x, d, start, max(stop - start, 0)))
    return tuple(parts)


def _directional_split(name: str, min_dims: int, x: Tensor, indices_or_sections) -> tuple:
    """``hsplit`` / ``vsplit`` / ``dsplit``: ``tensor_split`` along dimension 1 (0 for 1-D input), 0 or 2, a
    number of sections that must divide the dimension, as PyTorch's."""
    nd = x._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {nd} dimensions!")
    d = {"hsplit": 1 if nd > 1 else 0, "vsplit": 0, "dsplit": 2}[name]
    if isinstance(indices_or_sections, int) and (indices_or_sections == 0
                                                 or x._data.shape[d] % indices_or_sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                           f"{x._data.shape[d]} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(x, indices_or_sections, d)


def hsplit(x: Tensor, indices_or_sections) -> tuple:
    return _directional_split("hsplit", 1, x, indices_or_sections)


def vsplit(x: Tensor, indices_or_sections) -> tuple:
    return _directional_split("vsplit", 2, x, indices_or_sections)


def dsplit(x: Tensor, indices_or_sections) -> tuple:
    return _directional_split("dsplit", 3, x, indices_or_sections)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors: output i varies along dimension i (``"ij"``, the default, which
    PyTorch warns (once) it will stop being: pass it), or with the first two dimensions swapped (``"xy"``,
    Cartesian)."""
    from .. import _warnings
    from .shape import expand, reshape

    if indexing is None:
        # (PyTorch's is raised where its torch/functional.py calls the kernel: filters for module="torch" apply)
        _warnings.warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                            "argument.", module="torch.functional")
        indexing = "ij"
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors[:-1], tensors[1:]):  # PyTorch promotes no types here
        if a.dtype != b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.shape}")
    sizes = [t._data.size for t in tensors]
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    shape = [sizes[i] for i in order]
    out = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[order.index(i)] = -1
        out.append(expand(reshape(t, view), shape))
    return tuple(out)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors as rows, in ``itertools.product`` order: shape (N1 * ... * Nk, k); a
    single tensor is returned as it is. The rows are meshgrid's flattened grids stacked, so gradients flow to every
    input."""
    from .shape import reshape, stack

    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return stack([reshape(g, -1) for g in meshgrid(*tensors, indexing="ij")], 1)


def fliplr(x: Tensor) -> Tensor:
    """Flip the columns (dimension 1) of a tensor of at least 2 dimensions."""
    from .shape import flip

    if x._data.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d (got shape {list(x.shape)})")
    return flip(x, 1)


def flipud(x: Tensor) -> Tensor:
    """Flip the rows (dimension 0) of a tensor of at least 1 dimension."""
    from .shape import flip

    if x._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, 0)


def rot90(x: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
    from .shape import flip, transpose

    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(x, d1), d0, d1)
    if k == 2:
        return flip(x, (d0, d1))
    if k == 3:
        return flip(transpose(x, d0, d1), d1)
    return x.clone()


def _atleast(nd: int, *tensors):
    """PyTorch's atleast_Nd, op by op as its composite records them: a 0-d tensor reshaped (ViewBackward0), a 1-D
    or 2-D one unsqueezed (2-d: a leading dim; 3-d: (n,) to (1, n, 1), (m, n) to (m, n, 1), UnsqueezeBackward0s)."""
    from .shape import reshape, unsqueeze

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        n = t._data.ndim
        if n == 0 and nd:
            t = reshape(t, (1,) * nd)
        elif n < nd:
            if nd == 3:
                t = unsqueeze(unsqueeze(t, 0), -1) if n == 1 else unsqueeze(t, -1)
            else:
                t = unsqueeze(t, 0)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dimension."""
    return _atleast(1, *tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dimensions (leading 1s added)."""
    return _atleast(2, *tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dimensions (a 1-D (n,) becomes (1, n, 1), a 2-D one gets a trailing 1)."""
    return _atleast(3, *tensors)


def column_stack(tensors) -> Tensor:
    """1-D and 0-d tensors become columns, then everything is concatenated along dimension 1."""
    from .shape import cat, nonempty_tensor_list, reshape

    tensors = nonempty_tensor_list(tensors, "column_stack")
    return cat([reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in tensors], 1)


def dstack(tensors) -> Tensor:
    """Concatenate along the third dimension after ``atleast_3d``."""
    from .shape import cat, nonempty_tensor_list

    return cat([atleast_3d(t) for t in nonempty_tensor_list(tensors, "dstack")], 2)
