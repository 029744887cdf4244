"""The forward of a 4x4 stride-2 convolution with few output positions by Winograd F(m, 2) on its four phases.

A 4x4 stride-2 convolution (a WGAN or DCGAN critic's layers) is, on the four phases of its padded input
(even/odd rows by even/odd columns, xp[c, 2 h + u, 2 w + s]), a stride-1 convolution of 4 C channels with 2x2
sub-kernels: out[o, h, w] = sum over c, u, s, i, j of w[o, c, 2 i + u, 2 j + s] xp[c, 2 (h + i) + u, 2 (w + j) + s].
Winograd F(m, 2) per dim computes m outputs of a 2-tap filter from m + 1 products instead of 2 m, so the layer's
products become (m + 1)^2 GEMMs U_k (O x 4 C) @ V_k (4 C x tiles * N), k = p (m + 1) + q, with 9/16 (m = 2) or 25/64
(m = 4) of the im2col GEMM's work, and U, V and the result M are the transforms

    U = G f G^T (the weight), V = B^T d B (the input tiles, (m + 1) x (m + 1) values of one phase), out = A^T M A.

m = 2 (interpolation points 0, 1 and infinity: the transforms add and subtract only) where the output has fewer
than 8 x 8 positions per sample, m = 4 (points 0, 1, -1, 2 and infinity, the transposed convolution's F(4, 2) of
``conv_transpose_winograd.py``) from there: its GEMMs of 25 over 64 the work, each with fewer columns.
Rounding differs from im2col's (the transforms' additions; for m = 4 also their factors 1/2, 1/6, 2, 4 and 8):
measured against float64, about 1.5-2x PyTorch's float32 error at m = 2 and 10x at m = 4, as its Winograd
convolutions.

Why: these convolutions compute batch-last (``conv._batch_last``: 16-64 output positions per sample) with one
GEMM per output row, and their GEMMs alone took more than PyTorch's whole convolution (oneDNN's direct kernels
near the processor's peak, where OpenBLAS's run at 80-90 % of it). The forward here reads a padded batch-last
copy of the input, and writes its output in PyTorch's layout with the bias added (no copy back). Its weight
gradient is the same Winograd's transpose (``weight_grad_rows``): the output gradient's transform dM_k (A
applied as the output transform's transpose), the GEMMs dU_k = dM_k V_k^T on the input tiles V the forward kept
(where the weight needs a gradient), and the weight transform's transpose G^T dU G, 9/16 or 25/64 of the im2col
weight gradient's work and no column matrix (ember's im2col weight gradient took 1.2-1.6x PyTorch's time at
these layers). The input gradient keeps the batch-last col2im of ``conv.py`` (the transposed convolution's
F(4, 2), ``conv_transpose_winograd.py``, measured no faster at a critic's 64 and 128 channels, with 5-8x
PyTorch's rounding error), so the input and bias gradients of a given output gradient are the im2col path's
bits; the double backward's convolutions are ``conv_higher_order``'s.

At two threads the forward splits once, by the (m + 1)^2 GEMMs, each thread transforming its GEMMs' operands (the
input tiles and weights of those k) before multiplying them: one hand-off to ember's worker, as the im2col
forward's split by output rows. The passes over memory before and after (the padded batch-last copy, the output
transform, which replaces the copy out) split from ``policy.min_parallel_pass_elements`` on, as those copies do:
below it they run on the calling thread (a split of the output transform as well measured 34 hand-offs a WGAN-GP
step instead of 28, at no less CPU). Every value is computed as alone, so the bits do not depend on the thread
count.
"""

from __future__ import annotations

from ..._backend import xp
from ..._kernels import conv_phases as compiled
from ..._kernels.policy import policy
from ..._parallel import Rows, gemm_block, matmul_blocks, parallel_for, run_rows
from .conv_geometry import out_size
from .conv_layout import batch_last_padded

_F = {  # m: (G, B^T, A^T)
    2: (((1, 0), (1, 1), (0, 1)),
        ((1, -1, 0), (0, 1, 0), (0, -1, 1)),
        ((1, 1, 0), (0, 1, 1))),
    4: (((1 / 2, 0), (-1 / 2, -1 / 2), (-1 / 6, 1 / 6), (1 / 6, 1 / 3), (0, 1)),
        ((2, -1, -2, 1, 0), (0, -2, -1, 1, 0), (0, 2, -3, 1, 0), (0, -1, 0, 1, 0), (0, 2, -1, -2, 1)),
        ((1, 1, 1, 1, 0), (0, 1, -1, 2, 0), (0, 1, 1, 4, 0), (0, 1, -1, 8, 1))),
}


def tile(out_sp) -> int:
    """m of F(m, 2) for an output of ``out_sp`` positions per sample: 4 from 8 x 8 on, else 2."""
    return 4 if min(out_sp) >= 8 else 2


def applies(x, w, b, stride, pads, dilation, groups: int) -> bool:
    """Whether ``ConvNd``'s forward of x (N, C, H, W) with w (O, C, 4, 4) takes this path: 2-d, 4x4, stride 2,
    dilation 1, one group, float32/float64 arrays of one dtype (the bias's too), compiled kernels, the policy's
    ``strided_winograd``, and the padded input covering whole tiles once extended at its end (the tiles read
    2 m TY + 2 rows: the convolution's read rows and at most m zero rows more)."""
    if not (policy.strided_winograd and x.ndim == 4 and tuple(w.shape[2:]) == (4, 4) and tuple(stride) == (2, 2)
            and tuple(dilation) == (1, 1) and groups == 1 and x.dtype in (xp.float32, xp.float64)
            and w.dtype == x.dtype and (b is None or b.dtype == x.dtype) and type(x) is xp.ndarray
            and type(w) is xp.ndarray and policy.use_compiled()):
        return False
    return all(e >= 0 for e in _extra(x.shape[2:], pads))


def _extra(in_sp, pads) -> tuple:
    """Per dim, the zero positions after the convolution's padding that make its padded input whole tiles (< 0: the
    padded input reaches past the last tile, which this path does not crop)."""
    out_sp = out_size([n + lo + hi for n, (lo, hi) in zip(in_sp, pads)], (4, 4), (2, 2), (1, 1))
    m = tile(out_sp)
    return tuple(2 * m * -(-o // m) + 2 - (n + lo + hi) for n, o, (lo, hi) in zip(in_sp, out_sp, pads))


def forward(x, w, b, pads, keep_tiles: bool = False):
    """conv2d(x, w, b, stride=2) at per-dim (lo, hi) ``pads``: (out (N, O, Ho, Wo), contiguous, and the transformed
    input tiles V ((m + 1)^2, 4 C, TY TX N) that its GEMMs read, for ``weight_grad_rows``: kept only when
    ``keep_tiles``, else None)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    extra = _extra((h, wd), pads)
    full = tuple((lo, hi + e) for (lo, hi), e in zip(pads, extra))
    out_sp = out_size([s + lo + hi for s, (lo, hi) in zip((h, wd), pads)], (4, 4), (2, 2), (1, 1))
    m = tile(out_sp)
    al = m + 1
    g, bt, at = (xp.array(a, x.dtype) for a in _F[m])
    ty, tx = -(-out_sp[0] // m), -(-out_sp[1] // m)
    xb = batch_last_padded(x, full)  # (on this thread below ``min_parallel_pass_elements``, as im2col's)
    v = xp.empty((al * al, 4 * c, ty * tx * n), x.dtype)
    u = xp.empty((al * al, o, 4 * c), x.dtype)
    mm = xp.empty((al * al, o, v.shape[2]), x.dtype)
    block = gemm_block(o, 4 * c, v.shape[2])  # (kept on one OpenBLAS thread, as ``conv._row_matmul``'s GEMMs)

    def products(k0: int, k1: int) -> None:  # the GEMMs k0..k1 and their transformed operands
        compiled.input_tiles(xb, bt, ty, tx, k0, k1, v)
        compiled.weight_tiles(w, g, k0, k1, u)
        matmul_blocks(u[k0:k1], v[k0:k1], mm[k0:k1], block)

    run_rows(Rows(products, al * al, u.size + v.size + mm.size, block == 0))
    out = xp.empty((n, o, *out_sp), x.dtype)
    bias = xp.empty(0, x.dtype) if b is None else xp.ascontiguousarray(b)
    # a pass over memory as ``to_nchw``'s copy out, which it replaces: split from that pass's threshold on
    parallel_for(lambda o0, o1: compiled.output_tiles(mm, at, bias, tx, o0, o1, out), o, mm.size + out.size,
                 policy.min_parallel_pass_elements)
    return out, (v if keep_tiles else None)


def weight_grad_rows(v, gb_last, w_shape):
    """The weight gradient of ``forward`` from its kept input tiles ``v`` and the batch-last output gradient
    gb_last (O, Ho, Wo, N), by the same Winograd F(m, 2): (``Rows`` of the (m + 1)^2 tile GEMMs, each with the
    output gradient's transform of its own value k, dM_k (O x TY TX N), ready to run; ``finish()``, which after
    them gives dW (O, C, 4, 4) by the weight transform's transpose). The GEMMs are dU_k^T = V_k dM_k^T (4 C x O),
    9/16 (m = 2) or 25/64 (m = 4) of the im2col weight gradient's work, and no column matrix is built. Rounding is
    Winograd's, as the forward's: against float64, float32 RMS errors 1.1-1.6x PyTorch's at m = 2 and 1.9-3.2x at
    m = 4 (``tests/test_conv_phases.py``'s shapes). Every k computed as alone: the same bits for any thread count."""
    o, c = w_shape[0], w_shape[1]
    al = round(v.shape[0] ** 0.5)
    m = al - 1
    g, _, at = (xp.array(a, v.dtype) for a in _F[m])
    ho, wo = gb_last.shape[1:3]
    ty, tx = -(-ho // m), -(-wo // m)
    dm = xp.empty((al * al, o, v.shape[2]), v.dtype)
    dut = xp.empty((al * al, 4 * c, o), v.dtype)
    block = gemm_block(4 * c, v.shape[2], o)

    def products(k0: int, k1: int) -> None:
        compiled.grad_tiles(gb_last, at, ty, tx, k0, k1, dm)
        matmul_blocks(v[k0:k1], dm[k0:k1].transpose(0, 2, 1), dut[k0:k1], block)

    def finish():
        dw = xp.empty(w_shape, v.dtype)
        compiled.weight_grad_tiles(dut, g, dw)
        return dw

    return Rows(products, al * al, v.size + dm.size + dut.size, block == 0), finish
