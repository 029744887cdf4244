"""Convolution (1-, 2- and 3-d, any stride/padding/dilation/groups): the autograd node and its batch-last kernels.

``ConvNd`` takes and returns contiguous (N, C, *spatial) arrays, as PyTorch's. Most convolutions compute in that
layout (``conv_nchw.py``: im2col and one GEMM per sample, writing straight into the output). Large stride-1 3x3
convolutions take Winograd F(2x2, 3x3) (``winograd.py``: in PyTorch's layout on wider images, else on
*batch-last* arrays, (C, *spatial, N) in memory, between ``conv_layout.py``'s copies). im2col convolutions with
few output positions per sample compute batch-last too (their per-sample GEMMs would be narrow; ``_batch_last``),
and so does the transposed convolution (``conv_transpose.py``), whose forward is ``input_grad`` here. In that
layout each of the prod(kernel) shifted windows of the input is a block whose rows are long contiguous runs
(W * N elements), so im2col and col2im are a few large strided copies; the column matrix is row-major (one GEMM
per output row, ``_conv_batch_last``).
The input gradient of a stride-1 convolution is itself a convolution (of the padded output gradient
with the flipped kernel), which avoids col2im's scatter-add; other strides use col2im.
Output rows (im2col) and channels (col2im, padding) are split over threads. ``ConvNd``'s forward and backward
run with OpenBLAS set to one thread (``_parallel.one_blas_thread``), so every GEMM runs whole on the ember thread
that computes it; where OpenBLAS's count cannot be set at run time, the GEMMs it would thread run in
``gemm_block`` blocks (or, too wide for those, on its threads).
Pooling and fold reuse ``offsets`` and ``window`` (``conv_geometry.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

from ..._autocast import lower_precision
from ..._backend import xp
from ..._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, not_implemented_for
from ..._kernels import im2col as compiled_cols
from ..._kernels.policy import policy
from ..._parallel import (
    Rows,
    gemm_block,
    get_num_threads,
    matmul_blocks,
    one_blas_thread,
    parallel_for,
    parallel_for_all,
    run_rows,
    run_rows_in_step,
    side_by_side,
)
from ..._tensor import Tensor
from ..._warnings import warn_once
from ...autograd.graph import Node, torch_named
from ...autograd.recorded import is_recorded
from ...ops.shape import cat
from . import conv_nchw, conv_phases, winograd
from .conv_geometry import crop_spatial, offsets, out_size, window
from .conv_layout import as_pytorch_lays_out, batch_last_padded, from_batch_last, to_batch_last, to_nchw
from .linear import _check_same_dtype


def _rows_first(a, s: int):
    """(C, *sp, N) -> (*sp[:s], C, *sp[s:], N), a view: the first ``s`` spatial dims move in front of the channels."""
    return a.transpose(*range(1, s + 1), 0, *range(s + 1, a.ndim))


def _channels_first(a, s: int):
    """The inverse of ``_rows_first``: (*sp[:s], C, *sp[s:], N) -> (C, *sp, N), a view."""
    return a.transpose(s, *range(s), *range(s + 1, a.ndim))


def _colm(cols, s: int, groups: int):
    """cols (*rows, C, *k, *rest, N) as (*rows, G, C/G * prod(k), prod(rest) * N), a view."""
    nd = (cols.ndim - 2 + s) // 2
    return cols.reshape(*cols.shape[:s], groups, -1, math.prod(cols.shape[s + 1 + nd:]))


def _out_rows(a, s: int, groups: int):
    """Batch-last (O, *out, N) as a (*rows, G, O/G, prod(rest) * N) view."""
    v = a.reshape(groups, a.shape[0] // groups, *a.shape[1:s + 1], -1)
    return v.transpose(*range(2, s + 2), 0, 1, s + 2)


def _stacked(m: int, k: int, out_sp, n: int) -> int:
    """How many leading spatial dims the column matrix of an (m x k) @ (k x prod(out_sp) * n) GEMM stacks its
    output rows on: 1 (one GEMM per output row, see ``_conv_batch_last``) for a 2-d or higher convolution, 0 (one
    GEMM over all positions) for a 1-d one, and for a row GEMM too wide to keep on one OpenBLAS thread: that one
    GEMM then runs on OpenBLAS's threads, which meet once instead of once per row (at each meeting a thread
    waits for the other, which on a loaded machine costs a scheduler slice)."""
    if len(out_sp) < 2:
        return 0
    return 0 if gemm_block(m, k, math.prod(out_sp[1:]) * n) == 0 else 1


def _conv_batch_last(xb, w, stride, dilation, groups: int):
    """Cross-correlate padded batch-last xb (C, *padded, N) with w (O, C/G, *k): (out (O, *out, N), cols, s).

    The column matrix is kept *row-major* (``s`` = 1): cols[r, c, *k, *rest, n] for output row r (the first spatial
    dim of a 2-d or higher convolution), so the matmul is a stack of one GEMM per output row. A row's block
    (C/G * prod(k) by W * N) stays in cache while BLAS packs and uses it, which runs the narrow GEMMs of a small CNN
    (few output channels) markedly faster than one GEMM over the whole column matrix. Very wide rows (``_stacked``)
    and 1-d convolutions have ``s`` = 0: cols[c, *k, *out, n].
    """
    rows, out, cols, s = _conv_batch_last_rows(xb, w, stride, dilation, groups)
    run_rows(rows)
    return out, cols, s


def _conv_batch_last_rows(xb, w, stride, dilation, groups: int):
    """``_conv_batch_last``'s copies and GEMMs as ``Rows`` (one per output row, im2col and GEMM; whole where the GEMM
    is too wide for blocks), ready to run, and the (out, cols, s) they fill."""
    o, kernel = w.shape[0], w.shape[2:]
    out_sp = out_size(xb.shape[1:-1], kernel, stride, dilation)
    s = _stacked(o // groups, xb.shape[0] // groups * math.prod(kernel), out_sp, xb.shape[-1])  # stacked (row) dims
    # im2col, the one copy: cols[*r, c, *k, *rest, n] = xpad[n, c, out * stride + k * dilation]
    cols = xp.empty((*out_sp[:s], xb.shape[0], *kernel, *out_sp[s:], xb.shape[-1]), xb.dtype)
    out = xp.empty((o, *out_sp, xb.shape[-1]), xb.dtype)
    wm, cm, om = w.reshape(groups, o // groups, -1), _colm(cols, s, groups), _out_rows(out, s, groups)
    windows = [] if _compiled_cols(s, xb) else [_rows_first(xb[window(offs, out_sp, stride, dilation, 1, 1)], s)
                                                  for offs in offsets(kernel)]

    block = gemm_block(wm.shape[-2], wm.shape[-1], cm.shape[-1])

    if block == 0:  # one GEMM on OpenBLAS's threads, after the copies (split over threads by channel)
        windows = windows or [_rows_first(xb[window(offs, out_sp, stride, dilation, 1, 1)], s)
                              for offs in offsets(kernel)]

        def copy(lo: int, hi: int) -> None:
            c = (slice(None),) * s + (slice(lo, hi),)
            for offs, src in zip(offsets(kernel), windows):
                cols[c + offs] = src[c]

        def whole(lo: int, hi: int) -> None:
            parallel_for(copy, xb.shape[0], cols.size)
            xp.matmul(wm, cm, out=om)

        return Rows(whole, 1, cols.size, True), out, cols, s

    fast = _compiled_cols(s, xb)

    def run(lo: int, hi: int) -> None:  # output rows lo..hi (all of them for a 1-d convolution)
        r = slice(lo, hi) if s else slice(None)
        if fast:
            compiled_cols.im2col2d(xb, lo, *stride, *dilation, cols[r])
        else:
            for offs, src in zip(offsets(kernel), windows):
                cols[(r,) + (slice(None),) * s + offs] = src[r]
        matmul_blocks(wm, cm[r], om[r], block)

    # rows split over threads: each row's copies and GEMM are its own, the same bits for any thread count
    return Rows(run, out_sp[0] if s else 1, cols.size), out, cols, s


def _row_matmul(a, b, out_shape, dtype, s: int):
    """matmul(a, b) of two stacks whose first dim is the output row (s == 1), split over threads by row. Each row's
    GEMM runs in blocks OpenBLAS keeps on one thread (``gemm_block``): its own threads would compete with ember's,
    and for these narrow GEMMs they cost 2-3x the CPU time; a GEMM too wide for such blocks runs from this thread."""
    rows, out = _row_matmul_rows(a, b, out_shape, dtype, s)
    run_rows(rows)
    return out


def _row_matmul_rows(a, b, out_shape, dtype, s: int):
    """``_row_matmul``'s rows as ``Rows``, ready to run (whole: one matmul, where a GEMM is too wide for blocks),
    and the output they fill."""
    out = xp.empty(out_shape, dtype)
    block = gemm_block(a.shape[-2], a.shape[-1], b.shape[-1])
    if block == 0:
        return Rows(lambda lo, hi: xp.matmul(a, b, out=out), 1, out.size, True), out

    def run(lo: int, hi: int) -> None:
        r = slice(lo, hi) if s else slice(None)
        matmul_blocks(a[r] if a.ndim == out.ndim else a, b[r], out[r], block)

    return Rows(run, out_shape[0] if s else 1, math.prod(out_shape) + b.size), out


def _transposed_pads(pads, w, stride, dilation, in_sp, out_sp):
    """The padding that makes the input gradient of a stride-1 convolution with weight ``w`` (input positions
    ``in_sp``, output ``out_sp``) a plain convolution of the output gradient with the flipped kernel ("full"
    correlation), or None where that does not apply: a stride other than 1, the policy off, a full correlation of
    more than ``policy.transposed_as_conv_max_ratio`` times col2im's work, or a ``w`` holding an infinity or NaN.

    The full correlation computes a product of every weight at every input position, col2im at every output
    position: the same work for a 'same'-padded convolution, but a kernel nearly as wide as its input (TextCNN's
    (3, 300) kernel over (length, 300) word vectors: one output column) makes the correlation's column matrix
    in / out times col2im's, its width squared (176 GiB at TextCNN's size, where col2im's is a few MiB).
    The correlation multiplies the zero padding by every weight, and 0 * NaN is NaN at input positions no output
    read, where PyTorch's (the scatter-add of ``col2im``) forms only the forward's products; the sum over w costs a
    fraction 1 / (2 N * positions) of the GEMM's work."""
    if any(st != 1 for st in stride) or not policy.transposed_as_conv:
        return None
    if math.prod(in_sp) > policy.transposed_as_conv_max_ratio * math.prod(out_sp):
        return None
    kernel = w.shape[2:]
    full = [d * (k - 1) for k, d in zip(kernel, dilation)]
    if any(lo > f or hi > f for (lo, hi), f in zip(pads, full)):
        return None
    if not xp.isfinite(w.sum()):
        return None
    return tuple((f - lo, f - hi) for (lo, hi), f in zip(pads, full))


def _flipped(w, groups: int):
    """w (O, C/G, *k) -> (C, O/G, *k) with each kernel reversed: the weight of the input-gradient convolution."""
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    wt = w.reshape(groups, o // groups, cg, *kernel).swapaxes(1, 2).reshape(groups * cg, o // groups, *kernel)
    return xp.ascontiguousarray(wt[(slice(None), slice(None)) + (slice(None, None, -1),) * len(kernel)])


def forward_batch_last(xb, w, stride, dilation, groups: int, keep_tiles: bool):
    """Cross-correlate padded batch-last xb (C, *padded, N) with w (O, C/G, *k): (out (O, *out, N), cols, layout).
    ``cols`` is what ``weight_grad`` reads: the column matrix (``layout``: its stacked dims, see
    ``_conv_batch_last``), or the Winograd input tiles (``layout`` None; kept only when ``keep_tiles``)."""
    if _winograd(xb, w, stride, dilation, groups):
        out, tiles = winograd.conv3x3(xb, w, keep_tiles=keep_tiles)
        return out, tiles, None
    return _conv_batch_last(xb, w, stride, dilation, groups)


def forward_and_weight_grad(xb, w, gb_last, stride, dilation, groups: int):
    """(``forward_batch_last(xb, w, ...)``'s out, ``weight_grad`` of its columns with the batch-last output gradient
    ``gb_last``), the same bits, where both come from an im2col column matrix (None where Winograd computes the
    forward): each thread runs its output rows' im2col and GEMMs, then the weight gradient's products of the same
    rows, while their columns are in its cache (``run_rows_in_step``: one split over threads instead of two). A
    transposed convolution's backward: its input gradient is the convolution of g, its weight gradient reads g's
    columns."""
    if _winograd(xb, w, stride, dilation, groups):
        return None
    conv_rows, out, cols, layout = _conv_batch_last_rows(xb, w, stride, dilation, groups)
    w_rows, finish = _weight_grad_rows(cols, gb_last, w.shape, groups, layout)
    run_rows_in_step(conv_rows, w_rows)
    return out, finish()


def weight_grad(cols, gb_last, w_shape, groups: int, layout: int | None):
    """dL/dw of ``forward_batch_last`` from its ``cols`` and ``layout`` and the batch-last output gradient
    (O, *out, N): dW = sum over rows of g_r @ cols_r^T, per group (the per-row products in parallel, summed after)."""
    rows, finish = _weight_grad_rows(cols, gb_last, w_shape, groups, layout)
    run_rows(rows)
    return finish()


def _weight_grad_rows(cols, gb_last, w_shape, groups: int, layout: int | None):
    """``weight_grad``'s products as ``Rows``, ready to run, and ``finish()``, which after them sums them: dW."""
    if layout is None:
        return winograd.weight_grad3x3_rows(cols, gb_last)
    if layout == _PHASES:
        return conv_phases.weight_grad_rows(cols, gb_last, w_shape)
    s = layout
    gm = _out_rows(gb_last, s, groups)  # (*rows, G, O/G, rest * N)
    cm = _colm(cols, s, groups)  # (*rows, G, C/G * prod(k), rest * N)
    if cm.shape[-2] > gm.shape[-2]:
        # dW^T = cols @ g^T: OpenBLAS runs these GEMMs faster with the longer output side as rows (15-20 % for a
        # strided convolution's 512 x 64 and 1024 x 128 weight gradients); the small transpose after is cheap
        rows, gwt = _row_matmul_rows(cm, gm.swapaxes(-1, -2), (*cm.shape[:-1], gm.shape[-2]), gm.dtype, s)
        return rows, lambda: (gwt.sum(axis=tuple(range(s))) if s else gwt).swapaxes(-1, -2).reshape(w_shape)
    cm = cm.swapaxes(-1, -2)
    rows, gw = _row_matmul_rows(gm, cm, (*gm.shape[:-1], cm.shape[-1]), gm.dtype, s)
    return rows, lambda: (gw.sum(axis=tuple(range(s))) if s else gw).reshape(w_shape)


def input_grad(gb_last, w, in_sp, stride, pads, dilation, groups: int):
    """dL/dx of a convolution with w (O, C/G, *k) from the batch-last output gradient gb_last (O, *out, N):
    (C, *in_sp, N), batch-last. ``pads`` are the convolution's ((lo, hi), ...); a negative hi means the convolution
    read only the first in + lo + hi elements of that dim (a transposed convolution's output_padding), and the
    unread ones get a zero gradient. This is also the forward of the transposed convolution."""
    rows, finish = _input_grad_rows(gb_last, w, in_sp, stride, pads, dilation, groups)
    run_rows(rows)
    return finish()


def _input_grad_rows(gb_last, w, in_sp, stride, pads, dilation, groups: int):
    """``input_grad``'s products as ``Rows``, ready to run, and ``finish()``, which after them gives dx: Winograd's
    bands, or the column-matrix gradient's rows (col2im in ``finish``); the other ways (an im2col correlation, the
    one-thread fused col2im) as one whole row that computes it all."""
    o, kernel = w.shape[0], w.shape[2:]
    out_sp = gb_last.shape[1:-1]
    tpads = _transposed_pads(pads, w, stride, dilation, in_sp, out_sp)
    if tpads is not None:
        # stride 1: dx = g (padded) correlated with the flipped kernel; no scatter-add
        gpad = batch_last_padded(from_batch_last(gb_last), tpads)
        wf = _flipped(w, groups)
        if _winograd(gpad, wf, stride, dilation, groups):
            bands, _, finish = winograd.conv3x3_rows(gpad, wf)
            return bands, finish
        return _whole(lambda: forward_batch_last(gpad, wf, stride, dilation, groups, False)[0])
    s = _stacked(w.shape[1] * math.prod(kernel), o // groups, out_sp, gb_last.shape[-1])
    kept = tuple((lo, max(hi, 0)) for lo, hi in pads)  # rows past the convolution's reach stay zero
    padded_shape = (w.shape[1] * groups, *(n + lo + hi for n, (lo, hi) in zip(in_sp, kept)), gb_last.shape[-1])
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    if s == 0 and len(out_sp) > 1 and get_num_threads() == 1:  # a wide row GEMM: see ``_col2im_rows``
        return _whole(lambda: crop_spatial(_col2im_rows(wt, _out_rows(gb_last, 1, groups), padded_shape, out_sp,
                                                        stride, dilation, kernel), kept, lead=1))
    gm = _out_rows(gb_last, s, groups)  # (*rows, G, O/G, rest * N)
    rows, gcols = _row_matmul_rows(wt, gm, (*gm.shape[:-2], wt.shape[-2], gm.shape[-1]), gm.dtype, s)
    cols_shape = (*out_sp[:s], padded_shape[0], *kernel, *out_sp[s:], padded_shape[-1])
    return rows, lambda: crop_spatial(_col2im(gcols.reshape(cols_shape), padded_shape, out_sp, stride, dilation, s),
                                      kept, lead=1)


def _finished(rows: Rows, finish: Callable):
    """``rows``' kernel over all its rows, then ``finish()``: a gradient computed whole (inside ``side_by_side``, on
    one thread: its splits inline)."""
    run_rows(rows)
    return finish()


def _whole(compute: Callable):
    """(``Rows`` of one whole row that runs ``compute()``, ``finish()`` giving its result): a computation that splits
    itself over threads, run on its own (``parallel_for_all`` runs it after the kernels before it)."""
    result = []
    return Rows(lambda lo, hi: result.append(compute()), 1, 0, True), lambda: result[0]


@torch_named("ConvolutionBackward0")  # (PyTorch's one convolution node, whatever the rank)
class ConvNd(Node):
    float32_compute = True
    multilinear = True
    bias_input = 2

    @one_blas_thread
    def forward(self, x, w, b, stride, pads, dilation, groups):
        needs = self.needs_input_grad
        wino = _winograd(x.transpose(*range(1, x.ndim), 0), w, stride, dilation, groups)  # decided on shapes only
        if wino and winograd.direct_nchw(x, w, pads, b):
            # contiguous (N, O, *out), as PyTorch's; cols: the transformed input tiles
            out, cols = winograd.conv3x3_nchw(x, w, pads, b, keep_tiles=needs is not None and needs[1])
            layout = _WINOGRAD
        elif wino and winograd.bands_nchw(x.shape[3] + sum(pads[1]) - 2, x, w, b):  # Winograd on narrow images:
            # batch-last tiles, (N, C, H, W)
            # in and out, each band of tile rows gathering its input and scattering its output on its own thread
            out, cols = winograd.conv3x3_bands_nchw(x, w, pads, b, keep_tiles=needs is not None and needs[1])
            layout = None  # (``forward_batch_last``'s tag for Winograd tiles)
        elif not wino and takes_phases(x, w, b, stride, pads, dilation, groups):  # Winograd on its phases
            # cols: the transformed input tiles, which the weight gradient's tile GEMMs read
            out, cols = conv_phases.forward(x, w, b, pads, keep_tiles=needs is not None and needs[1])
            layout = _PHASES
        elif wino or _batch_last(x, w, stride, pads, dilation):  # Winograd on narrow images, or few positions
            xb = batch_last_padded(x, pads)
            out, cols, layout = forward_batch_last(xb, w, stride, dilation, groups, needs is not None and needs[1])
            out = to_nchw(out, b)  # contiguous (N, O, *out), as PyTorch's
        else:  # im2col in PyTorch's layout, no layout copies
            out, cols = conv_nchw.forward(x, w, b, stride, dilation, groups, pads)
            layout = _NCHW
        self.saved = (cols, w, x)  # x: for create_graph, and backward's check that it was not modified in place
        self.meta = (x.shape[2:], stride, pads, dilation, groups, layout)
        return as_pytorch_lays_out(out, x, w)

    @one_blas_thread
    def backward(self, g):
        cols, w, x = self.saved  # cols: the Winograd input tiles instead, on that path
        in_sp, stride, pads, dilation, groups, layout = self.meta
        if is_recorded(g):  # create_graph: the kernels below cannot record themselves; convolutions of g instead
            from . import conv_higher_order  # (imports this module)

            return conv_higher_order.conv_backward(g, x, w, self.needs_input_grad, stride, pads, dilation, groups)
        zeros = zero_grads(g, x, w, self.needs_input_grad, w.shape[0])
        if zeros is not None:
            return zeros
        if layout == _NCHW:
            return _backward_nchw(g, cols, w, self.needs_input_grad, in_sp, stride, pads, dilation, groups)
        if layout == _WINOGRAD:
            return _backward_winograd(g, cols, w, self.needs_input_grad, in_sp, pads)
        if layout is None:  # Winograd's tiles
            grads = _backward_winograd_bands(g, cols, w, self.needs_input_grad, in_sp, pads)
            if grads is not None:
                return grads
        nx, nw, nb = self.needs_input_grad
        gb_last = to_batch_last(g)
        gx = gw = gb = None
        if nw and nx:
            w_rows, w_finish = _weight_grad_rows(cols, gb_last, w.shape, groups, layout)
            x_rows, x_finish = _input_grad_rows(gb_last, w, in_sp, stride, pads, dilation, groups)
            if policy.inter_op and layout is not None and not (w_rows.whole or x_rows.whole):
                # at once: the input gradient whole on ember's worker (its GEMMs, col2im and the copy back to
                # (N, C, *in)), the weight gradient whole here (its GEMMs and their sum): one hand-off where the
                # split below and col2im's take two, and the passes after the GEMMs off the calling thread alone.
                # Every row and channel computed as alone: the same bits
                gx, gw = side_by_side(partial(_finished, x_rows, lambda: to_nchw(x_finish())),
                                      partial(_finished, w_rows, w_finish), x_rows.elements + w_rows.elements)
            else:  # both in one split over threads (each thread a share of both)
                parallel_for_all(w_rows, x_rows)
                gw, gx = w_finish(), to_nchw(x_finish())
        elif nw:
            w_rows, w_finish = _weight_grad_rows(cols, gb_last, w.shape, groups, layout)
            run_rows(w_rows)
            gw = w_finish()
        elif nx:
            gx = to_nchw(input_grad(gb_last, w, in_sp, stride, pads, dilation, groups))
        if nb:
            gb = gb_last.reshape(w.shape[0], -1).sum(1)
        return gx, gw, gb


def zero_grads(g, x, w, needs, bias_size: int):
    """The gradients (x, w, bias) of a convolution (or a transposed one) for an output gradient ``g`` of zeros
    only, without the products; None for any other ``g``.

    Such a ``g`` is common under double backward: a piecewise-linear activation's gradient under create_graph
    (``PiecewiseLinearGrad``, PyTorch's LeakyReluBackwardBackward0 and kin) passes zeros to its input, and so to
    the convolution before it, whose backward then costs as much as any other (a WGAN-GP critic step spends a sixth
    of its time there). Each product of a zero is a zero, so every gradient is zeros, the same +0.0 the GEMMs sum;
    except where x (for w's gradient) or w (for x's) holds an infinity or a NaN, whose products with 0 are NaN: a
    non-finite sum sends those to the products. Nine elements spread over ``g`` are read first, so that a
    gradient that is not all zeros (nearly every one) costs about a microsecond, not a pass over it."""
    size = g.size
    if not size or any(g.item(i) for i in range(0, size, size // 8 or 1)) or g.any():
        return None
    nx, nw, nb = needs
    if (nx and not xp.isfinite(w.sum())) or (nw and not xp.isfinite(x.sum())):
        return None
    dtype = xp.result_type(g, w)
    return (xp.zeros(x.shape, dtype) if nx else None, xp.zeros(w.shape, dtype) if nw else None,
            xp.zeros(bias_size, dtype) if nb else None)


_NCHW = "nchw"  # ConvNd's layout tag for a forward by ``conv_nchw`` (batch-last ones: ``forward_batch_last``'s)
_WINOGRAD = "winograd nchw"  # ... by ``winograd.conv3x3_nchw``
_PHASES = "winograd phases"  # ... by ``conv_phases.forward`` (saved: its input tiles)


def _backward_nchw(g, cols, w, needs, in_sp, stride, pads, dilation, groups: int):
    """ConvNd's gradients after a ``conv_nchw.forward``, all in (N, C, *spatial) layout."""
    nx, nw, nb = needs
    g = xp.ascontiguousarray(g)
    gx = gw = gb = None
    tpads = _transposed_pads(pads, w, stride, dilation, in_sp, g.shape[2:]) if nx else None
    if nw and nx and tpads is None:  # both in one split over threads (each thread a share of both)
        gw, gx = conv_nchw.grads(cols, g, w, in_sp, stride, pads, dilation, groups)
    else:
        if nw:
            gw = conv_nchw.weight_grad(cols, g, w.shape, groups)
        if tpads is not None:  # stride 1: g (padded) with the flipped kernel
            gx, _ = conv_nchw.forward(g, _flipped(w, groups), None, stride, dilation, groups, tpads)
        elif nx:
            gx = conv_nchw.input_grad(g, w, in_sp, stride, pads, dilation, groups)
    if nb:
        gb = g.sum(axis=(0, *range(2, g.ndim)))
    return gx, gw, gb


def _backward_winograd(g, tiles, w, needs, in_sp, pads):
    """ConvNd's gradients after a ``winograd.conv3x3_nchw``: (N, C, H, W) in and out. The input gradient of a
    stride-1 convolution is a Winograd convolution of g with the flipped kernel; padding beyond the kernel's reach
    takes col2im (batch-last)."""
    nx, nw, nb = needs
    g = xp.ascontiguousarray(g)
    gx = gw = gb = None
    one = (1, 1)
    tpads = _transposed_pads(pads, w, one, one, in_sp, g.shape[2:]) if nx else None
    if nw and tpads is not None:  # both in one split over threads (each thread a share of both)
        gw, gx = winograd.grads3x3_nchw(tiles, g, _flipped(w, 1), tpads)
    else:
        if nw:
            gw = winograd.weight_grad3x3_nchw(tiles, g)
        if tpads is not None:
            gx, _ = winograd.conv3x3_nchw(g, _flipped(w, 1), tpads)
        elif nx:
            gx = to_nchw(input_grad(to_batch_last(g), w, in_sp, one, pads, one, 1))
    if nb:
        gb = g.sum(axis=(0, 2, 3))
    return gx, gw, gb


def _backward_winograd_bands(g, tiles, w, needs, in_sp, pads):
    """ConvNd's gradients after a batch-last Winograd forward (narrow images), at more than one thread: the input
    gradient (a Winograd convolution of g with the flipped kernel) gathers the output gradient g from (N, O, H, W)
    and scatters dx into that layout inside its bands, and so does the weight gradient's gather g unless the bias
    gradient sums a batch-last copy of g anyway (then its bands read that), the two in one split over threads: no
    whole-array layout copy on the calling thread but that one. The general way's bits. None where that way must
    run: the input gradient by col2im, or the arrays not what the bands take (``winograd.bands_nchw``)."""
    nx, nw, nb = needs
    g = xp.ascontiguousarray(g)
    if not (nx or nw) or not winograd.bands_nchw(g.shape[3], g, w):  # (the forward's output width: its decision)
        return None
    one = (1, 1)
    tpads = _transposed_pads(pads, w, one, one, in_sp, g.shape[2:]) if nx else None
    wf = _flipped(w, 1) if nx else None
    if nx and (tpads is None or not _winograd(g.transpose(1, 2, 3, 0), wf, one, one, 1)):
        return None
    gb_last = to_batch_last(g) if nb else None  # the bias gradient's sum, as the general way takes it
    works, gw_finish, gx = [], None, None
    if nw:
        w_rows, gw_finish = (winograd.weight_grad3x3_bands_nchw_rows(tiles, g) if gb_last is None
                             else winograd.weight_grad3x3_rows(tiles, gb_last))
        works.append(w_rows)
    if nx:
        x_rows, gx, _ = winograd.conv3x3_bands_nchw_rows(g, wf, tpads)
        works.append(x_rows)
    parallel_for_all(*works)
    gb = None if gb_last is None else gb_last.reshape(w.shape[0], -1).sum(1)
    return gx, None if gw_finish is None else gw_finish(), gb


def _batch_last(x, w, stride, pads, dilation) -> bool:
    """Whether ``ConvNd`` computes an im2col convolution of x (N, C, *spatial) batch-last: a kernel of more than one
    element with at most ``policy.batch_last_max_positions`` output positions per sample, where per-sample GEMMs
    would be narrow."""
    kernel = w.shape[2:]
    positions = math.prod(out_size([n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)], kernel, stride, dilation))
    return math.prod(kernel) > 1 and positions <= policy.batch_last_max_positions


def takes_phases(x, w, b, stride, pads, dilation, groups: int) -> bool:
    """Whether the convolution of x (N, C, *spatial) with w and b computes by Winograd on its input's phases
    (``conv_phases``): a 4x4 stride-2 one of few output positions (``_batch_last``), as that module takes."""
    return _batch_last(x, w, stride, pads, dilation) and conv_phases.applies(x, w, b, stride, pads, dilation, groups)


def _winograd(xb, w, stride, dilation, groups: int) -> bool:
    """Whether the batch-last convolution of xb (C, *padded, N) with w takes Winograd F(2x2, 3x3)."""
    return policy.winograd and winograd.applies(xb, w, stride, dilation, groups)


def _compiled_cols(s: int, a) -> bool:
    """Whether im2col / col2im of a row-major (``s`` = 1) column matrix of a 2-d convolution run compiled."""
    return s == 1 and a.ndim == 4 and a.dtype in (xp.float32, xp.float64) and policy.use_compiled()


def _col2im(gcols, padded_shape, out_sp, stride, dilation, s: int):
    """Add each kernel offset's block of the column-matrix gradient back where im2col took it: (C, *padded, N)."""
    kernel = gcols.shape[s + 1:s + 1 + len(out_sp)]
    gxb = xp.zeros(padded_shape, gcols.dtype)
    if _compiled_cols(s, gxb):
        def add(lo: int, hi: int) -> None:  # channels lo..hi
            compiled_cols.col2im2d(gcols[:, lo:hi], *stride, *dilation, gxb[lo:hi])

        parallel_for(add, padded_shape[0], gcols.size)
        return gxb
    blocks = [_channels_first(gcols[(slice(None),) * (s + 1) + offs], s) for offs in offsets(kernel)]

    def run(lo: int, hi: int) -> None:  # channels lo..hi: windows overlap along space, never across channels
        for offs, block in zip(offsets(kernel), blocks):
            gxb[lo:hi][window(offs, out_sp, stride, dilation, 1, 1)] += block[lo:hi]

    parallel_for(run, padded_shape[0], gcols.size)
    return gxb


def _col2im_rows(wt, gm, padded_shape, out_sp, stride, dilation, kernel):
    """``_col2im`` fused with its GEMM, one output row at a time: wt (G, C/G * prod(k), O/G), gm (rows, G, O/G,
    rest * N). Each row's column-matrix gradient (C * prod(k) by rest * N; the GEMM on OpenBLAS's threads) is added
    into dx while it is still in cache, instead of writing the whole matrix first (32 MiB at a DCGAN layer's size)
    and reading it back. Rows run last to first: every element of dx then receives its contributions in kernel
    offset order, as in ``_col2im``, so the two give the same bits and the choice may depend on the thread count:
    one thread only. On two, OpenBLAS's threads meet once per row GEMM (what ``_stacked`` avoids), and the DCGAN
    layer measured no faster this way (1.62-1.69x PyTorch's CPU time, against 1.55-1.73x, on a loaded machine)."""
    gxb = xp.zeros(padded_shape, gm.dtype)
    rest = out_sp[1:]

    def add(r: int, gc, lo: int, hi: int) -> None:  # row r's columns gc, channels lo..hi
        for offs in offsets(kernel):
            row = r * stride[0] + offs[0] * dilation[0]
            gxb[(slice(lo, hi), row) + window(offs[1:], rest, stride[1:], dilation[1:], 0, 1)] += \
                gc[(slice(lo, hi),) + offs]

    for r in reversed(range(out_sp[0])):
        gc = xp.matmul(wt, gm[r]).reshape(padded_shape[0], *kernel, *rest, padded_shape[-1])
        parallel_for(partial(add, r, gc), padded_shape[0], gc.size)
    return gxb


def ntuple(value, n: int, name: str) -> tuple:
    """An int or a sequence of n ints as a tuple of n ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value}")
    return value


def conv_argument(value, nd: int, name: str) -> tuple:
    """A convolution's ``stride``, ``padding``, ``dilation`` or ``output_padding`` as an nd-tuple, as PyTorch's
    convolution expands it (an int, or a sequence of one, repeated): a sequence of another length is its
    RuntimeError, met when the convolution runs (``nd``: its weight's spatial dimensions, which decide)."""
    if not isinstance(value, int):
        value = tuple(value)
        if len(value) not in (1, nd):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                               f"convolution dimensions, but got {name}={list(value)}")
    return ntuple(value, nd, name)


def strides_and_dilations(stride, dilation, nd: int) -> tuple:
    """(stride, dilation) as nd-tuples (``conv_argument``), after PyTorch's checks that they are positive."""
    stride, dilation = conv_argument(stride, nd, "stride"), conv_argument(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"non-positive stride is not supported (got stride={list(stride)})")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    return stride, dilation


def conv_pads(padding, kernel, stride, dilation) -> tuple:
    """((lo, hi), ...) for an int/tuple padding or 'same'/'valid'."""
    nd = len(kernel)
    if padding == "valid":
        return ((0, 0),) * nd
    if padding == "same":
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        if any(t % 2 for t in total):  # (PyTorch's TORCH_WARN_ONCE where the padding is not symmetric)
            warn_once("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                      "copy of the input be created")
        return tuple((t // 2, t - t // 2) for t in total)  # the odd extra goes on the right, as PyTorch
    if isinstance(padding, str):
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    pads = conv_argument(padding, nd, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError(f"negative padding is not supported (got padding={padding})")
    return tuple((p, p) for p in pads)


def batched(input: Tensor, weight: Tensor, nd: int, name: str, arguments: dict) -> tuple[Tensor, bool]:
    """(input with a batch dim, whether it had none) after PyTorch's checks of an nd-d convolution's dims, in its
    order: the input's for the function, its ``arguments`` (name: value, ``conv_argument``) against the weight's
    spatial dimensions, then the weight's against the input's (``Conv1d(1, 1, kernel_size=(3, 3))`` builds a 4-d
    weight, refused at the first forward, as PyTorch's)."""
    if input._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    unbatched = input._data.ndim == nd + 1
    input = input.unsqueeze(0) if unbatched else input
    if weight._data.ndim != nd + 2:
        for argument, value in arguments.items():
            if not isinstance(value, str):
                conv_argument(value, max(weight._data.ndim - 2, 1), argument)
        k = weight._data.ndim
        space = "" if arguments.get("padding") == "same" else " "  # (the words of PyTorch's padding="same" path)
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight{space}{list(weight.shape)}, "
                           f"but got {input._data.ndim}-dimensional input of size {list(input.shape)} instead")
    return input, unbatched


def empty_batch(run: Callable[[Tensor], Tensor], input: Tensor) -> Tensor:
    """PyTorch's (transposed) convolution of an empty batch (N = 0): an empty output, an empty input gradient and
    zero weight and bias gradients; ``run`` (the node on a batch) sees one zero sample, of which none is kept."""
    return run(cat([input, input.new_zeros((1, *input.shape[1:]))]))[:0]


def _complex(*tensors) -> bool:
    return any(t is not None and t.dtype.is_complex for t in tensors)


def check_bias_dtype(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's first check of a convolution's arguments, before their shapes: the bias's dtype is the input's
    (``Input type (double) and bias type (float) should be the same``, a float64 image into a float32 layer)."""
    if bias is not None and bias._data.dtype != input._data.dtype and not _complex(input, weight, bias):
        raise RuntimeError(f"Input type ({CPP_TYPE_NAMES[input.dtype.name]}) and bias type "
                           f"({CPP_TYPE_NAMES[bias.dtype.name]}) should be the same")


def check_weight_dtype(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, onednn=None) -> None:
    """PyTorch's check of the weight's dtype against the input's, after the shapes': its oneDNN path's words where
    PyTorch takes that path (``onednn``: a function of no arguments, called only for differing dtypes, saying
    whether it does: ``takes_onednn``; ``Input type (torch.FloatTensor) and weight type
    (torch.DoubleTensor) should be the same or input should be a MKLDNN tensor ...``), its own kernels' otherwise
    (``expected scalar type Double but found Float``); a complex tensor beside a real one: all the dtypes named."""
    if _complex(input, weight, bias):
        _check_same_dtype(name, input, weight, bias)
    elif weight._data.dtype != input._data.dtype:
        if onednn is not None and onednn():
            raise RuntimeError(f"Input type ({_type_string(input)}) and weight type ({_type_string(weight)}) should "
                               "be the same or input should be a MKLDNN tensor and weight is a dense tensor")
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[weight.dtype.name]}")


# the dtypes with a legacy tensor type name (``torch.FloatTensor``), which PyTorch's type string gives for them
_LEGACY_NAMED = frozenset(("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"))


def _type_string(t: Tensor) -> str:
    """PyTorch's ``Tensor.toString()``: the legacy type name where the dtype has one, ``CPU<Type>Type`` otherwise
    (``CPUBFloat16Type``)."""
    return t.type() if t.dtype.name in _LEGACY_NAMED else f"CPU{SCALAR_TYPE_NAMES[t.dtype.name]}Type"


def _cpu_flags() -> frozenset:
    """The CPU's feature flags (Linux's /proc/cpuinfo; none elsewhere), read once."""
    global _CPU_FLAGS
    if _CPU_FLAGS is None:
        try:
            with open("/proc/cpuinfo") as f:
                line = next((ln for ln in f if ln.startswith("flags")), "")
            _CPU_FLAGS = frozenset(line.partition(":")[2].split())
        except OSError:
            _CPU_FLAGS = frozenset()
    return _CPU_FLAGS


_CPU_FLAGS = None


def takes_onednn(input: Tensor, weight: Tensor, stride, dilation, groups: int, output_padding=None) -> bool:
    """Whether PyTorch's CPU convolution takes its oneDNN (MKLDNN) path for these arguments (``use_mkldnn``): a
    bfloat16 input where the CPU has AVX-512 (BW, VL, DQ), a float16 one where it has AVX-512 FP16, a float32 one
    unless the case is small (one sample of a 1x1 or 3x3 kernel's short input, ungrouped, single-threaded for a
    1x1 kernel); a transposed one with an output padding at least its stride never. Shapes as PyTorch sees them: a
    1-d convolution's as a 2-d one's of height 1."""
    if output_padding is not None and any(op >= s for op, s in zip(output_padding, stride)):
        return False
    kind = input.dtype.name
    if kind == "bfloat16":
        return {"avx512bw", "avx512vl", "avx512dq"} <= _cpu_flags()
    if kind == "float16":
        return "avx512_fp16" in _cpu_flags()
    if kind != "float32":
        return False
    shape, kernel = input._data.shape, weight._data.shape
    if len(shape) == 3:  # (conv1d: PyTorch's 2-d view, (N, C, 1, L) and (O, I, 1, k))
        shape, kernel = (shape[0], shape[1], 1, shape[2]), (*kernel[:2], 1, kernel[2])
    strided, dilated = any(s != 1 for s in stride), any(d != 1 for d in dilation)
    if not (strided or dilated or shape[0] >= 16 or kernel[-1] != 1 or kernel[-2] != 1 or get_num_threads() > 1):
        return False
    return groups > 1 or (kernel[-1] > 3 and kernel[-2] > 3) or shape[0] > 1 or math.prod(shape[:4]) > 20480


def check_kernel_dtype(input: Tensor, nd: int, transposed: bool = False) -> None:
    """PyTorch's CPU kernels' dtypes, after the weight's dtype is checked: a convolution takes any number type but
    bool; a transposed one the floating and complex types and int64 only (its slow_conv_transpose kernels)."""
    kind = input._data.dtype.kind
    if transposed and (kind == "b" or kind in "iu" and input._data.dtype != xp.int64):
        raise not_implemented_for(f"slow_conv_transpose{3 if nd == 3 else 2}d_out_cpu", input.dtype)
    if not transposed and kind == "b":
        raise not_implemented_for("compute_columns3d" if nd == 3 else "slow_conv2d_cpu", input.dtype)


def cast_bias(input: Tensor, bias: Tensor | None) -> Tensor | None:
    """The bias in the input's dtype, where PyTorch adds one of another dtype (transposed convolutions, and
    padding="same"/"valid"): the output has the input's dtype, the bias's gradient the bias's."""
    if bias is not None and bias._data.dtype != input._data.dtype and not _complex(input, bias):
        return bias.to(input.dtype)
    return bias


@lower_precision
def conv(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int, nd: int) -> Tensor:
    """Shared body of conv1d/2d/3d and of the Conv layers: validate, add the batch dim if missing, run the node.
    Under CPU autocast it computes in the region's dtype, whichever of them calls it."""
    name = f"conv{nd}d"
    input, unbatched = batched(input, weight, nd, name, {"stride": stride, "padding": padding,
                                                         "dilation": dilation})
    if not isinstance(padding, str):  # (padding="same"/"valid" take PyTorch's other path, which casts the bias)
        check_bias_dtype(input, weight, bias)
    stride, dilation = strides_and_dilations(stride, dilation, nd)
    kernel = weight._data.shape[2:]
    pads = conv_pads(padding, kernel, stride, dilation)
    c = input._data.shape[1]
    if weight._data.shape[1] * groups != c or weight._data.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight._data.shape[1] * groups} channels, but got {c} "
                           "channels instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(input._data.shape[2:], pads)]
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < s for p, s in zip(padded, span)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                           f"Kernel size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual "
                           "input size")
    check_weight_dtype(name, input, weight, bias, lambda: takes_onednn(input, weight, stride, dilation, groups))
    check_kernel_dtype(input, nd)
    bias = cast_bias(input, bias)
    def run(x: Tensor) -> Tensor:
        return ConvNd.apply(x, weight, bias, stride=stride, pads=pads, dilation=dilation, groups=groups)

    out = empty_batch(run, input) if input._data.shape[0] == 0 else run(input)
    return out.squeeze(0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-d cross-correlation of (N, C_in, L) with weight (C_out, C_in/groups, k)."""
    return conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-d cross-correlation of (N, C_in, H, W) with weight (C_out, C_in/groups, kh, kw)."""
    return conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-d cross-correlation of (N, C_in, D, H, W) with weight (C_out, C_in/groups, kd, kh, kw)."""
    return conv(input, weight, bias, stride, padding, dilation, groups, 3)
