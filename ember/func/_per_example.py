"""Linear and convolution with per-example weights that are one weight expanded: per-sample gradients' ops.

Under ``vmap(grad(loss))`` every example's parameters are the same values (``grad_leaf`` expands them to the
batch without a copy: batch stride 0), but each example needs its own gradient. These nodes compute the forward
and the input gradient with the one shared weight (one large GEMM / convolution over the whole batch, as an
unbatched layer) and only the weight gradient per example (a batched product of each example's output gradient
with its own inputs), which is what PyTorch's per-sample gradients compute too.

Under create_graph the formulas read the node's inputs (x and the batched weight), never the arrays forward derived
from them (the shared weight ``w[0]``, the im2col columns): only the inputs are swapped for recorded tensors of the
graph (autograd/recorded.py), so a derived array would be a constant and its term of the second derivative lost.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._kernels import im2col as compiled
from .._kernels.policy import policy
from .._parallel import matmul, parallel_for, side_by_side, stack_matmul
from ..autograd.graph import Node
from ..autograd.recorded import RecordedArray, formula_tensor, is_recorded
from ..nn._ops.conv_geometry import offsets, out_size, pad_spatial, window


def _matmul(a, b):
    """``a @ b`` (2-d, or stacks with equal leading dims) with every GEMM on one OpenBLAS thread (``gemm_block``)
    and the work split over ember's threads: by the stack's first dim (``stack_matmul``), or by blocks of columns
    or rows (``matmul``)."""
    if a.ndim > 2 and a.shape[0] > 1:
        return stack_matmul(a, b)
    return matmul(a, b)


def shares_one_weight(value) -> bool:
    """Whether a batch value is a plain tensor whose examples are one array (batch stride 0)."""
    from .._tensor import Tensor

    return type(value) is Tensor and value._data.ndim > 0 and value._data.strides[0] == 0


def _outer(gt, x):
    """``gt * x`` for gt (B, out, 1) and x (B, 1, in): each example's outer product, split by example among the
    intra-op threads (one NumPy pass on the calling thread was the largest serial piece of a per-sample head's
    backward: 64 x 10 x 1,568 products, 4 MB written)."""
    if type(gt) is not xp.ndarray or type(x) is not xp.ndarray:  # (recorded arrays, under create_graph)
        return gt * x
    out = xp.empty((gt.shape[0], gt.shape[1], x.shape[2]), xp.result_type(gt, x))

    def run(lo: int, hi: int) -> None:
        xp.multiply(gt[lo:hi], x[lo:hi], out=out[lo:hi])

    parallel_for(run, gt.shape[0], out.size, policy.min_elementwise_elements)
    return out


class PerExampleLinear(Node):
    """x (B, L, in) @ w[b].T + b[b] for w (B, out, in) with one weight in every example."""

    float32_compute = True

    def forward(self, x, w, b):
        batch, rows = x.shape[0], x.shape[1]
        shared = w[0]
        out = _matmul(x.reshape(batch * rows, -1), shared.T).reshape(batch, rows, shared.shape[0])
        if b is not None:
            out += b[:, None, :]
        self.saved = (x, w)  # (w itself, not its shared example: under create_graph, w is what is differentiated)
        return out

    def backward(self, g):
        x, w = self.saved
        nx, nw, nb = self.needs_input_grad
        gx = None
        if nx and is_recorded(g, w):
            # create_graph: each example's input gradient through its own weight (g[b] @ w[b]), so that its
            # derivative with respect to w reaches every example's weight, not the one shared array the first-order
            # product reads (that array, a slice of w, would be a constant of the recorded formula)
            gx = g @ w
        elif nx:
            gx = _matmul(g.reshape(-1, g.shape[-1]), w[0]).reshape(x.shape)
        gw = None
        if nw:  # one row per example (a classifier's head): an outer product, which as a GEMM of inner size 1 is slow
            gw = _outer(g.transpose(0, 2, 1), x) if x.shape[1] == 1 else _matmul(g.transpose(0, 2, 1), x)
        gb = g.sum(1) if nb else None
        return gx, gw, gb


def _im2col(x, kernel, stride, dilation, pads):
    """x (M, C, *sp) -> (cols (C, *k, M, *out), out): each example's columns one contiguous block per channel and
    offset, so that an example's column matrix is a strided 2-d view (no copy for its weight gradient)."""
    xpad = pad_spatial(x, pads)
    out_sp = out_size(xpad.shape[2:], kernel, stride, dilation)
    cols = xp.empty((x.shape[1], *kernel, x.shape[0], *out_sp), x.dtype)
    # (the compiled im2col on these strided views took twice as long as NumPy's copy per kernel offset)
    every = list(offsets(kernel))

    def copy(lo: int, hi: int) -> None:  # kernel offsets lo..hi: each writes its own block of cols
        for offs in every[lo:hi]:
            cols[(slice(None), *offs)] = xpad[window(offs, out_sp, stride, dilation, 2, 0)].swapaxes(0, 1)

    # split by offset, so that every copy is the same call as on one thread (by example, the copies were smaller
    # and cost the worker more than they saved the calling thread); from the elementwise threshold, as many short
    # NumPy passes: a small CNN's first layer (451 Ki elements at 64 examples, 0.3 ms) would save less than a
    # hand-off costs on an idle machine
    parallel_for(copy, len(every), cols.size, policy.min_elementwise_elements)
    return cols, out_sp


def _compiled(*arrays) -> bool:
    """Whether the compiled 2-d col2im takes these plain float32/float64 arrays."""
    return (len(arrays[0].shape) == 4 and all(type(a) is xp.ndarray and a.dtype in (xp.float32, xp.float64)
                                               for a in arrays) and policy.use_compiled())


def _by_channel(cols):
    """gcols (C, kh, kw, M, Ho, Wo) as the (C, M, kh, kw, Ho, Wo) view: the column layout of the compiled
    (N, C, H, W) col2im, with this module's channels in the place of its samples and the examples in the place of
    its channels."""
    return cols.transpose(0, 3, 1, 2, 4, 5)


def _input_grad(gm, shared, x_shape, stride, pads, dilation, groups: int):
    """dL/dx from the output gradient gm (O, B, N, *out) and the shared weight: the columns' gradient (one GEMM),
    added back where im2col took each kernel offset's block (col2im)."""
    o, kernel = shared.shape[0], shared.shape[2:]
    out_sp = gm.shape[3:]
    c = shared.shape[1] * groups
    wt = shared.reshape(groups, o // groups, -1).transpose(0, 2, 1)  # (G, C/G * k, O/G)
    gcols = _matmul(wt, gm.reshape(groups, o // groups, -1)).reshape(c, *kernel, -1, *out_sp)
    padded = [s + lo + hi for s, (lo, hi) in zip(x_shape[3:], pads)]
    gpad = xp.zeros((c, gcols.shape[len(kernel) + 1], *padded), gm.dtype)
    if _compiled(gpad, gcols):  # one pass (3.5 ms against 4.2 for NumPy's per-offset adds on 16 -> 32 channels,
        # 14 x 14, 64 examples), each element's terms added in the same (kernel offset) order: the same bits
        src = _by_channel(gcols)
        parallel_for(lambda c0, c1: compiled.col2im2d_nchw(src[c0:c1], *stride, *dilation, gpad[c0:c1]), c,
                     gcols.size)
    else:
        for offs in offsets(kernel):
            gpad[window(offs, out_sp, stride, dilation, 2, 0)] += gcols[(slice(None), *offs)]
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(x_shape[3:], pads))
    return gpad[(slice(None), slice(None), *inner)].swapaxes(0, 1).reshape(x_shape)


class PerExampleConv(Node):
    """Convolution of x (B, N, C, *sp) with w (B, O, C/G, *k) holding one weight in every example."""

    float32_compute = True

    def forward(self, x, w, b, stride, pads, dilation, groups):
        batch, n = x.shape[:2]
        shared = w[0]
        o, kernel = shared.shape[0], shared.shape[2:]
        cols, out_sp = _im2col(x.reshape(batch * n, *x.shape[2:]), kernel, stride, dilation, pads)
        positions = batch * n * math.prod(out_sp)
        out = _matmul(shared.reshape(groups, o // groups, -1), cols.reshape(groups, -1, positions))
        out = out.reshape(o, batch, n, *out_sp)
        if b is not None:
            out += b.T.reshape(o, batch, *(1,) * (len(out_sp) + 1))
        self.saved = (cols, shared, x, w)  # x and w: for create_graph, and the check that they were not modified
        self.meta = (x.shape, stride, pads, dilation, groups)
        return out.transpose(1, 2, 0, *range(3, out.ndim))  # (B, N, O, *out)

    def backward(self, g):
        cols, shared, x, w = self.saved
        x_shape, stride, pads, dilation, groups = self.meta
        if is_recorded(g):  # create_graph: cols and shared are forward's arrays, constants of a recorded formula
            return _recorded_backward(g, x, w, self.needs_input_grad, stride, pads, dilation, groups)
        nx, nw, nb = self.needs_input_grad
        batch, n, o = g.shape[:3]
        gm = xp.ascontiguousarray(g.transpose(2, 0, 1, *range(3, g.ndim)))  # (O, B, N, *out)
        gx = gw = gb = None

        def input_grad():
            return _input_grad(gm, shared, x_shape, stride, pads, dilation, groups)

        def weight_grad():  # per example and group: its output gradient (O/G, positions) @ its columns
            per_group = shared[0].size
            gmat = gm.reshape(groups, o // groups, batch, -1).transpose(2, 0, 1, 3)
            cmat = cols.reshape(groups, per_group, batch, -1).transpose(2, 0, 3, 1)
            if per_group > o // groups:  # the longer output side as the GEMM's rows (as conv.weight_grad)
                return _matmul(cmat.swapaxes(-1, -2), gmat.swapaxes(-1, -2)).swapaxes(-1, -2).reshape(
                    batch, *shared.shape)
            return _matmul(gmat, cmat).reshape(batch, *shared.shape)

        if nx and nw and policy.inter_op:
            gx, gw = side_by_side(input_grad, weight_grad, gm.size + cols.size)
        else:
            gx = input_grad() if nx else None
            gw = weight_grad() if nw else None
        if nb:
            gb = gm.reshape(o, batch, -1).sum(-1).T
        return gx, gw, gb


def _recorded_backward(g, x, w, needs, stride, pads, dilation, groups: int) -> tuple:
    """PerExampleConv's gradients under create_graph, differentiable in x and in every example's weight: the
    per-example convolution as the one grouped convolution it is (each example's channels a block of groups, as the
    vmap rule of a batched weight runs it), whose gradients are recorded convolutions (``conv_backward``)."""
    from ..nn._ops.conv_higher_order import conv_backward

    xt, wt, gt = formula_tensor(x), formula_tensor(w), formula_tensor(g)
    batch, n = xt.shape[:2]
    xg = xt.movedim(0, 1).reshape(n, -1, *xt.shape[3:])  # (N, B * C, *sp)
    gg = gt.movedim(0, 1).reshape(n, -1, *gt.shape[3:])  # (N, B * O, *out)
    wg = wt.reshape(-1, *wt.shape[2:])  # (B * O, C / G, *k)
    gx, gw, gb = conv_backward(RecordedArray(gg), RecordedArray(xg), RecordedArray(wg), needs, stride, pads,
                               dilation, batch * groups)
    if gx is not None:
        gx = RecordedArray(gx.t.reshape(n, batch, *xt.shape[2:]).movedim(1, 0))
    if gw is not None:
        gw = RecordedArray(gw.t.reshape(wt.shape))
    if gb is not None:
        gb = RecordedArray(gb.t.reshape(batch, -1))
    return gx, gw, gb
