"""Convolution by im2col in PyTorch's layout: (N, C, *spatial) in, contiguous (N, O, *out) out, no transposes.

Every sample's column matrix cols[n] (C * prod(k) by prod(out)) is built from its padded input and multiplied
by the weight (O by C * prod(k)) straight into out[n] (O by prod(out)), which is that sample's block of the
(N, O, *out) output. Samples are split over threads in blocks: a block's copies and GEMMs run back to back while
its columns are still in cache, and each sample's GEMM is its own, so the bits do not depend on the thread count.
The gradients stay in this layout too:

- dW = sum over samples of g[n] (O by prod(out)) @ cols[n]^T, one GEMM per sample (computed transposed where
  cols[n] has more rows), summed in a fixed order;
- dx: for stride 1 a convolution of the padded output gradient with the flipped kernel (``conv.py`` explains;
  it takes Winograd where that applies), else dcols[n] = W^T @ g[n] added back where im2col took it (col2im).

This replaces ``conv.py``'s batch-last im2col for the forward convolution (which needed four transposing copies
per convolution, ``conv_layout.py``); Winograd, convolutions with at most ``policy.batch_last_max_positions`` output
positions per sample (GEMMs that narrow ran at half speed) and the transposed convolution keep the batch-last
layout.
"""

from __future__ import annotations

import math

from ..._backend import xp
from ..._kernels import im2col as compiled
from ..._kernels.policy import policy
from ..._parallel import Rows, gemm_block, matmul_blocks, parallel_for, parallel_for_all, run_rows
from .conv_geometry import crop_spatial, offsets, out_size, pad_spatial_into, window


def forward(x, w, b, stride, dilation, groups: int, pads=None):
    """Cross-correlate x (N, C, *sp) padded by ``pads`` ((lo, hi), ...; None: unpadded) with w (O, C/G, *k), plus
    b (O,) when given: (out (N, O, *out), contiguous; cols (N, C, *k, *out), what ``weight_grad`` reads). Each block
    of samples is padded by the thread that computes it, in the same split as its im2col and GEMMs (one hand-off
    per convolution, no pass over the whole input on the calling thread first)."""
    padded = pads is not None and any(lo or hi for lo, hi in pads)
    xpad = xp.empty((*x.shape[:2], *(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))), x.dtype) if padded \
        else x
    n, c = xpad.shape[:2]
    o, kernel = w.shape[0], w.shape[2:]
    out_sp = out_size(xpad.shape[2:], kernel, stride, dilation)
    cols = xp.empty((n, c, *kernel, *out_sp), xpad.dtype)
    out = xp.empty((n, o, *out_sp), xpad.dtype)
    wm = w.reshape(groups, o // groups, -1)
    cm = cols.reshape(n, groups, -1, math.prod(out_sp))
    om = out.reshape(n, groups, o // groups, -1)
    windows = [xpad[window(offs, out_sp, stride, dilation, 2, 0)] for offs in offsets(kernel)]  # views
    block = gemm_block(wm.shape[-2], wm.shape[-1], cm.shape[-1])
    bias = None if b is None else b.reshape(groups, o // groups, 1)

    fast = _compiled(xpad, cols)

    def run(lo: int, hi: int) -> None:  # samples lo..hi: padding, im2col, then each sample's GEMM into its block
        if padded:
            pad_spatial_into(x[lo:hi], pads, xpad[lo:hi])
        if fast:
            compiled.im2col2d_nchw(xpad[lo:hi], *stride, *dilation, cols[lo:hi])
        else:
            for offs, src in zip(offsets(kernel), windows):
                cols[(slice(lo, hi), slice(None)) + offs] = src[lo:hi]
        matmul_blocks(wm, cm[lo:hi], om[lo:hi], block)
        if bias is not None:
            om[lo:hi] += bias

    parallel_for(run, n, cols.size + out.size)
    return out, cols


_WEIGHT_GRAD_BLOCKS = 8  # partial sums of the weight gradient: at most this many weight-sized arrays


def weight_grad(cols, g, w_shape, groups: int):
    """dL/dw of ``forward`` from its ``cols`` and the output gradient g (N, O, *out): per group, the sum over
    samples of g[n] @ cols[n]^T. The samples are summed in up to 8 blocks (in parallel; the block sums are then
    added in block order), one sample after another within a block: the bits depend on the batch size only, never
    on the thread count, and the memory on the weight's size only.

    Where the column matrix has more rows than g (C/G * prod(k) > O/G, most strided and first layers), each
    product is taken as dW^T = cols[n] @ g[n]^T instead, the longer side as the output's rows, as ``conv.py``'s
    batch-last ``weight_grad`` does: OpenBLAS runs these per-sample GEMMs 10-35 % faster that way (one thread,
    e.g. a ResNet's 16 -> 32 stride-2 layer at batch 32, 32 x 256 by 256 x 144: 1.47 -> 1.10 ms), and the other
    way round 5-13 % slower. Each element is the same dot product either way."""
    blocks, finish = _weight_grad_rows(cols, g, w_shape, groups)
    run_rows(blocks)
    return finish()


def _weight_grad_rows(cols, g, w_shape, groups: int):
    """``weight_grad``'s blocks of samples as ``Rows``, ready to run, and ``finish()``, which after them adds the
    blocks' sums in block order: dW."""
    n, o = g.shape[:2]
    gm = g.reshape(n, groups, o // groups, -1)
    cm = cols.reshape(n, groups, -1, gm.shape[-1])
    flipped = cm.shape[-2] > gm.shape[-2]
    if flipped:
        gm, cm = cm, gm  # dW^T, transposed back at the end
    cm = cm.swapaxes(-1, -2)
    size = -(-n // _WEIGHT_GRAD_BLOCKS)  # samples per block
    partial = xp.empty((-(-n // size), groups, gm.shape[-2], cm.shape[-1]), g.dtype)
    gemm = gemm_block(gm.shape[-2], gm.shape[-1], cm.shape[-1])

    def run(b0: int, b1: int) -> None:  # blocks b0..b1
        step = xp.empty_like(partial[0])
        for b in range(b0, b1):
            matmul_blocks(gm[b * size], cm[b * size], partial[b], gemm)
            for i in range(b * size + 1, min(n, (b + 1) * size)):
                matmul_blocks(gm[i], cm[i], step, gemm)
                partial[b] += step

    def finish():
        gw = partial.sum(0)
        return (gw.swapaxes(-1, -2) if flipped else gw).reshape(w_shape)

    return Rows(run, partial.shape[0], cols.size + g.size), finish


def input_grad(g, w, in_sp, stride, pads, dilation, groups: int):
    """dL/dx (N, C, *in_sp), contiguous, of a convolution with w (O, C/G, *k) from its output gradient g
    (N, O, *out): col2im of each sample's W^T @ g[n]. ``pads`` are the convolution's ((lo, hi), ...)."""
    samples, finish = _input_grad_rows(g, w, in_sp, stride, pads, dilation, groups)
    run_rows(samples)
    return finish()


def _input_grad_rows(g, w, in_sp, stride, pads, dilation, groups: int):
    """``input_grad``'s samples as ``Rows``, ready to run, and ``finish()``, which after them crops the padding:
    dL/dx."""
    n, o = g.shape[:2]
    kernel, out_sp = w.shape[2:], g.shape[2:]
    c = w.shape[1] * groups
    gxpad = xp.zeros((n, c, *(s + lo + hi for s, (lo, hi) in zip(in_sp, pads))), g.dtype)
    wt = w.reshape(groups, o // groups, -1).swapaxes(-1, -2)  # (G, C/G * prod(k), O/G)
    gm = g.reshape(n, groups, o // groups, -1)
    dcols = xp.empty((n, groups, wt.shape[-2], gm.shape[-1]), g.dtype)
    dview = dcols.reshape(n, c, *kernel, *out_sp)
    block = gemm_block(wt.shape[-2], wt.shape[-1], gm.shape[-1])
    fast = _compiled(gxpad, dcols)
    cropped = any(lo or hi for lo, hi in pads)
    gx = xp.empty((n, c, *in_sp), g.dtype) if cropped else gxpad

    def run(lo: int, hi: int) -> None:  # samples lo..hi: their column gradients, added back in kernel offset order
        matmul_blocks(wt, gm[lo:hi], dcols[lo:hi], block)
        dst = gxpad[lo:hi]
        if fast:
            compiled.col2im2d_nchw(dview[lo:hi], *stride, *dilation, dst)
        else:
            for offs in offsets(kernel):
                dst[window(offs, out_sp, stride, dilation, 2, 0)] += dview[(slice(lo, hi), slice(None)) + offs]
        if cropped:  # the padding cropped off by the thread that computed these samples, not after on the caller
            gx[lo:hi] = crop_spatial(dst, pads)

    return Rows(run, n, dcols.size + gxpad.size), lambda: gx


def grads(cols, g, w, in_sp, stride, pads, dilation, groups: int):
    """(``weight_grad(cols, g, w.shape, groups)``, ``input_grad(g, w, ...)``), the same bits, their blocks and
    samples in one ``parallel_for_all``: one hand-off to the workers instead of two, each thread a share of both."""
    blocks, weight_finish = _weight_grad_rows(cols, g, w.shape, groups)
    samples, input_finish = _input_grad_rows(g, w, in_sp, stride, pads, dilation, groups)
    parallel_for_all(blocks, samples)
    return weight_finish(), input_finish()


def _compiled(*arrays) -> bool:
    """Whether the compiled im2col / col2im take these arrays: a 2-d convolution's, plain float32/float64 NumPy
    arrays, C-contiguous."""
    return (arrays[0].ndim == 4 and all(type(a) is xp.ndarray and a.dtype in (xp.float32, xp.float64)
                                        and a.flags.c_contiguous for a in arrays) and policy.use_compiled())
