"""``as_strided``: a view of a tensor's storage with the sizes and strides given.

The view starts at ``storage_offset`` elements into the storage (default: where the tensor starts) and steps
``stride[d]`` elements along dimension ``d``, as PyTorch's ``as_strided`` does; it shares memory with the
tensor (writes show in both) and must lie inside the storage. Its gradient is PyTorch's: the output's gradient
summed into the storage positions it was read from (an element read twice gets both), then read back at the
input's positions.
"""

from __future__ import annotations

from .._backend import xp
from .._meta import follow_view, is_meta, meta_array, meta_layout, record_layout
from .._meta import made as _meta_made
from .._out import overlaps_itself
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, torch_named
from ..autograd.recorded import RecordedArray, formula_tensor, is_recorded
from ..autograd.saved_attributes import given_argument, keep_as_given
from ..storage import _bytes_of, data_ptr, root_array, storage_root


def _storage_positions(numel: int, size, stride, offset: int):
    """The storage index of each element of a (size, stride, offset) view of ``numel`` elements."""
    flat = xp.arange(numel, dtype=xp.int64)
    return xp.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * flat.itemsize for s in stride))


class AsStrided(Node):
    is_view = True

    def forward(self, x, size, stride, storage_offset):
        if _meta_made[0] and is_meta(x):
            return self._meta_forward(x, size, stride, storage_offset)
        root, itemsize = storage_root(x), x.itemsize  # (a .grad: its own storage, not its store's buffer)
        own_offset = (data_ptr(x) - data_ptr(root)) // itemsize
        offset = own_offset if storage_offset is None else storage_offset
        numel = root.nbytes // itemsize
        needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
        if needed > numel:
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
                               f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out "
                               f"of bounds for storage of size {root.nbytes}")
        self.input = (x.shape, tuple(s // itemsize for s in x.strides), own_offset, numel)
        self.output = (size, stride, offset)
        elements = _bytes_of(root)[offset * itemsize:numel * itemsize].view(x.dtype)
        # an ndarray over ``elements`` (not stride_tricks.as_strided, whose result hides its base): the view's
        # base chain leads to the storage, so storage_offset(), data_ptr() and sharing answer as PyTorch's
        out = xp.ndarray(size, x.dtype, buffer=elements, strides=tuple(s * itemsize for s in stride))
        if overlaps_itself(out):  # (a zero stride: read-only as expand's, refused by in-place writes as PyTorch's)
            out.flags.writeable = False
        return out

    def _meta_forward(self, x, size, stride, storage_offset):
        """Of a meta tensor: a meta view of ``size`` reporting ``stride`` and the offset; ember keeps no meta
        storage's size, so the bounds PyTorch checks against it are not checked."""
        own_strides, own_offset = meta_layout(x)
        offset = own_offset if storage_offset is None else storage_offset
        numel = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else offset
        self.input = (x.shape, own_strides, own_offset, numel)
        self.output = (size, stride, offset)
        out = meta_array(size, x.dtype)
        record_layout(out, stride, offset)
        return out

    def backward(self, g):
        shape, strides, own_offset, numel = self.input
        read = _storage_positions(numel, *self.output).reshape(-1)
        if is_recorded(g):  # create_graph: recorded as PyTorch's formula
            return (RecordedArray(_recorded_backward(formula_tensor(g), read, self.input, self.output)),)
        storage_grad = xp.zeros(numel, dtype=g.dtype)
        xp.add.at(storage_grad, read, g.reshape(-1))
        return (storage_grad[_storage_positions(numel, shape, strides, own_offset)],)


def _recorded_backward(g: Tensor, read, input_geometry, output_geometry) -> Tensor:
    """AsStrided's gradient in recorded ops, as PyTorch's ``as_strided_backward`` writes it: the gradient copied
    into the storage through the output's view (summed by an ``index_add`` where the view reads an element more than
    once), then read back through the input's view."""
    shape, strides, own_offset, numel = input_geometry
    storage = Tensor._make(xp.zeros(numel, dtype=g._data.dtype))
    if xp.unique(read).size < read.size:  # overlapping (an expand's zero stride, windows)
        storage = storage.index_add(0, Tensor._make(read), g.reshape(-1))
    else:
        storage.as_strided(*output_geometry).copy_(g)
    return storage.as_strided(shape, strides, own_offset)


def as_strided(x: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``x``'s storage with ``size`` and ``stride`` (in elements), from ``storage_offset``."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} != {len(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    return AsStrided.apply(x, size=size, stride=stride, storage_offset=storage_offset)


def strided_view(x, shape: tuple, strides: tuple):
    """An array of ``shape`` and byte ``strides`` over ``x``'s memory, starting at ``x``'s first element, whose
    base chain leads to the storage (as ``AsStrided``'s)."""
    root = root_array(x)
    if not x.size or not (root.flags.c_contiguous or root.flags.f_contiguous):  # (no flat bytes to lie over)
        return xp.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)
    out = xp.ndarray(shape, x.dtype, buffer=_bytes_of(root), offset=data_ptr(x) - data_ptr(root), strides=strides)
    if not x.flags.writeable:
        out.flags.writeable = False
    return out


@torch_named("UnfoldBackward0")
class Unfold(Node):
    """``Tensor.unfold``: the windows of ``size`` elements ``step`` apart along ``dim`` as a new last dimension,
    a view (each window's elements are ``x``'s); windows that overlap share elements."""

    is_view = True
    _saved_self_sym_sizes = property(lambda node: node.args[0])
    _saved_dimension = given_argument("dimension", lambda node: node.args[1])
    _saved_size = property(lambda node: node.args[2])
    _saved_step = property(lambda node: node.args[3])

    def forward(self, x, dim, size, step):
        self.args = (x.shape, dim, size, step)
        if _meta_made[0] and is_meta(x):  # (PyTorch's layout, from the strides the meta tensor reports)
            s = meta_layout(x)[0]
            shape = (size,) if x.ndim == 0 else x.shape[:dim] + ((x.shape[dim] - size) // step + 1,) + \
                x.shape[dim + 1:] + (size,)
            out = meta_array(shape, x.dtype)
            follow_view(x, out, (1,) if x.ndim == 0 else s[:dim] + (s[dim] * step,) + s[dim + 1:] + (s[dim],))
            return out
        if x.ndim == 0:
            return strided_view(x, (size,), (x.itemsize,))
        count = (x.shape[dim] - size) // step + 1
        s = x.strides
        return strided_view(x, x.shape[:dim] + (count,) + x.shape[dim + 1:] + (size,),
                            s[:dim] + (s[dim] * step,) + s[dim + 1:] + (s[dim],))

    def backward(self, g):
        shape, dim, size, step = self.args
        if not shape:
            return (g.sum(),)
        out = xp.zeros_like(g, shape=shape)
        count = g.shape[dim]
        lead = (slice(None),) * dim
        for j in range(size):  # the j-th element of every window: positions j, j + step, ... (distinct)
            out[lead + (slice(j, j + (count - 1) * step + 1, step),)] += g[..., j]
        return (out,)



def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` consecutive slices along ``dimension``, ``step`` apart: the windows replace that
    dimension and their contents become a new last dimension. A view of ``x``, as PyTorch's (writes through it
    reach ``x``; overlapping windows share elements); a 0-d ``x`` gives a 1-d view of ``size`` (0 or 1)."""
    ndim = x._data.ndim
    d = _wrap_dim(dimension, ndim)
    n = x._data.shape[d] if ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return keep_as_given(Unfold.apply(x, dim=d, size=size, step=step), dimension=dimension)
