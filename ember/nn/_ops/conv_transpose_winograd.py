"""The DCGAN transposed convolution (4x4 kernel, stride 2, padding 1) by Winograd F(4, 2) per output phase.

Each output phase (even/odd row, even/odd column) of ``conv_transpose2d(x, w, stride=2, padding=1)`` with a 4x4
kernel is a stride-1 correlation of x padded by 1 with a 2x2 sub-kernel: along a dim, out[2t] = xp[t] w3 +
xp[t+1] w1 and out[2t+1] = xp[t+1] w2 + xp[t+2] w0 (xp: x padded by 1). Winograd F(4, 2) gives 4 outputs of a
2-tap filter from 5 multiplies instead of 8: ``y = A^T [(G f) * (B^T d)]`` for 5 inputs d, with (interpolation
points 0, 1, -1, 2 and infinity)

    A^T = [[1, 1, 1, 1, 0], [0, 1, -1, 2, 0], [0, 1, 1, 4, 0], [0, 1, -1, 8, 1]],
    G = [[1/2, 0], [-1/2, -1/2], [-1/6, 1/6], [1/6, 1/3], [0, 1]],
    B^T = [[2, -1, -2, 1, 0], [0, -2, -1, 1, 0], [0, 2, -3, 1, 0], [0, -1, 0, 1, 0], [0, 2, -1, -2, 1]].

Per dim a tile (index a) of 8 outputs, out[8a .. 8a + 7] (4 of each phase), reads xp[4a .. 4a + 5]: 10
transformed values (5 per phase), so 2-d tiles of 8x8 outputs take 100 products where direct arithmetic takes
256 (sizes that are not multiples of 4 pad x, and the output gradient, with zeros to whole tiles), and each of
the layer's three products (forward, weight gradient, input gradient) is one stack of 100 GEMMs with 0.39x the
work of col2im/im2col: U_k (O x C) @ V_k (C x tiles * N), dU_k = dM_k V_k^T, dV_k = U_k^T dM_k.

Every transform is a 1-d *tiled* product along one dim, run once per dim (rows, then columns) on batch-last arrays
(C, H, W, N), as in ``conv.py``: ``_tile`` (tile a's value k = sum_j mat[k, j] src[step a + j]: the input transform
and the output gradient's) and its transpose ``_untile`` (the output transform and the input gradient's, adding
overlapping tiles and dropping the padding). Both are NumPy here (the reference) and compiled in
``ember/_kernels/conv_transpose.py`` (the same bits), split over threads by rows.

At two threads each direction hands work to ember's worker three times, one split per stage whose rows are
independent: the input (or output-gradient) transform by channels, its batch-last copy and the weight transform's
GEMM in the same split; the GEMM stacks by product (the backward's two in one split); the output (or
input-gradient) transform by channels, with the copy back to (N, C, H, W) and the weight gradient's GEMM. A split
per pass took 17 hand-offs a benchmark step (batch 32, 128 -> 64 channels), each a wake of a sleeping worker on an
idle machine and a meeting of the threads; now 6. Each row is computed as before: the same bits.
"""

from __future__ import annotations

from ..._backend import xp
from ..._kernels import conv_transpose as compiled
from ..._kernels.policy import policy
from ..._parallel import Rows, matmul_rows, parallel_for_all
from .conv import _row_matmul, _row_matmul_rows
from .conv_layout import nchw_copy, padded_copy

_AT = ((1, 1, 1, 1, 0), (0, 1, -1, 2, 0), (0, 1, 1, 4, 0), (0, 1, -1, 8, 1))
_G = ((1 / 2, 0), (-1 / 2, -1 / 2), (-1 / 6, 1 / 6), (1 / 6, 1 / 3), (0, 1))
_BT = ((2, -1, -2, 1, 0), (0, -2, -1, 1, 0), (0, 2, -3, 1, 0), (0, -1, 0, 1, 0), (0, 2, -1, -2, 1))
_TAPS = ((3, 1), (2, 0))  # per phase: the kernel taps its 2-tap filter (f0, f1) reads


def _input_matrix(dtype):
    """(10, 6): transformed value 5 phase + p of a tile from xp[4a .. 4a + 5] (phase 1 reads one position on)."""
    d = xp.zeros((10, 6), dtype)
    for phase in range(2):
        d[5 * phase:5 * phase + 5, phase:phase + 5] = _BT
    return d


def _output_matrix(dtype):
    """(10, 8): the weight of product 5 phase + p in a tile's output 2i + phase (A^T per phase)."""
    o = xp.zeros((10, 8), dtype)
    for phase in range(2):
        for i in range(4):
            o[5 * phase:5 * phase + 5, 2 * i + phase] = _AT[i]
    return o


def _kernel_matrix(dtype):
    """(100, 16): row 10 kw + kh holds U's coefficients of the 16 kernel taps (G per phase, per dim)."""
    g = xp.zeros((10, 4), xp.float64)
    for phase, taps in enumerate(_TAPS):
        for p in range(5):
            for t, coef in zip(taps, _G[p]):
                g[5 * phase + p, t] = coef
    return (g[None, :, :, None] * g[:, None, None, :]).reshape(100, 16).astype(dtype)


# Winograd runs where its products number at most 1/1.5 of direct arithmetic's (16 per input position): tiles
# cover 4 x 4 inputs, so a 5 x 5 input (4 tiles, 400 products against 400) stays with col2im, 4 x 4 (100 against
# 256) and 8 x 8 (400 against 1024) take it. The transforms cost a few memory passes besides.
_MIN_SAVING = 1.5


def applies(x, w, stride, pads, dilation, groups: int) -> bool:
    """Whether conv_transpose of x (N, C, H, W) with w (C, O, kh, kw) takes this path: 2-d, 4x4, stride 2, padding 1,
    no output_padding, dilation 1, one group, float32/float64, ``policy.transposed_winograd``, an input large
    enough to save work (``_MIN_SAVING``) and a layer large enough for the transforms to pay (the policy's
    ``transposed_winograd_min_channels`` and ``_min_work``)."""
    if not (x.ndim == 4 and x.shape[2] and x.shape[3]):
        return False
    n, c, h, wd = x.shape
    tiles = -(-h // 4) * -(-wd // 4)
    return (policy.transposed_winograd and tuple(w.shape[2:]) == (4, 4) and tuple(stride) == (2, 2)
            and tuple(pads) == ((1, 1), (1, 1)) and tuple(dilation) == (1, 1) and groups == 1
            and 16 * h * wd >= _MIN_SAVING * 100 * tiles and x.dtype in (xp.float32, xp.float64)
            and min(c, w.shape[1]) >= policy.transposed_winograd_min_channels
            and n * c * w.shape[1] * h * wd >= policy.transposed_winograd_min_work
            and w.dtype == x.dtype)


def _tile_ref(src, mat, step: int, dst) -> None:
    """dst[k, r, a, x, n] = sum_j mat[k, j] src[r, step a + j, x, n] over the nonzero mat[k, j], j ascending."""
    count = dst.shape[2]
    for k in range(mat.shape[0]):
        first = True
        for j in range(mat.shape[1]):
            if mat[k, j] == 0:
                continue
            term = mat[k, j] * src[:, j:j + step * (count - 1) + 1:step]
            if first:
                dst[k] = term
            else:
                dst[k] += term
            first = False


def _untile_ref(src, mat, step: int, off: int, dst) -> None:
    """dst[r, step a + j - off, x, n] += sum_k mat[k, j] src[k, r, a, x, n] (k ascending, the nonzero mat[k, j]) for
    j ascending, from zero; positions outside dst are dropped."""
    count, length = src.shape[2], dst.shape[1]
    dst[...] = 0
    for j in range(mat.shape[1]):
        ks = [k for k in range(mat.shape[0]) if mat[k, j] != 0]
        if not ks:
            continue
        lo = max(0, -((j - off) // step))  # the first tile whose position is >= 0
        hi = min(count, (length - 1 - j + off) // step + 1)  # one past the last whose position is < length
        if hi <= lo:
            continue
        t = mat[ks[0], j] * src[ks[0], :, lo:hi]
        for k in ks[1:]:
            t += mat[k, j] * src[k, :, lo:hi]
        start = step * lo + j - off
        dst[:, start:start + step * (hi - lo - 1) + 1:step] += t


def _tile_rows(src, mat, step: int, r0: int, r1: int, dst) -> None:
    """Rows r0..r1 of the tiled product along dim 1 (see ``_tile_ref``): src (R, L, X, N), dst (K, R, count, X, N)."""
    if policy.use_compiled():
        compiled.tile(src.reshape(*src.shape[:2], -1), mat, step, r0, r1, dst.reshape(*dst.shape[:3], -1))
    else:
        _tile_ref(src[r0:r1], mat, step, dst[:, r0:r1])


def _untile_rows(src, mat, step: int, off: int, r0: int, r1: int, dst) -> None:
    """Rows r0..r1 of the transposed tiled product along dim 2 (see ``_untile_ref``): src (K, R, A, X, N), dst
    (R, length, X, N)."""
    if policy.use_compiled():
        compiled.untile(src.reshape(*src.shape[:3], -1), mat, step, off, r0, r1, dst.reshape(*dst.shape[:2], -1))
    else:
        _untile_ref(src[:, r0:r1], mat, step, off, dst[r0:r1])


def _tiles(x, pads, mat, step: int, a: int, bb: int, *beside: Rows):
    """x (N, R, H, W) -> its transform (K * K, R, A * B * N), K = mat's rows: the batch-last copy of x padded by
    ``pads``, then the tiled product along its rows (A tiles), then along its columns (B tiles), value 10 kw + kh.
    Every pass computes a channel from that channel alone, so all three run by channels in one split (one hand-off
    to ember's worker, where a split per pass took three, the threads meeting between them), and the independent
    kernels ``beside`` in it too."""
    xb, copy, _ = padded_copy(x, pads)  # (R, step A + ..., step B + ..., N)
    r, length, n, k = xb.shape[0], xb.shape[2], xb.shape[3], mat.shape[0]
    rows = xp.empty((k, r, a, length, n), x.dtype)
    by_rows = rows.reshape(k * r * a, length, 1, n)  # (kh, r, a) rows: the column pass's
    out = xp.empty((k, k * r * a, bb, 1, n), x.dtype)

    def run(r0: int, r1: int) -> None:
        if copy is not None:
            copy(r0, r1)
        _tile_rows(xb, mat, step, r0, r1, rows)
        for kh in range(k):  # channel r's rows of the column pass: (kh, r, 0..A)
            _tile_rows(by_rows, mat, step, (kh * r + r0) * a, (kh * r + r1) * a, out)

    parallel_for_all(Rows(run, r, xb.size + rows.size + out.size), *beside)
    return out.reshape(k * k, r, a * bb * n)


def _untiles(m, mat, step: int, off: int, a: int, bb: int, n: int, shape, bias=None, *beside: Rows):
    """m (K * K, R, A * B * N), value 10 kw + kh -> (N, R, *shape) in PyTorch's layout, plus ``bias`` per channel:
    the transposed tiled product along the columns (B tiles, to ``shape[1]`` positions), then along the rows (A
    tiles, to ``shape[0]``), overlapping tiles added, then the copy out of the batch-last layout. Every pass computes
    a channel from that channel alone, so all three run by channels in one split, with the kernels ``beside`` (see
    ``_tiles``)."""
    k, r = mat.shape[0], m.shape[1]
    src = m.reshape(k, k * r * a, bb, 1, n)  # the column pass's (kh, r, a) rows
    cols = xp.empty((k * r * a, shape[1], 1, n), m.dtype)
    planes = xp.empty((r, *shape, n), m.dtype)
    out, copy, _ = nchw_copy(planes, bias)

    def run(r0: int, r1: int) -> None:
        for kh in range(k):
            _untile_rows(src, mat, step, off, (kh * r + r0) * a, (kh * r + r1) * a, cols)
        _untile_rows(cols.reshape(k, r, a, shape[1], n), mat, step, off, r0, r1, planes)
        copy(r0, r1)

    parallel_for_all(Rows(run, r, m.size + cols.size + 2 * planes.size), *beside)
    return out


def _weights(w):
    """U (100, O, C) from w (C, O, 4, 4), to be filled by the returned ``Rows``."""
    c, o = w.shape[:2]
    # w's taps in front, (16, O, C) (a copy of w's size), so the GEMM writes U in its own order: the same dot
    # products as the transposed weight's GEMM and then a copy of U (6.25 times w's size), in 0.90 of the time
    wt = xp.ascontiguousarray(w.reshape(c, o, 16).transpose(2, 1, 0))
    rows, u = matmul_rows(_kernel_matrix(w.dtype), wt.reshape(16, o * c))  # not on OpenBLAS's threads
    return rows, u.reshape(100, o, c)


def _stack_matmul(a, b):
    """The 100 GEMMs a_k @ b_k, split over threads by k; with OpenBLAS on several threads each runs in blocks it
    keeps on one (``_parallel.gemm_block``): its own threads would meet once per GEMM, 300 times a step."""
    return _row_matmul(a, b, (a.shape[0], a.shape[1], b.shape[2]), a.dtype, 1)


def forward(x, w, b):
    """conv_transpose2d(x, w, b, stride=2, padding=1) of x (N, C, H, W): (out (N, O, 2H, 2W), what ``backward``
    takes: the transformed input V (100, C, A * B * N) and weight U (100, O, C); A = ceil(H / 4), B = ceil(W / 4))."""
    n, c, h, wd = x.shape
    a, bb = -(-h // 4), -(-wd // 4)
    u_rows, u = _weights(w)  # (100, O, C), in the input transform's split
    v = _tiles(x, ((1, 4 * a + 1 - h), (1, 4 * bb + 1 - wd)), _input_matrix(x.dtype), 4, a, bb, u_rows)
    m = _stack_matmul(u, v)  # (100, O, A * B * N)
    return _untiles(m, _output_matrix(x.dtype), 8, 0, a, bb, n, (2 * h, 2 * wd), b), (v, u)


def backward(g, saved, w, needs):
    """(dx, dw, db) of ``forward`` for the output gradient g (N, O, 2H, 2W); ``needs`` says which."""
    nx, nw, nb = needs
    v, u = saved
    n, o, h2, w2 = g.shape
    a, bb, c = -(-h2 // 8), -(-w2 // 8), w.shape[0]
    dm = _tiles(g, ((0, 8 * a - h2), (0, 8 * bb - w2)), _output_matrix(g.dtype), 8, a, bb)  # (100, O, A*B*N)
    products = []
    if nw:  # dU^T (100, C, O): 5 % faster than dM V^T here
        du_rows, du = _row_matmul_rows(v, dm.transpose(0, 2, 1), (100, c, o), g.dtype, 1)
        products.append(du_rows)
    if nx:
        dv_rows, dv = _row_matmul_rows(u.transpose(0, 2, 1), dm, (100, c, dm.shape[2]), g.dtype, 1)
        products.append(dv_rows)
    parallel_for_all(*products)  # both stacks in one split: each thread its share of each
    gx = gw = db = None
    beside = ()
    if nw:  # dw (C * O, 16) = dU^T K, written in w's order (not K^T dU and a transposing copy: 0.82 of the time)
        gw_rows, gw = matmul_rows(du.reshape(100, c * o).T, _kernel_matrix(g.dtype))
        beside, gw = (gw_rows,), gw.reshape(w.shape)
    if nx:  # (the weight gradient's GEMM in the same split)
        gx = _untiles(dv, _input_matrix(g.dtype), 4, 1, a, bb, n, (h2 // 2, w2 // 2), None, *beside)
    else:
        parallel_for_all(*beside)
    if nb:  # a tile's 8 positions along a dim sum to its uses (phase 0, point 1) and (1, 1): 4 of the 100 dM
        db = dm[[11, 16, 61, 66]].sum(axis=(0, 2))
    return gx, gw, db
