"""Separable resampling: each spatial axis of an (N, C, *spatial) array is mapped by its own small linear map.

Every ``interpolate`` mode is separable: output position o of an axis reads a few input positions (its *taps*)
with fixed weights, the same for every row of the other axes. An axis's map is kept two ways:

- taps: ``idx`` (K, out) input positions and ``w`` (K, out) weights (None: nearest, weight 1), each row sorted
  (the positions only grow with o). Forward is K gathers; backward adds the gradient back with ``add.reduceat``
  over the runs of equal positions (no scatter-add). This is PyTorch's arithmetic: a NaN or inf stays local.
- dense: the (out, in) interpolation matrix. Forward and backward are one matrix product per axis over the whole
  array (in the array's own memory order, so a batch-last input keeps its layout), several times faster
  than the gathers on the small images CNNs see. A matrix multiplies every input by every weight, zeros
  included, so ``0 * inf`` would spread a non-finite value along the whole line: the dense path is used only
  for finite values (checked first) and axes short enough that the wasted zeros are cheap.

The gradient of ``y = M x`` along an axis is ``M^T g``: the same map, transposed.
"""

from __future__ import annotations

import math

from ..._backend import xp
from ..._kernels.policy import policy
from ..._parallel import gemm_block, matmul_blocks, parallel_for
from ...autograd.graph import Node
from ...autograd.recorded import is_recorded


class AxisMap:
    """One spatial axis's map from ``n_in`` to ``n_out`` positions: its taps (idx, w), and the dense matrix built
    from them on first use.

    ``grad``: the map whose transpose backward applies, where PyTorch's backward kernel maps differently from its
    forward one (by default this map itself).
    """

    def __init__(self, n_in: int, n_out: int, idx, w=None, grad: AxisMap | None = None) -> None:
        self.n_in, self.n_out, self.idx, self.w, self._matrix = n_in, n_out, idx, w, None
        self.grad = grad or self

    def matrix(self, dtype):
        if self._matrix is None:
            m = xp.zeros((self.n_out, self.n_in), dtype)
            rows = xp.arange(self.n_out)
            for k in range(self.idx.shape[0]):  # a position repeated across taps (clamped borders) adds up
                m[rows, self.idx[k]] += 1 if self.w is None else self.w[k]
            self._matrix = m
        return self._matrix.astype(dtype, copy=False)

    def is_identity(self) -> bool:
        return (self.n_in == self.n_out and bool((self.idx[0] == xp.arange(self.n_in)).all())
                and (self.w is None or bool((self.w[0] == 1).all())))


def _memory_order(a) -> list:
    """The order of ``a``'s axes in memory, outermost first (size-1 axes after the others of equal stride)."""
    return sorted(range(a.ndim), key=lambda i: (-a.strides[i], -a.shape[i]))


def _contract(a, m, axis: int):
    """Apply matrix ``m`` (out, in) along ``axis`` of ``a``; the result keeps ``a``'s memory order."""
    if is_recorded(a):  # create_graph: one recorded product (no threads writing into a buffer)
        return xp.moveaxis(xp.matmul(xp.moveaxis(a, axis, -1), m.T), -1, axis)
    order = _memory_order(a)
    am = a.transpose(order)
    if not am.flags.c_contiguous:
        am = xp.ascontiguousarray(am)
    p = order.index(axis)
    lead, trail = math.prod(am.shape[:p]), math.prod(am.shape[p + 1:])
    n_out, n_in = m.shape
    shape = am.shape[:p] + (n_out,) + am.shape[p + 1:]
    out = xp.empty(shape, a.dtype)
    if trail == 1:  # the innermost axis: one GEMM (rows, in) @ (in, out), in row blocks split over threads
        a2, o2, mt = am.reshape(lead, n_in), out.reshape(lead, n_out), m.T
        # blocks from the shape alone: OpenBLAS picks its kernel by a GEMM's size, so the same blocks give the
        # same bits for any thread count
        block = gemm_block(lead, n_in, n_out) or max(lead, 1)

        def run(b0: int, b1: int) -> None:
            for b in range(b0, b1):
                xp.matmul(a2[b * block:(b + 1) * block], mt, out=o2[b * block:(b + 1) * block])

        parallel_for(run, -(-lead // block), out.size + am.size)
    else:  # a stack of (out, in) @ (in, trail) GEMMs, the stack split over threads
        a3, o3 = am.reshape(lead, n_in, trail), out.reshape(lead, n_out, trail)
        block = gemm_block(n_out, n_in, trail)

        def run(lo: int, hi: int) -> None:
            matmul_blocks(m, a3[lo:hi], o3[lo:hi], block)

        parallel_for(run, lead, out.size + am.size)
    return out.transpose(xp.argsort(order))


def _finite(a) -> bool:
    return bool(xp.isfinite(a).all())


def _bshape(ndim: int, axis: int, n: int) -> tuple:
    return (1,) * axis + (n,) + (1,) * (ndim - axis - 1)


def _gather(a, amap: AxisMap, axis: int):
    """The taps' forward along ``axis``: sum over k of w[k] * a[..., idx[k], ...]."""
    out = None
    for k in range(amap.idx.shape[0]):
        part = xp.take(a, amap.idx[k], axis=axis)
        if amap.w is not None:
            part *= amap.w[k].astype(a.dtype, copy=False).reshape(_bshape(a.ndim, axis, amap.n_out))
        out = part if out is None else xp.add(out, part, out=out)
    return out


def _scatter(g, amap: AxisMap, axis: int):
    """The taps' backward along ``axis``: each tap's weighted gradient summed over its runs of equal positions."""
    shape = g.shape[:axis] + (amap.n_in,) + g.shape[axis + 1:]
    gx = xp.zeros(shape, g.dtype)
    lead = (slice(None),) * axis
    for k in range(amap.idx.shape[0]):
        idx = amap.idx[k]
        part = g if amap.w is None else g * amap.w[k].astype(g.dtype, copy=False).reshape(
            _bshape(g.ndim, axis, amap.n_out))
        starts = xp.flatnonzero(xp.r_[True, idx[1:] != idx[:-1]])  # idx is sorted: each run is one position
        gx[lead + (idx[starts],)] += xp.add.reduceat(part, starts, axis=axis)
    return gx


def _dense_ok(maps) -> bool:
    return policy.dense_resample and all(m.n_in <= policy.dense_resample_max_in for m in maps)


class Resample(Node):
    """y = the maps applied along the spatial axes (the last len(maps)) of x (N, C, *spatial)."""

    def forward(self, x, maps):
        lead = x.ndim - len(maps)
        active = [(lead + i, m) for i, m in enumerate(maps) if not m.is_identity()]
        self.grad_maps = [(lead + i, m.grad) for i, m in enumerate(maps) if not m.grad.is_identity()]
        if not active:
            return x.copy()
        dense = _dense_ok([m for _, m in active]) and _finite(x)
        for axis, m in active:
            x = _contract(x, m.matrix(x.dtype), axis) if dense else _gather(x, m, axis)
        return x

    def backward(self, g):
        active = self.grad_maps
        if not active:
            return (g.copy(),)
        # create_graph: always the matrices, whose products record themselves (the taps' reduceat does not), so
        # there a non-finite gradient spreads along its lines
        recorded = is_recorded(g)
        if recorded or _dense_ok([m for _, m in active]):
            gx = g
            for axis, m in reversed(active):
                gx = _contract(gx, m.matrix(g.dtype).T, axis)
            if recorded or _finite(gx):  # a non-finite g shows up in gx
                return (gx,)
        for axis, m in reversed(active):
            g = _scatter(g, m, axis)
        return (g,)
