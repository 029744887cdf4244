"""Winograd F(2x2, 3x3): the stride-1, dilation-1, 3x3 convolution with 2.25x fewer multiplies.

Each 4x4 tile d of the padded input (tiles step by 2) gives a 2x2 block of outputs:
``y = A^T [ (G w G^T) * (B^T d B) ] A``, so the convolution becomes 16 small GEMMs (one per
tile position), U_p (O x C) @ V_p (C x tiles*N), between two cheap transforms.

Arrays are batch-last, (C, H, W, N), as in ``conv.py``; every transform is a handful of NumPy
passes over whole (channel, tile row, tile column, batch) blocks. The work runs in *bands* of
tile rows so that a band's transformed input and GEMM result stay in cache; bands are
independent (the weight gradient keeps one partial sum per band and adds them in band order),
so ``parallel_for`` splits them over threads and the result has the same bits for any thread
count. The band size depends on the shape only, and so do the blocks a tile GEMM runs in when
OpenBLAS would otherwise thread it itself (``_parallel.gemm_block``; none inside ``ConvNd``, which sets OpenBLAS to
one thread where it can: ``_parallel.one_blas_thread``).

``conv3x3_nchw`` / ``weight_grad3x3_nchw`` take and return PyTorch's (N, C, H, W) layout (what ``ConvNd``
calls): with compiled kernels and images of at least ``policy.winograd_nchw_min_tiles`` tile columns, the
transforms read and write that layout directly over bands of samples (no layout copies); otherwise they wrap
the batch-last path in ``conv_layout``'s copies (the reference composition).

Matrices (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015):
B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]],
A^T = [[1, 1, 1, 0], [0, 1, -1, -1]].
"""

from __future__ import annotations

from ..._backend import xp
from ..._kernels import winograd as compiled
from ..._kernels.policy import policy
from ..._parallel import Rows, gemm_block, get_num_threads, matmul_blocks, parallel_for_all, run_rows
from .conv_layout import batch_last_padded, to_batch_last, to_nchw


def applies(xb, w, stride, dilation, groups: int) -> bool:
    """Whether the convolution of batch-last xb (C, *padded, N) with w (O, C/G, *k) takes the Winograd path:
    2-d, 3x3, stride 1, dilation 1, one group, float, and large enough to pay.

    The transforms are NumPy passes whose inner runs are the batch (N elements), and the tile GEMMs have
    K = C: measured on a CIFAR ResNet's layers, Winograd is faster than im2col from batch 32 with 16 or more
    channels in and out (1.2-1.6x), and from batch 64 with 8; at batch 16 and below im2col is as fast or faster.
    """
    if not (xb.ndim == 4 and w.shape[2:] == (3, 3) and tuple(stride) == (1, 1) and tuple(dilation) == (1, 1)
            and groups == 1 and xb.dtype in (xp.float32, xp.float64)):
        return False
    n, narrow = xb.shape[-1], min(xb.shape[0], w.shape[0])
    return (n >= 32 and narrow >= 16) or (n >= 64 and narrow >= 8)


def _bands(c: int, th: int, tw: int, n: int) -> int:
    """Tile rows per band (about ``policy.winograd_band_elements`` input elements each)."""
    return max(1, min(th, policy.winograd_band_elements // max(1, c * 2 * tw * n)))


def _even(a, th: int, tw: int, extra: int):
    """a (C, H, W, N) zero-extended at the bottom/right to (C, 2 th + extra, 2 tw + extra, N) when it is smaller."""
    h, w = 2 * th + extra, 2 * tw + extra
    if a.shape[1:3] == (h, w):
        return a
    out = xp.zeros((a.shape[0], h, w, a.shape[3]), a.dtype)
    out[:, :a.shape[1], :a.shape[2]] = a
    return out


def _input_tiles(xb, t0: int, k: int, tw: int):
    """B^T d B for the k tile rows from tile row t0 of xb (C, H, W, N): V (4, 4, C, k, tw, N)."""
    if policy.use_compiled():
        v = xp.empty((4, 4, xb.shape[0], k, tw, xb.shape[3]), xb.dtype)
        compiled.input_tiles(xb, t0, v)
        return v
    return _input_tiles_numpy(xb[:, 2 * t0:2 * t0 + 2 * k + 2], k, tw)


def _input_tiles_numpy(xs, k: int, tw: int):
    """The reference: B^T d B for the k tile rows of xs (C, 2k + 2, 2 tw + 2, N), in 8 NumPy passes."""
    c, n = xs.shape[0], xs.shape[3]
    e = [xs[:, :, j:j + 2 * tw:2] for j in range(4)]  # tile column j of every tile: (C, 2k + 2, tw, N)
    r = xp.empty((4, c, 2 * k + 2, tw, n), xs.dtype)  # columns transformed (d B)
    xp.subtract(e[0], e[2], out=r[0])
    xp.add(e[1], e[2], out=r[1])
    xp.subtract(e[2], e[1], out=r[2])
    xp.subtract(e[1], e[3], out=r[3])
    v = xp.empty((4, 4, c, k, tw, n), xs.dtype)
    for b in range(4):  # then rows (B^T .)
        d = [r[b][:, j:j + 2 * k:2] for j in range(4)]
        xp.subtract(d[0], d[2], out=v[0, b])
        xp.add(d[1], d[2], out=v[1, b])
        xp.subtract(d[2], d[1], out=v[2, b])
        xp.subtract(d[1], d[3], out=v[3, b])
    return v


def _g_first(a):
    """G @ a along the first axis (3 -> 4): the filter transform of one dimension."""
    out = xp.empty((4, *a.shape[1:]), a.dtype)
    s = a[0] + a[2]
    out[0] = a[0]
    xp.add(s, a[1], out=out[1])
    out[1] *= 0.5
    xp.subtract(s, a[1], out=out[2])
    out[2] *= 0.5
    out[3] = a[2]
    return out


def _gt_first(a):
    """G^T @ a along the first axis (4 -> 3): the transpose of ``_g_first``."""
    out = xp.empty((3, *a.shape[1:]), a.dtype)
    s = a[1] + a[2]
    s *= 0.5
    xp.add(a[0], s, out=out[0])
    xp.subtract(a[1], a[2], out=out[1])
    out[1] *= 0.5
    xp.add(s, a[3], out=out[2])
    return out


# The filter transforms work on (kh, kw, O, C) blocks, in float64: a (16 x 9) GEMM would be OpenBLAS-threaded
# (and slower so) for a few thousand filters, competing with ember's threads.
def _weight_tiles(w):
    """G w G^T for w (O, C, 3, 3): U (16, O, C), tile positions row-major."""
    if policy.use_compiled():  # one compiled pass, the same bits
        u = xp.empty((16, *w.shape[:2]), w.dtype)
        compiled.weight_tiles(xp.ascontiguousarray(w), u)
        return u
    a = xp.ascontiguousarray(w.transpose(2, 3, 0, 1), dtype=xp.float64)  # (kh, kw, O, C)
    u = _g_first(_g_first(a).swapaxes(0, 1)).swapaxes(0, 1)  # (i, j, O, C)
    return xp.ascontiguousarray(u, dtype=w.dtype).reshape(16, *w.shape[:2])


def _weight_grad_untiles(du):
    """G^T dU G for dU (16, O, C) (tile positions row-major), in float64 rounded to du's dtype: (O, C, 3, 3)."""
    if policy.use_compiled():  # one compiled pass, the same bits
        out = xp.empty((*du.shape[1:], 3, 3), du.dtype)
        compiled.weight_grad_untiles(xp.ascontiguousarray(du), out)
        return out
    d = du.reshape(4, 4, *du.shape[1:]).astype(xp.float64)  # (i, j, O, C)
    r = _gt_first(_gt_first(d).swapaxes(0, 1))  # (l, k, O, C)
    return r.transpose(2, 3, 1, 0).astype(du.dtype)


def _output_tiles(m, t0: int, out) -> None:
    """out[:, t0:t0 + k] = A^T m A for the tile GEMMs' result m (4, 4, O, k, tw, N); out (O, th, 2, tw, 2, N)."""
    if policy.use_compiled():
        compiled.output_tiles(m, t0, out)
        return
    # rows first (whole contiguous blocks), then columns into the output's 2x2 slots
    s = xp.empty((2, *m.shape[1:]), m.dtype)
    xp.add(m[0], m[1], out=s[0])
    s[0] += m[2]
    xp.subtract(m[1], m[2], out=s[1])
    s[1] -= m[3]
    ob = out[:, t0:t0 + m.shape[3]]
    for a in range(2):
        t = ob[:, :, a, :, 0]
        xp.add(s[a, 0], s[a, 1], out=t)
        t += s[a, 2]
        t = ob[:, :, a, :, 1]
        xp.subtract(s[a, 1], s[a, 2], out=t)
        t -= s[a, 3]


def _grad_tiles(g6, t0: int, k: int):
    """A g A^T for the 2x2 blocks of tile rows t0..t0 + k of g6 (O, th, 2, tw, 2, N): dM (4, 4, O, k, tw, N)."""
    o, tw, n = g6.shape[0], g6.shape[3], g6.shape[5]
    dm = xp.empty((4, 4, o, k, tw, n), g6.dtype)
    if policy.use_compiled():
        compiled.grad_tiles(g6, t0, dm)
        return dm
    gt = g6[:, t0:t0 + k]
    # rows (tile row a of g -> 4) then columns; A = [[1, 0], [1, 1], [1, -1], [0, -1]]
    q = xp.empty((4, o, k, tw, 2, n), g6.dtype)
    q[0] = gt[:, :, 0]
    xp.add(gt[:, :, 0], gt[:, :, 1], out=q[1])
    xp.subtract(gt[:, :, 0], gt[:, :, 1], out=q[2])
    xp.negative(gt[:, :, 1], out=q[3])
    dm[:, 0] = q[:, :, :, :, 0]
    xp.add(q[:, :, :, :, 0], q[:, :, :, :, 1], out=dm[:, 1])
    xp.subtract(q[:, :, :, :, 0], q[:, :, :, :, 1], out=dm[:, 2])
    xp.negative(q[:, :, :, :, 1], out=dm[:, 3])
    return dm


def _forward_rows(w, units: int, per: int, cols: int, tiles_of, store, keep_tiles: bool, size: int):
    """The forward's band loop over ``units`` (tile rows, or samples) in bands of ``per`` (``cols`` tiles each):
    V = ``tiles_of(start, count)`` (4, 4, C, count, ...), the 16 tile GEMMs with U = G w G^T, and
    ``store(m, start)`` of their result m (4, 4, O, count, ...). Returns (the bands as ``Rows``, ready to run; a
    list the bands' V fill when ``keep_tiles``, else None). ``size``: the output's elements (the threading
    decision). The bands stay whole on one thread where a tile GEMM is too wide to keep on one OpenBLAS thread
    (``gemm_block`` 0), whose own threads then share the cores."""
    o, c = w.shape[:2]
    u = _weight_tiles(w)
    nbands = -(-units // per)
    tiles = [None] * nbands if keep_tiles else None
    block = gemm_block(o, c, cols)

    def run(b0: int, b1: int) -> None:
        for band in range(b0, b1):
            start = band * per
            v = tiles_of(start, min(per, units - start))
            if tiles is not None:
                tiles[band] = v
            m = xp.empty((16, o, v[0, 0].size // c), v.dtype)
            matmul_blocks(u, v.reshape(16, c, -1), m, block)
            store(m.reshape(4, 4, o, *v.shape[3:]), start)

    return Rows(run, nbands, size, block == 0), tiles


def _weight_grad_rows(tiles, o: int, grads_of, size: int):
    """The weight gradient's band loop: per band, dM = ``grads_of(start, count)`` (4, 4, O, *tiles) times the
    band's kept V (4, 4, C, count, ...), each band's product its own partial sum. Returns (the bands as ``Rows``,
    ready to run; ``finish()``, which after them sums the partials in band order, whatever the thread count, and
    gives (O, C, 3, 3))."""
    c, per, nbands = tiles[0].shape[2], tiles[0].shape[3], len(tiles)
    partial = xp.empty((nbands, 16, o, c), tiles[0].dtype)
    block = gemm_block(o, tiles[0][0, 0].size // c, c)

    def run(b0: int, b1: int) -> None:
        for band in range(b0, b1):
            v = tiles[band]
            dm = grads_of(band * per, v.shape[3])
            matmul_blocks(dm.reshape(16, o, -1), v.reshape(16, c, -1).swapaxes(1, 2), partial[band], block)

    def finish():
        return _weight_grad_untiles(partial.sum(0) if nbands > 1 else partial[0])

    return Rows(run, nbands, size, block == 0), finish


def conv3x3(xb, w, keep_tiles: bool = False):
    """Cross-correlate padded batch-last xb (C, Hp, Wp, N) with w (O, C, 3, 3): (out (O, Hp - 2, Wp - 2, N),
    contiguous, tiles). ``tiles`` (the transformed input, one array per band, for ``weight_grad3x3``) is None
    unless ``keep_tiles``."""
    bands, tiles, finish = conv3x3_rows(xb, w, keep_tiles)
    run_rows(bands)
    return finish(), tiles


def conv3x3_rows(xb, w, keep_tiles: bool = False):
    """``conv3x3``'s bands as ``Rows``, ready to run; the list of V they fill (None unless ``keep_tiles``); and
    ``finish()``, which after them gives the output."""
    c, hp, wp, n = xb.shape
    o = w.shape[0]
    ho, wo = hp - 2, wp - 2
    th, tw = (ho + 1) // 2, (wo + 1) // 2
    xb = _even(xb, th, tw, 2)
    out = xp.empty((o, th, 2, tw, 2, n), xb.dtype)
    tb = _bands(c, th, tw, n)
    bands, tiles = _forward_rows(w, th, tb, tb * tw * n, lambda t0, k: _input_tiles(xb, t0, k, tw),
                                 lambda m, t0: _output_tiles(m, t0, out), keep_tiles, out.size)

    def finish():
        whole = out.reshape(o, 2 * th, 2 * tw, n)
        return whole if (2 * th, 2 * tw) == (ho, wo) else xp.ascontiguousarray(whole[:, :ho, :wo])

    return bands, tiles, finish


def weight_grad3x3(tiles, gb):
    """dL/dw of ``conv3x3(xb, w)`` from its kept ``tiles`` and the output gradient gb (O, Ho, Wo, N): (O, C, 3, 3).

    With m = U * V (per tile position) and y = A^T m A, the gradient of U at position p is
    sum over tiles of (A g A^T)_p V_p^T, and dw = G^T dU G.
    """
    bands, finish = weight_grad3x3_rows(tiles, gb)
    run_rows(bands)
    return finish()


def weight_grad3x3_rows(tiles, gb):
    """``weight_grad3x3``'s bands, ``_weight_grad_rows``' (bands, finish)."""
    o, ho, wo, n = gb.shape
    th, tw = (ho + 1) // 2, (wo + 1) // 2
    g6 = _even(gb, th, tw, 0).reshape(o, th, 2, tw, 2, n)
    return _weight_grad_rows(tiles, o, lambda t0, k: _grad_tiles(g6, t0, k), gb.size)



def bands_nchw(out_width: int, *arrays) -> bool:
    """Whether ``conv3x3_bands_nchw`` (and ``weight_grad3x3_bands_nchw_rows``) take a convolution of ``out_width``
    output columns on these arrays (None: absent): ``policy.winograd_bands_nchw``, more than one thread, at most
    ``policy.winograd_bands_max_tiles`` tile columns, compiled kernels, C-contiguous float arrays of one dtype.
    At one thread the layout copies keep no other thread waiting, and the plain batch-last kernels after them took
    as long or less; the bits are the same either way."""
    return (policy.winograd_bands_nchw and get_num_threads() > 1
            and (out_width + 1) // 2 <= policy.winograd_bands_max_tiles and _nchw_compiled(*arrays))


def conv3x3_bands_nchw(x, w, pads, bias=None, keep_tiles: bool = False):
    """``conv3x3`` of x (N, C, H, W) padded by ``pads`` ((top, bottom), (left, right)) with w (O, C, 3, 3), plus
    ``bias`` (O,) when given, in PyTorch's layout: (out (N, O, Ho, Wo), contiguous; ``conv3x3``'s tiles, for
    ``weight_grad3x3``, None unless ``keep_tiles``). Its bands of tile rows gather their padded batch-last input
    and scatter their output inside the band (``bands_nchw`` must hold): the bits of ``to_nchw(conv3x3(
    batch_last_padded(x, pads), w)[0], bias)``, without those two copies on the calling thread around the bands.
    Padding is zero or more on each side."""
    bands, out, tiles = conv3x3_bands_nchw_rows(x, w, pads, bias, keep_tiles)
    run_rows(bands)
    return out, tiles


def _nchw_output(x, w, pads, bias):
    """The geometry of a 3x3 convolution of x (N, C, H, W) padded by ``pads`` with w (O, C, 3, 3) in PyTorch's layout:
    (N, C, top, left padding, tile rows, tile columns, the output (N, O, Ho, Wo) to fill, the bias or an empty
    array)."""
    n, c, h, wd = x.shape
    (top, bottom), (left, right) = pads
    ho, wo = h + top + bottom - 2, wd + left + right - 2
    out = xp.empty((n, w.shape[0], ho, wo), x.dtype)
    return n, c, top, left, (ho + 1) // 2, (wo + 1) // 2, out, xp.empty(0, x.dtype) if bias is None else bias


def conv3x3_bands_nchw_rows(x, w, pads, bias=None, keep_tiles: bool = False):
    """``conv3x3_bands_nchw``, ready to run: (its bands as ``Rows``, the output they fill, the list of V they fill
    when ``keep_tiles``, else None)."""
    n, c, top, left, th, tw, out, b = _nchw_output(x, w, pads, bias)
    tb = _bands(c, th, tw, n)

    def tiles_of(t0: int, k: int):
        v = xp.empty((4, 4, c, k, tw, n), x.dtype)
        compiled.input_tiles_from_nchw(x, top, left, t0, v)
        return v

    bands, tiles = _forward_rows(w, th, tb, tb * tw * n, tiles_of,
                                 lambda m, t0: compiled.output_tiles_to_nchw(m, b, t0, out), keep_tiles, out.size)
    return bands, out, tiles


def weight_grad3x3_bands_nchw_rows(tiles, g):
    """``weight_grad3x3_rows(tiles, to_batch_last(g))`` for ``conv3x3``'s (or ``conv3x3_bands_nchw``'s) kept tiles
    and the output gradient g (N, O, Ho, Wo), C-contiguous, compiled kernels: each band gathers its tile rows of g
    itself (the same bits, without the copy of the whole g on the calling thread first)."""
    n, o, ho, wo = g.shape
    tw = (wo + 1) // 2

    def grads_of(t0: int, k: int):
        dm = xp.empty((4, 4, o, k, tw, n), g.dtype)
        compiled.grad_tiles_from_nchw(g, t0, dm)
        return dm

    return _weight_grad_rows(tiles, o, grads_of, g.size)

# (N, C, H, W) in and out, with no layout copies (compiled only): bands of samples, whose tiles the compiled
# ``*_nchw`` transforms read from and write to PyTorch's layout directly, row by row. The tile GEMMs and the
# transforms' arithmetic are the batch-last path's, so the convolution's values are the same bits; its weight
# gradient sums the tiles in another order (to rounding). Without compiled kernels these take the reference
# composition: ``conv_layout``'s copies around the batch-last path.
def _nchw_compiled(*arrays) -> bool:
    """Whether the (N, C, H, W) path takes these arrays (None: absent): C-contiguous float32/float64 NumPy arrays
    of one dtype, compiled kernels on."""
    dtype = arrays[0].dtype
    return (all(a is None or (type(a) is xp.ndarray and a.dtype == dtype and a.flags.c_contiguous) for a in arrays)
            and dtype in (xp.float32, xp.float64) and policy.use_compiled())


def _samples_per_band(c: int, th: int, tw: int, n: int) -> int:
    """Samples per band of the (N, C, H, W) path (about ``policy.winograd_band_elements`` input elements each)."""
    return max(1, min(n, policy.winograd_band_elements // max(1, c * 4 * th * tw)))


def direct_nchw(x, w, pads, bias=None) -> bool:
    """Whether ``conv3x3_nchw`` computes in (N, C, H, W) itself: compiled kernels, and images of at least
    ``policy.winograd_nchw_min_tiles`` tile columns; narrower ones go between batch-last copies."""
    (left, right) = pads[1]
    tiles_across = (x.shape[3] + left + right - 1) // 2
    return tiles_across >= policy.winograd_nchw_min_tiles and _nchw_compiled(x, w, bias)


def conv3x3_nchw(x, w, pads, bias=None, keep_tiles: bool = False):
    """Cross-correlate x (N, C, H, W) padded by ``pads`` ((top, bottom), (left, right)) with w (O, C, 3, 3), plus
    ``bias`` (O,) when given: (out (N, O, Ho, Wo), contiguous, tiles for ``weight_grad3x3_nchw``: None unless
    ``keep_tiles``)."""
    if not direct_nchw(x, w, pads, bias):
        out, tiles = conv3x3(batch_last_padded(x, pads), w, keep_tiles)
        return to_nchw(out, bias), tiles
    bands, out, tiles = _conv3x3_nchw_rows(x, w, pads, bias, keep_tiles)
    run_rows(bands)
    return out, None if tiles is None else SampleTiles(tiles)


def _conv3x3_nchw_rows(x, w, pads, bias, keep_tiles: bool):
    """``conv3x3_nchw``'s direct path, ready to run: (its bands as ``Rows``, the output they fill, the list of V
    they fill when ``keep_tiles``, else None)."""
    n, c, top, left, th, tw, out, b = _nchw_output(x, w, pads, bias)
    per = _samples_per_band(c, th, tw, n)

    def tiles_of(n0: int, count: int):
        v = xp.empty((4, 4, c, count, th, tw), x.dtype)
        compiled.input_tiles_nchw(x, top, left, n0, v)
        return v

    bands, tiles = _forward_rows(w, n, per, per * th * tw, tiles_of,
                                 lambda m, n0: compiled.output_tiles_nchw(m, b, n0, out), keep_tiles, out.size)
    return bands, out, tiles


class SampleTiles(list):
    """``conv3x3_nchw``'s kept tiles by bands of samples, V (4, 4, C, count, th, tw) each (its compiled path; the
    reference's are a plain list of tile-row bands, ``conv3x3``'s)."""


def weight_grad3x3_nchw(tiles, g):
    """dL/dw of ``conv3x3_nchw`` from its kept ``tiles`` and the output gradient g (N, O, Ho, Wo): (O, C, 3, 3)."""
    if not isinstance(tiles, SampleTiles):
        return weight_grad3x3(tiles, to_batch_last(g))
    bands, finish = _weight_grad_nchw_rows(tiles, g)
    run_rows(bands)
    return finish()


def _weight_grad_nchw_rows(tiles, g):
    """``weight_grad3x3_nchw``'s direct path: ``_weight_grad_rows``' (bands, finish)."""
    g = xp.ascontiguousarray(g, dtype=tiles[0].dtype)
    o, ho, wo = g.shape[1:]
    th, tw = (ho + 1) // 2, (wo + 1) // 2

    def grads_of(n0: int, count: int):
        dm = xp.empty((4, 4, o, count, th, tw), g.dtype)
        compiled.grad_tiles_nchw(g, n0, dm)
        return dm

    return _weight_grad_rows(tiles, o, grads_of, g.size)


def grads3x3_nchw(tiles, g, w_flipped, pads):
    """A stride-1 Winograd convolution's weight and input gradients from its kept ``tiles`` and the output gradient
    g (N, O, Ho, Wo): (``weight_grad3x3_nchw(tiles, g)``, ``conv3x3_nchw(g, w_flipped, pads)``'s output), the same
    bits. Where both take the direct (N, C, H, W) path their bands run as one ``parallel_for_all`` (one hand-off to
    the workers instead of two, each thread a share of both), else one after the other."""
    if not isinstance(tiles, SampleTiles) or not direct_nchw(g, w_flipped, pads):
        return weight_grad3x3_nchw(tiles, g), conv3x3_nchw(g, w_flipped, pads)[0]
    w_bands, finish = _weight_grad_nchw_rows(tiles, g)
    x_bands, gx, _ = _conv3x3_nchw_rows(g, w_flipped, pads, None, False)
    parallel_for_all(w_bands, x_bands)
    return finish(), gx
