"""Pooling: max and average (1-d, 2-d, 3-d) over sliding windows, adaptive average by pooling matrices.

Max and average pooling loop over the prod(kernel) offsets of a window (``conv_geometry.offsets``):
each offset is one strided view of the input covering every output position at once, so
the work is a few whole-array NumPy calls per offset, in the input's memory layout (a
batch-last input stays batch-last and takes the compiled 2-d max pooling). Adaptive average pooling is
separable, so it is a matrix product per spatial dim: ``P_h @ x @ P_w^T``.
"""

from __future__ import annotations

import functools
import math

from ..._backend import xp
from ..._dtype import bool_, int64, not_implemented_for, np_kind
from ..._kernels import pooling as compiled
from ..._kernels.policy import policy
from ..._memory_format import channels_last, laid_out, strides_in_channels_last_order
from ..._parallel import parallel_for, parallel_kernel
from ..._size import c_type_name, parsed_int
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named, version_checked
from ...autograd.recorded import is_recorded
from ...ops.shape import index_sizes
from .conv import ntuple
from .conv_geometry import crop_spatial, offsets, out_size, pad_spatial, window


def _overlap(kernel, stride, dilation) -> bool:
    """Whether windows share input elements (their gradients must then be added, not written)."""
    return any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))


def _scatter(like, out, padded_shape, kernel, stride, dilation, parts):
    """The gradient w.r.t. the padded input: gx[window(offset)] (+)= a * m for each offset's part (a, m)
    (m None: just a), where ``parts(c0, c1)`` yields the parts of channels c0..c1; ``out`` is the output's
    spatial size. The adjoint of reading the windows; allocated in the memory layout of array ``like``;
    channels split over threads (windows never cross channels)."""
    if is_recorded(like):  # create_graph: no threads writing through views; each part added out of place
        gx = xp.zeros_like(like, shape=padded_shape)
        for offs, (a, m) in zip(offsets(kernel), parts(0, padded_shape[1])):
            target = window(offs, out, stride, dilation, 2, 0)
            gx[target] = gx[target] + (a if m is None else a * m)
        return gx
    add = _overlap(kernel, stride, dilation)
    tiled = all(s == d * (k - 1) + 1 and s * n == p  # windows touch, without gaps, and cover the input
                for k, s, d, n, p in zip(kernel, stride, dilation, out, padded_shape[2:]))
    gx = xp.empty_like(like, shape=padded_shape)

    def run(c0: int, c1: int) -> None:
        g = gx[:, c0:c1]
        if not tiled:  # tiled: every element is written
            g[...] = 0
        for offs, (a, m) in zip(offsets(kernel), parts(c0, c1)):
            target = g[window(offs, out, stride, dilation, 2, 0)]
            if add:
                target += a if m is None else a * m
            elif m is None:
                target[...] = a
            else:
                xp.multiply(a, m, out=target)

    parallel_for(run, padded_shape[1], gx.size)
    return gx


def _layout(a) -> list:
    """The order of ``a``'s axes in memory, outermost first."""
    return sorted(range(a.ndim), key=a.strides.__getitem__, reverse=True)  # (stable: ties keep their order)


def _copy_as(a, like):
    """``a``'s values in ``like``'s memory layout."""
    out = xp.empty_like(like, dtype=a.dtype)
    out[...] = a
    return out


def _bl(a):
    """(N, C, H, W) -> its (C, H, W, N) view."""
    return a.transpose(1, 2, 3, 0)


def _compiled_2d(*arrays) -> bool:
    """Whether the compiled 2-d kernels take arrays (N, C, H, W): batch-last in memory, a float dtype."""
    return (not is_recorded(*arrays) and arrays[0].ndim == 4 and arrays[0].dtype in (xp.float32, xp.float64)
            and all(_bl(a).flags.c_contiguous for a in arrays)
            and policy.use_compiled())


def _planes_order(*arrays) -> list | None:
    """The axis order (outer two in memory order, then H, W) in which the compiled "planes" gradient kernel takes
    arrays (N, C, H, W) whose rows are innermost in memory and whose outer two dims are in one order for all (as
    vmap's per-example convolutions leave their (C, N, H, W) outputs); None where it does not apply. (Forward's
    kernel takes 2x2 windows only: a loop over a runtime count of offsets ran no faster than NumPy's passes.)"""
    first = arrays[0]
    if (is_recorded(*arrays) or first.ndim != 4 or first.dtype not in (xp.float32, xp.float64)
            or not policy.use_compiled()):
        return None
    order = _layout(first)
    if order[2:] != [2, 3] or any(_layout(a) != order or a.strides[-1] != a.itemsize for a in arrays):
        return None
    return order


_COMPILED_FLOATS = (xp.dtype(xp.float32), xp.dtype(xp.float64))


def _one_row_planes(xpad) -> bool:
    """Whether 1-d max pooling's padded (N, C, 1, L) input (2-d pooling's of one row: not 3-d pooling's of depth 1)
    takes the compiled one-row kernel as it is: C-contiguous rows, a float dtype, N > 1 (a batch of one is
    batch-last as well: ``_compiled_2d``'s kernel)."""
    return (xpad.ndim == 4 and xpad.shape[2] == 1 and xpad.shape[0] > 1 and xpad.__class__ is xp.ndarray
            and xpad.flags.c_contiguous and xpad.dtype in _COMPILED_FLOATS and policy.use_compiled())


def _running_max(views, out, arg, c0: int, c1: int) -> None:
    """The reference max pooling of channels c0..c1: the running maximum over the window offsets' ``views``; arg =
    the offset of the first maximum: offsets come in increasing order, so it is the largest offset that beat the
    running maximum (uint8 max, no masks)."""
    o, a = out[:, c0:c1], arg[:, c0:c1]
    o[...] = views[0][:, c0:c1]
    a[...] = 0
    step = xp.empty_like(a)
    for i, view in enumerate(views[1:], 1):
        v = view[:, c0:c1]
        better = v > o
        xp.maximum(o, v, out=o)  # propagates NaN, as PyTorch's max pooling does
        xp.multiply(better, i, out=step, casting="unsafe")
        xp.maximum(a, step, out=a)


class _Unbatchable(Node):
    """A pooling node that takes an unbatched (C, *spatial) input as PyTorch's kernels do, computed as a batch of
    one with no unsqueeze or squeeze recorded (``unbatched``): the subclass's ``_forward``/``_backward`` see
    (N, C, *spatial) arrays."""
    unbatched = False

    def forward(self, x, *args, unbatched: bool = False, **params):
        if not unbatched:
            return self._forward(x, *args, **params)
        self.unbatched = True
        return self._forward(x[None], *args, **params)[0]

    def backward(self, g):
        if not self.unbatched:
            return self._backward(g)
        return (self._backward(g[None])[0][0],)


class MaxPoolNd(_Unbatchable):
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)

    def _forward(self, x, kernel, stride, pads, dilation):
        fill = -xp.inf if np_kind(x.dtype) == "f" else xp.iinfo(x.dtype).min
        xpad = pad_spatial(x, pads, fill)
        out_sp = out_size(xpad.shape[2:], kernel, stride, dilation)
        taps = math.prod(kernel)
        if _one_row_planes(xpad):  # 1-d pooling of (N, C, L): the planes branch below, without its layout tests
            out = xp.empty(xpad.shape[:2] + out_sp, xpad.dtype)
            arg = xp.empty(out.shape, xp.min_scalar_type(taps - 1))
            rows = xpad.shape[0]

            def run(n0: int, n1: int) -> None:
                compiled.max_pool2d_planes_row(xpad[n0:n1], kernel[1], *stride, dilation[1], out[n0:n1], arg[n0:n1])

            parallel_for(run, rows, out.size * taps)
            return self._finish(x, xpad, out, arg, fill, kernel, stride, pads, dilation)
        out = xp.empty_like(xpad[window((0,) * len(kernel), out_sp, stride, dilation, 2, 0)])  # the input's order
        arg = xp.empty_like(out, dtype=xp.min_scalar_type(taps - 1))

        one_row = len(kernel) == 2 and kernel[0] == 1  # 1-d pooling's (1, k) windows
        planes = _planes_order(xpad, out) if tuple(kernel) == (2, 2) or one_row else None
        rows = x.shape[1]
        # (the compiled kernels with a ``prange`` form run as one region on numba's OpenMP threads under ``omp``)
        least = policy.min_parallel_elements
        if _compiled_2d(xpad, out):
            xb, ob, ab = _bl(xpad), _bl(out), _bl(arg)
            parallel_kernel(compiled.max_pool2d, lambda k, c0, c1: k(xb[c0:c1], *kernel, *stride, *dilation,
                                                                    ob[c0:c1], ab[c0:c1]),
                            rows, out.size * taps, least)
            return self._finish(x, xpad, out, arg, fill, kernel, stride, pads, dilation)
        if planes is not None:  # rows innermost (NCHW, vmap's (C, N, H, W)): 2x2 and one-row windows compiled
            xo, oo, ao = xpad.transpose(planes), out.transpose(planes), arg.transpose(planes)
            rows = xo.shape[0]
            if one_row:
                def run(c0: int, c1: int) -> None:
                    compiled.max_pool2d_planes_row(xo[c0:c1], kernel[1], *stride, dilation[1], oo[c0:c1], ao[c0:c1])
            else:
                parallel_kernel(compiled.max_pool2d_planes_2x2,
                                lambda k, c0, c1: k(xo[c0:c1], *stride, *dilation, oo[c0:c1], ao[c0:c1]),
                                rows, out.size * taps, least)
                return self._finish(x, xpad, out, arg, fill, kernel, stride, pads, dilation)
        else:
            views = [xpad[window(offs, out_sp, stride, dilation, 2, 0)] for offs in offsets(kernel)]

            def run(c0: int, c1: int) -> None:
                _running_max(views, out, arg, c0, c1)

        parallel_for(run, rows, out.size * taps)
        return self._finish(x, xpad, out, arg, fill, kernel, stride, pads, dilation)

    def _finish(self, x, xpad, out, arg, fill, kernel, stride, pads, dilation):
        """The indices of NaN windows and of windows that took the padding's value; the node's saved state."""
        if xp.isnan(out.sum()):  # one cheap pass that is NaN if any output is: point arg at each window's NaN
            self._nan_args(xpad, out, arg, kernel, stride, dilation)
        if any(lo or hi for lo, hi in pads) and (out == fill).any():
            self._padding_args(x.shape[2:], out == fill, arg, kernel, stride, pads, dilation)
        self.saved = (arg,)
        self.meta = (xpad.shape, kernel, stride, pads, dilation)
        return out

    @staticmethod
    def _nan_args(xpad, out, arg, kernel, stride, dilation) -> None:
        nan = xp.isnan(out)
        for i, offs in enumerate(offsets(kernel)):  # the last NaN of a window wins, as in PyTorch
            arg[nan & xp.isnan(xpad[window(offs, out.shape[2:], stride, dilation, 2, 0)])] = i

    @staticmethod
    def _padding_args(in_spatial, lowest, arg, kernel, stride, pads, dilation) -> None:
        """A window whose maximum is the padding's value (every element inside the input -inf, or the lowest
        integer) may have taken a padding position: PyTorch's index (and gradient) is then the window's first
        element inside the input, where its kernel starts."""
        koff = xp.unravel_index(arg, kernel)
        inside = xp.ones(arg.shape, dtype=bool)
        first = []
        for d in range(len(kernel)):
            shape = [1] * arg.ndim
            shape[2 + d] = arg.shape[2 + d]
            start = (xp.arange(arg.shape[2 + d]) * stride[d] - pads[d][0]).reshape(shape)
            at = start + koff[d] * dilation[d]
            inside &= (at >= 0) & (at < in_spatial[d])
            first.append(xp.broadcast_to(xp.maximum(dilation[d] - 1 - start, 0) // dilation[d], arg.shape))
        fix = lowest & ~inside
        arg[fix] = xp.ravel_multi_index(tuple(f[fix] for f in first), kernel)

    def _backward(self, g):
        (arg,) = self.saved
        padded_shape, kernel, stride, pads, dilation = self.meta
        if len(padded_shape) == 4 and padded_shape[2] == 1 and arg.flags.c_contiguous and \
                g.__class__ is xp.ndarray and g.dtype in _COMPILED_FLOATS and policy.use_compiled():
            return (crop_spatial(self._rows_backward(g, arg, padded_shape, stride[1], dilation[1]), pads),)
        # e.g. from a Flatten: one conversion, then every pass is in one layout (create_graph: no layouts)
        # (a broadcast gradient, as sum's, or one with rows not contiguous: copied too, for the compiled kernels)
        if not is_recorded(g) and (_layout(g) != _layout(arg) or g.strides[-1] != g.itemsize):
            g = _copy_as(g, arg)
        least = policy.min_parallel_elements  # (one OpenMP region under ``omp``)
        if _compiled_2d(g, arg):
            gx = xp.empty_like(g, shape=padded_shape)  # zeroed by the kernel, channel by channel, as it adds
            gb, ab, gxb = _bl(g), _bl(arg), _bl(gx)
            parallel_kernel(compiled.max_pool2d_grad, lambda k, c0, c1: k(gb[c0:c1], ab[c0:c1], kernel[1], *stride,
                                                                          *dilation, gxb[c0:c1]),
                            padded_shape[1], g.size, least)
            return (crop_spatial(gx, pads),)
        planes = _planes_order(g, arg)
        if planes is not None:
            gx = xp.empty_like(g, shape=padded_shape)  # zeroed by the kernel, plane by plane, as above
            go, ao, gxo = g.transpose(planes), arg.transpose(planes), gx.transpose(planes)
            parallel_kernel(compiled.max_pool2d_planes_grad, lambda k, c0, c1: k(go[c0:c1], ao[c0:c1], kernel[1],
                                                                                 *stride, *dilation, gxo[c0:c1]),
                            g.shape[planes[0]], g.size, least)
            return (crop_spatial(gx, pads),)

        def parts(c0: int, c1: int):
            gc, ac = g[:, c0:c1], arg[:, c0:c1]
            return ((gc, ac == i) for i in range(math.prod(kernel)))

        return (crop_spatial(_scatter(g, g.shape[2:], padded_shape, kernel, stride, dilation, parts), pads),)

    @staticmethod
    def _rows_backward(g, arg, padded_shape, stride: int, dilation: int):
        """1-d pooling's gradient (planes of one row, C-contiguous indices, as an (N, C, L) input leaves them): the
        compiled kernel on (N C, L) rows, ``g`` copied C-contiguous first if it is not (sum's broadcast gradient).
        The values of the planes kernel (each position's contributions in output order), without its layout
        tests (about a fifth of 1-d max pooling's backward on (16, 32, 32))."""
        if not g.flags.c_contiguous:
            g = xp.ascontiguousarray(g)
        rows = padded_shape[0] * padded_shape[1]
        gx = xp.zeros(padded_shape, g.dtype)
        g2, a2, gx2 = g.reshape(rows, -1), arg.reshape(rows, -1), gx.reshape(rows, -1)

        def add(r0: int, r1: int) -> None:
            compiled.max_pool1d_rows_grad(g2[r0:r1], a2[r0:r1], stride, dilation, gx2[r0:r1])

        parallel_for(add, rows, g.size)
        return gx

    def indices(self, in_spatial):
        """Flat positions (within each (n, c) plane of the unpadded input) of the maxima."""
        (arg,) = self.saved
        _, kernel, stride, pads, dilation = self.meta
        koff = xp.unravel_index(arg, kernel)
        coords = []
        for d in range(len(kernel)):
            shape = [1] * arg.ndim
            shape[2 + d] = arg.shape[2 + d]
            start = (xp.arange(arg.shape[2 + d]) * stride[d] - pads[d][0]).reshape(shape)
            coords.append(start + koff[d] * dilation[d])
        out = xp.ravel_multi_index(coords, in_spatial).astype(xp.int64)
        return out[0] if self.unbatched else out


class AvgPoolNd(_Unbatchable):
    linear = True
    float32_compute = True
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)

    def _forward(self, x, kernel, stride, pads, divisor):
        nd = len(kernel)
        xpad = pad_spatial(x, pads)
        ones = (1,) * nd
        out_sp = out_size(xpad.shape[2:], kernel, stride, ones)
        views = [xpad[window(offs, out_sp, stride, ones, 2, 0)] for offs in offsets(kernel)]
        out = xp.empty_like(views[0])  # the input's memory order

        def run(c0: int, c1: int) -> None:  # channels split over threads
            o = out[:, c0:c1]
            o[...] = views[0][:, c0:c1]
            for view in views[1:]:
                o += view[:, c0:c1]
            if o.dtype.kind == "i":  # (PyTorch's int64 kernel: C++'s division, truncating toward zero)
                q = xp.abs(o) // divisor
                o[...] = xp.where(o < 0, -q, q)
            else:
                o /= divisor

        parallel_for(run, x.shape[1], out.size * len(views))
        self.divisor = divisor
        self.meta = (xpad.shape, kernel, stride, pads)
        return out

    def _backward(self, g):
        padded_shape, kernel, stride, pads = self.meta
        share = g / self.divisor

        def parts(c0: int, c1: int):
            return ((share[:, c0:c1], None) for _ in offsets(kernel))

        ones = (1,) * len(kernel)
        return (crop_spatial(_scatter(g, g.shape[2:], padded_shape, kernel, stride, ones, parts), pads),)


def _pool_pads(size, kernel, stride, padding, dilation, ceil_mode, channels: int, op: str = ""):
    """((lo, hi), ...): ``hi`` grows in ceil mode so the last partial window exists (if it starts in bounds).
    An input too small for the windows fails with PyTorch's words, which name the sizes per channel
    (``channels`` of them) and depend on the ``op``: "max_pool1d" (without indices) and "avg_pool3d" have their
    own checks."""
    outs = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        if p > span // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        rounding = math.ceil if ceil_mode else math.floor
        out = rounding((n + 2 * p - span) / s) + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        outs.append(out)
    if op == "avg_pool3d" and any(n < k for n, k in zip(size, kernel)):  # (whatever the padding, as PyTorch's)
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})"
                           .format(*size, *kernel))
    if any(out <= 0 for out in outs):
        if op == "max_pool1d":
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {outs[0]}")
        lead = (channels, 1) if len(size) == 1 else (channels,)  # (1-d pooling: PyTorch's 2-d of a (C, 1, L) view)
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (*lead, *size)))}). Calculated output size: "
                           f"({'x'.join(map(str, (*lead, *outs)))}). Output size is too small")
    return tuple((p, max(p, (out - 1) * s + d * (k - 1) + 1 - n - p))
                 for n, k, s, p, d, out in zip(size, kernel, stride, padding, dilation, outs))


def _size_arguments(op: str, arguments) -> None:
    """PyTorch's argument parser's checks of a pooling function's int-array arguments (``kernel_size``, ``stride``,
    ``padding``, ``dilation``; ``arguments``: (value, name, position), None skipped), in its two passes: first, left
    to right, that each is an int or a sequence whose first element is one ("avg_pool1d(): argument 'kernel_size'
    (position 2) must be tuple of ints, not float", "... but found element of type str at pos 0"; a None stride is
    its default), then the
    sequences' other elements, unpacked right to left as PyTorch's compiled call evaluates its arguments ("argument
    'stride' failed to unpack the object at pos 2": a module's stride, its kernel size repeated, is named first).
    Positions as the module's positional call gives them (PyTorch names none for an argument the caller gave the
    function by keyword; ember always does)."""
    given = [(v, name, position) for v, name, position in arguments if v is not None or name != "stride"]
    for value, name, position in given:
        if value.__class__ is int:
            continue
        if isinstance(value, (tuple, list)):
            index_sizes(value[:1], name, op, position)
            continue
        try:
            parsed_int(value, bool_ok=False)
        except TypeError:
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, not "
                            f"{c_type_name(value)}") from None
    for value, name, position in reversed(given):
        if isinstance(value, (tuple, list)):
            index_sizes(value, name, op, position)


def _pool_args(name, input, nd, kernel_size, stride, padding, dilation):
    # (the parser's checks of the sizes' types come first, as PyTorch's; avg_pool has no dilation, given as 1)
    _size_arguments(name, ((kernel_size, "kernel_size", 2), (stride, "stride", 3), (padding, "padding", 4),
                           (dilation, "dilation", 5)))
    if input._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected {nd + 1}D or {nd + 2}D input, got input of size {list(input.shape)}")
    kernel = ntuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else ntuple(stride, nd, "stride")
    padding, dilation = ntuple(padding, nd, "padding"), ntuple(dilation, nd, "dilation")
    # PyTorch's checks, in its order (a zero stride would otherwise divide by zero in the output size)
    if 0 in stride:
        raise RuntimeError(f"{name}() stride must be greater than zero, but got 0" if name == "max_pool1d"
                           else "stride should not be zero")
    for what, values in (("kernel size", kernel), ("stride", stride), ("dilation", dilation)):
        if min(values) <= 0:
            raise RuntimeError(f"{name}(): {what} should be greater than zero, but got {list(values)}")
    if min(padding) < 0:
        raise RuntimeError(f"{name}(): pad must be non-negative, but got pad: {list(padding)}")
    return kernel, stride, padding, dilation


@torch_named("MaxPool2DWithIndicesBackward0")
class MaxPool2D(MaxPoolNd):
    """2-d max pooling's node, named as PyTorch's."""


@torch_named("MaxPool3DWithIndicesBackward0")
class MaxPool3D(MaxPoolNd):
    """3-d max pooling's node, named as PyTorch's. (1-d pooling is the 2-d node on an unsqueezed view, squeezed
    back, as PyTorch's.)"""


_MAX_POOL_NODES = {2: MaxPool2D, 3: MaxPool3D}


@torch_named("AvgPool2DBackward0")
class AvgPool2D(AvgPoolNd):
    """2-d (and 1-d) average pooling's node, named as PyTorch's."""


@torch_named("AvgPool3DBackward0")
class AvgPool3D(AvgPoolNd):
    """3-d average pooling's node, named as PyTorch's."""


def max_pool(input: Tensor, nd: int, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
             return_indices: bool = False):
    kernel, stride, padding, dilation = _pool_args(f"max_pool{nd}d", input, nd, kernel_size, stride, padding, dilation)
    pads = _pool_pads(input._data.shape[-nd:], kernel, stride, padding, dilation, ceil_mode,
                      input._data.shape[-nd - 1], "max_pool1d" if nd == 1 and not return_indices else "")
    if not input.is_floating_point():  # PyTorch's kernels: no bool, and 1-d pooling without indices floats only
        if nd == 1 and not return_indices:
            raise not_implemented_for("max_pool1d_impl", input.dtype)
        if input.dtype == bool_:
            raise not_implemented_for(f"max_pool{max(nd, 2)}d", input.dtype)
    if nd == 1:  # PyTorch's: its 2-d pooling of a (..., 1, L) view, squeezed back (after the 1-d checks)
        out = _max_pool(input.unsqueeze(-2), 2, (1, *kernel), (1, *stride), ((0, 0), *pads), (1, *dilation),
                        return_indices)
        return tuple(o.squeeze(-2) for o in out) if return_indices else out.squeeze(-2)
    return _max_pool(input, nd, kernel, stride, pads, dilation, return_indices)


def _max_pool(x: Tensor, nd: int, kernel, stride, pads, dilation, return_indices: bool):
    """Max pooling's node on x, its arguments checked (``pads``: ``_pool_pads``'s)."""
    unbatched = x._data.ndim == nd + 1  # (PyTorch's kernels take an unbatched input as it is)
    # (PyTorch saves the input)
    node_class = _MAX_POOL_NODES[nd]
    out = version_checked(node_class.apply(x, kernel=kernel, stride=stride, pads=pads, dilation=dilation,
                                           unbatched=unbatched), x)
    if not return_indices:
        return out
    node = out.grad_fn or node_class()
    if out.grad_fn is None:  # no graph recorded: recompute the argmax to get the indices
        node.forward(x._data, kernel, stride, pads, dilation, unbatched=unbatched)
    return out, Tensor._make(node.indices(x._data.shape[-nd:]))


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of (N, C, L); ``stride`` defaults to ``kernel_size``; padding counts as -inf."""
    return max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of (N, C, H, W); ``stride`` defaults to ``kernel_size``; padding counts as -inf."""
    return max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of (N, C, D, H, W); ``stride`` defaults to ``kernel_size``; padding counts as -inf."""
    return max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool_with_indices(nd: int):
    """PyTorch's ``max_pool{nd}d_with_indices``: the pooling and the indices of its maxima, always (its
    ``return_indices`` is ignored, as PyTorch's)."""
    def pooled(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
        return max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, True)

    pooled.__name__ = pooled.__qualname__ = f"max_pool{nd}d_with_indices"
    pooled.__doc__ = f"``max_pool{nd}d`` and the indices of its maxima (``return_indices`` is ignored)."
    return pooled


max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = map(_max_pool_with_indices, (1, 2, 3))


def _window_counts(n, k, s, pads, limit_lo, limit_hi):
    """How many positions of [limit_lo, limit_hi) (input coordinates) each 1-d window covers."""
    lo, hi = pads
    starts = xp.arange(0, n + lo + hi - k + 1, s) - lo
    return xp.minimum(starts + k, limit_hi) - xp.maximum(starts, limit_lo)


def avg_pool(input: Tensor, nd: int, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
             count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    kernel, stride, padding, _ = _pool_args(f"avg_pool{nd}d", input, nd, kernel_size, stride, padding, 1)
    if not input.is_floating_point() and input.dtype != int64:  # (PyTorch's kernels: floating point and int64)
        raise not_implemented_for("avg_pool3d_out_frame" if nd == 3 else "avg_pool2d", input.dtype)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 1:  # as max_pool's: PyTorch's 2-d pooling of a (..., 1, L) view, squeezed back
        _pool_pads(input._data.shape[-1:], kernel, stride, padding, (1,), ceil_mode, input._data.shape[-2])
        return avg_pool(input.unsqueeze(-2), 2, (1, *kernel), (1, *stride), (0, *padding), ceil_mode,
                        count_include_pad, divisor_override).squeeze(-2)

    def run(x):
        size = x._data.shape[-nd:]
        pads = _pool_pads(size, kernel, stride, padding, (1,) * nd, ceil_mode, x._data.shape[-nd - 1],
                          f"avg_pool{nd}d")
        number = float if x.is_floating_point() else int  # (an int64 input: a truncating integer division)
        if divisor_override is not None:
            divisor = number(divisor_override)
        elif all(lo == hi == 0 for lo, hi in pads):
            divisor = number(math.prod(kernel))
        else:  # windows overlapping padding (or the ceil-mode overhang) divide by what they cover
            divisor = xp.ones((), dtype=x._data.dtype)
            for d, (n, k, s, p) in enumerate(zip(size, kernel, stride, pads)):
                lim = (-p[0], n + p[0]) if count_include_pad else (0, n)
                counts = _window_counts(n, k, s, p, *lim).astype(x._data.dtype)
                divisor = divisor * counts.reshape((-1,) + (1,) * (nd - 1 - d))
        # (PyTorch saves the input)
        node_class = AvgPool2D if nd == 2 else AvgPool3D
        return version_checked(node_class.apply(x, kernel=kernel, stride=stride, pads=pads, divisor=divisor,
                                                unbatched=x._data.ndim == nd + 1), x)

    return run(input)  # (PyTorch's kernels take an unbatched input as it is)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over windows of (N, C, L); ``stride`` defaults to ``kernel_size``."""
    return avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over windows of (N, C, H, W); ``stride`` defaults to ``kernel_size``."""
    return avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over windows of (N, C, D, H, W); ``stride`` defaults to ``kernel_size``."""
    return avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


class AdaptiveAvgPool(Node):
    """Adaptive average pooling's node: a product with one averaging matrix per spatial dim (2-d and 3-d: 1-d
    pooling is the 2-d node on an unsqueezed view, as PyTorch's)."""
    float32_compute = True
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)

    def forward(self, x, mats):
        """``mats``: one (out, in) matrix per spatial dim; None for a dim other than the last whose size stays (the
        identity: 1-d pooling's unsqueezed dim)."""
        self.mats, self.layout = mats, _layout(x)
        out = _rows_times(x, mats[-1].T)
        if len(mats) >= 2 and mats[-2] is not None:
            out = xp.matmul(mats[-2], out)
        if len(mats) == 3 and mats[0] is not None:  # depth: the product on the axis swapped next to the last
            out = xp.matmul(mats[0], out.swapaxes(-3, -2)).swapaxes(-3, -2)
        if not xp.isfinite(out).all():  # (a non-finite input shows here, spread by the products' 0 * inf: redone
            out = _by_bins(x, mats)  # bin by bin; the result, smaller than the input, is the cheaper one to check)
        return _suggested_layout(out, x)

    def backward(self, g):
        mats = self.mats
        if type(g) is xp.ndarray and not xp.isfinite(g).all():  # (as in forward: each gradient stays in its bins)
            return (_by_bins(g, [None if m is None else m.T for m in mats]),)
        half = None
        if is_recorded(g) and g.dtype != mats[-1].dtype:  # create_graph in half precision (run in its dtype): the
            half, g = g.dtype, g.astype(mats[-1].dtype)  # products in float32 as the first backward's, rounded once
        if len(mats) == 3 and mats[0] is not None:
            g = xp.matmul(mats[0].T, g.swapaxes(-3, -2)).swapaxes(-3, -2)
        if len(mats) >= 2 and mats[-2] is not None:
            g = xp.matmul(mats[-2].T, g)
        if is_recorded(g):  # create_graph: a plain product (no out=)
            gx = xp.matmul(g, mats[-1])
            return (gx if half is None else gx.astype(half),)
        # in the input's memory layout: a batch-last input keeps its layout in backward too
        order, shape = self.layout, g.shape[:-1] + mats[-1].shape[1:]
        if order == sorted(order):
            return (_rows_times(g, mats[-1]),)
        gx = xp.empty(tuple(shape[i] for i in order), g.dtype).transpose(*(order.index(i) for i in range(g.ndim)))
        xp.matmul(g, mats[-1], out=gx)
        return (gx,)


def _by_bins(a, mats):
    """The product of ``a`` with one matrix per trailing axis (None: that axis stays), each output element summing
    only its row's nonzero entries: a non-finite value reaches only the bins that hold it, as in PyTorch's kernels."""
    for axis, mat in zip(range(-len(mats), 0), mats):
        if mat is not None:
            rows = []
            for row in mat:
                cols = xp.flatnonzero(row)
                rows.append(xp.tensordot(xp.take(a, cols, axis=axis), row[cols], axes=([axis], [0])))
            a = xp.stack(rows, axis=axis)
    return a


def _suggested_layout(out, x):
    """``out`` laid out as PyTorch's adaptive average pooling lays its result out for the input ``x``: channels last
    where a 4-d ``x`` is (its suggest_memory_format; the 3-d pool's kernel has no channels-last form), else
    contiguous (the depth product's swapped axes are not)."""
    if type(out) is not xp.ndarray or type(x) is not xp.ndarray:
        return out
    if x.ndim == 4 and not x.flags.c_contiguous and strides_in_channels_last_order(x, channels_last):
        return out if strides_in_channels_last_order(out, channels_last) else laid_out(out, channels_last)
    return out if out.flags.c_contiguous else xp.ascontiguousarray(out)


def _rows_times(a, m):
    """a @ m (a new C-contiguous array) for a of any rank: one 2-D product over a's rows, copied C-contiguous first
    if they are not (a broadcast gradient): a stacked matmul makes one small product per leading index, 1-d
    pooling's (N, C, 1, L) view N * C of them (measured 26 us against 7 for (16, 32, 1, 32) float32)."""
    if type(a) is xp.ndarray:
        return xp.matmul(xp.ascontiguousarray(a).reshape(-1, a.shape[-1]), m).reshape(a.shape[:-1] + m.shape[1:])
    return xp.matmul(a, m)


@functools.lru_cache(maxsize=64)
def _adaptive_matrix(n: int, m: int, dtype):
    """(m, n) matrix averaging bin i = [floor(i n / m), ceil((i + 1) n / m)) of a length-n axis (read-only: one
    per sizes and dtype, kept)."""
    i = xp.arange(m)
    start, end = (i * n) // m, -((-(i + 1) * n) // m)
    j = xp.arange(n)
    inside = (j >= start[:, None]) & (j < end[:, None])
    mat = (inside / (end - start)[:, None]).astype(dtype)
    mat.flags.writeable = False
    return mat


def adaptive_output_size(name: str, input: Tensor, output_size, nd: int) -> tuple:
    """The adaptive pools' output size, ``None`` entries taken from the input, checked as PyTorch checks it: a
    negative size or an empty spatial input dimension is an error; a zero size gives an empty result."""
    size = input._data.shape[-nd:]
    out = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(out) != nd:
        raise ValueError(f"{name}: output_size must have {nd} elements, got {output_size}")
    out = tuple(n if o is None else int(o) for n, o in zip(size, out))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    # PyTorch's max pools and 3-d average pool refuse every empty non-batch dim, its 1-d/2-d average pools the
    # spatial ones only (zero channels give an empty result)
    first = input._data.ndim - nd if name.startswith("adaptive_avg") and nd < 3 else int(input._data.ndim == nd + 2)
    for dim, n in enumerate(input._data.shape):
        if n == 0 and dim >= first:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    return out


@torch_named("AdaptiveAvgPool2DBackward0")
class AdaptiveAvgPool2D(AdaptiveAvgPool):
    """2-d (and 1-d) adaptive average pooling's node, named as PyTorch's."""


@torch_named("AdaptiveAvgPool3DBackward0")
class AdaptiveAvgPool3D(AdaptiveAvgPool):
    """3-d adaptive average pooling's node, named as PyTorch's."""


def adaptive_avg_pool(input: Tensor, output_size, nd: int) -> Tensor:
    if input._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_avg_pool{nd}d: expected {nd + 1}D or {nd + 2}D input, got {list(input.shape)}")
    out = adaptive_output_size(f"adaptive_avg_pool{nd}d", input, output_size, nd)
    if not input.is_floating_point() and not all(o == 1 for o in out):  # (where all are 1: mean's error, as PyTorch)
        raise not_implemented_for("adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d", input.dtype)
    if nd == 1:  # PyTorch's: its 2-d pooling of a (..., 1, L) view, squeezed back (after the 1-d checks)
        return adaptive_avg_pool(input.unsqueeze(-2), (1, *out), 2).squeeze(-2)
    if all(o == 1 for o in out):  # PyTorch's kernels take the mean over the spatial dims here (MeanBackward1)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    size = input._data.shape[-nd:]
    dt = input._data.dtype
    dt = xp.float32 if dt.itemsize == 2 else dt  # (half precision computes in float32: its weights too, 1/3 unrounded)
    mats = tuple(None if n == o and d < nd - 1 else _adaptive_matrix(n, o, dt)
                 for d, (n, o) in enumerate(zip(size, out)))
    return (AdaptiveAvgPool2D if nd == 2 else AdaptiveAvgPool3D).apply(input, mats=mats)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, L) into ``output_size`` bins (bin edges floor/ceil of i*L/out, as PyTorch)."""
    return adaptive_avg_pool(input, output_size, 1)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) into ``output_size`` bins per spatial dim; None keeps that dim's size."""
    return adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, D, H, W) into ``output_size`` bins per spatial dim; None keeps that dim's size."""
    return adaptive_avg_pool(input, output_size, 3)
