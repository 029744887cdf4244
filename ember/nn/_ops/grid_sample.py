"""``grid_sample`` (bilinear / nearest, 4-D and 5-D input; bicubic, 4-D) and ``affine_grid``.

grid_sample reads ``input`` (N, C, *in) at the points ``grid`` (N, *out, d) gives in [-1, 1] coordinates, the
last dim ordered x, y(, z) = the input's last, second-last(, third-last) spatial dim. Each coordinate is mapped
to a pixel position as in ATen's ``GridSampler.h``: ``(c + 1) / 2 * (size - 1)`` with ``align_corners``, else
``((c + 1) * size - 1) / 2``; then 'border' clamps it into the image, 'reflection' reflects it about the border
(pixel centres with ``align_corners``, pixel edges without) and clamps, 'zeros' leaves it and reads zeros
outside. Bilinear mixes the 2^d neighbours; nearest takes the nearest (ties to even, as ``nearbyint``); bicubic
mixes the 4 x 4 around the unpadded position with Keys' cubic (a = -0.75), padding each of them instead.

Layout: the input is read as rows (N * L, C), so each sampled point gathers C contiguous values (one ``take``
per neighbour). Gradients: the input's is the samples' weighted gradients summed per pixel (``bincount`` per
channel, no scatter-add);
the grid's is the derivative of the bilinear weights times each value, times the coordinate map's slope (zero
where 'border' or 'reflection' clamped it, negated where reflection flipped it). Nearest has no grid gradient.
Each dim's taps are computed once (``_taps``); the 2^d, 1 or 16 pixels a sample reads are their products.
"""

from __future__ import annotations

import itertools
import math

from ... import _warnings
from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node, shown_as
from ...autograd.recorded import is_recorded
from .interpolate import _CUBIC_A, _cubic_weights

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _clip(s, size: int):
    """Clamp into [0, size - 1]; slope 1 inside, 0 where clamped."""
    slope = ((s > 0) & (s < size - 1)).astype(s.dtype)
    return xp.clip(s, 0, size - 1), slope


def _reflect(s, twice_low: int, twice_high: int):
    """Reflect about low / high (given doubled) until inside; slope +-1 by the number of flips."""
    if twice_low == twice_high:
        return xp.zeros_like(s), xp.zeros_like(s)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = s - low
    sign = xp.where(d < 0, -1, 1).astype(s.dtype)
    d = xp.abs(d)
    extra, even = xp.fmod(d, span), xp.floor(d / span) % 2 == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _unnormalize(c, size: int, align_corners: bool):
    """Grid coordinates -> pixel positions along one dim, and d(position)/d(coordinate)."""
    if align_corners:
        return (c + 1) / 2 * (size - 1), xp.full_like(c, (size - 1) / 2)
    return ((c + 1) * size - 1) / 2, xp.full_like(c, size / 2)


def _pad_coordinates(s, size: int, padding_mode: str, align_corners: bool):
    """ATen's ``compute_coordinates``: clamp ('border') or reflect and clamp ('reflection'); and the slope."""
    if padding_mode == "border":
        return _clip(s, size)
    if padding_mode == "reflection":
        s, g = _reflect(s, 0, 2 * (size - 1)) if align_corners else _reflect(s, -1, 2 * size - 1)
        s, g2 = _clip(s, size)
        return s, g * g2
    return s, None


def _cubic_slopes(t):
    """d/dt of ``_cubic_weights(t)``, the 4 neighbours' weights at offsets -1, 0, 1, 2."""
    a = _CUBIC_A

    def near(x):  # d/dx of ((a + 2) x - (a + 3)) x^2 + 1
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x):  # d/dx of ((a x - 5 a) x + 8 a) x - 4 a
        return (3 * a * x - 10 * a) * x + 8 * a

    return xp.stack([far(t + 1), near(t), -near(1 - t), -far(2 - t)])


def _taps(c, size: int, mode: str, padding_mode: str, align_corners: bool):
    """The pixels one dim of each sample reads: ([(position, weight, d weight / d position)], d position / d c).

    Nearest and bilinear pad the real position, then read 1 or 2 pixels (outside ones masked later); bicubic
    reads the 4 pixels around the unpadded position and pads each of them (PyTorch's ``get_value_bounded``).
    """
    s, slope = _unnormalize(c, size, align_corners)
    if mode != "bicubic":
        s, g = _pad_coordinates(s, size, padding_mode, align_corners)
        slope = slope if g is None else slope * g
    if mode == "nearest":
        return [(xp.rint(s).astype(xp.int64), None, None)], slope
    lo = xp.floor(s)
    t = s - lo
    lo = lo.astype(xp.int64)
    if mode == "bilinear":
        return [(lo, 1 - t, -1), (lo + 1, t, 1)], slope
    w, dw = _cubic_weights(t), _cubic_slopes(t)
    taps = []
    for k in range(4):
        pos = lo + (k - 1)
        if padding_mode != "zeros":
            pos = _pad_coordinates(pos.astype(s.dtype), size, padding_mode, align_corners)[0].astype(xp.int64)
        taps.append((pos, w[k], dw[k]))
    return taps, slope


def _product(factors):
    out = None
    for f in factors:
        if f is not None:
            out = f if out is None else out * f
    return out


class GridSample(Node):
    # backward reads the forward's taps and weights (functions of the grid) and the input's rows: under
    # create_graph the forward runs again on recorded inputs, so that they are recorded too
    rerun_for_higher_order = True

    def forward(self, x, grid, mode, padding_mode, align_corners):
        n, c, sizes = x.shape[0], x.shape[1], x.shape[2:]
        nd, length = len(sizes), math.prod(sizes)
        # (copy(): a C-contiguous copy, which, unlike ascontiguousarray, a recorded array also answers)
        rows = x.reshape(n, c, length).transpose(0, 2, 1).copy().reshape(n * length, c)
        g2 = grid.reshape(-1, nd)
        per_dim = [_taps(g2[:, nd - 1 - a], sizes[a], mode, padding_mode, align_corners) for a in range(nd)]
        batch = xp.repeat(xp.arange(n) * length, g2.shape[0] // max(n, 1))
        strides = [math.prod(sizes[a + 1:]) for a in range(nd)]
        combos, targets, weights = [], [], []
        for combo in itertools.product(*(taps for taps, _ in per_dim)):  # every pixel a sample reads
            inside = xp.ones(g2.shape[0], bool)
            target = batch.copy()
            for (pos, _, _), size, st in zip(combo, sizes, strides):
                inside &= (pos >= 0) & (pos < size)
                target += xp.clip(pos, 0, size - 1) * st
            w = _product([tw for _, tw, _ in combo])
            combos.append((combo, inside))
            targets.append(target)  # the row of (N * L, C) read; outside pixels read a masked one
            weights.append((inside if w is None else w * inside).astype(x.dtype))
        out = None
        for t, w in zip(targets, weights):
            part = xp.take(rows, t, axis=0)
            part *= w[:, None]
            if out is None:
                out = part
            else:
                out += part  # (in place; under create_graph, a recorded sum)
        self.meta = (x.shape, grid.shape, rows, targets, weights, combos, [sl for _, sl in per_dim], mode)
        p = g2.shape[0] // max(n, 1)
        return out.reshape(n, p, c).transpose(0, 2, 1).copy().reshape(n, c, *grid.shape[1:-1])

    def backward(self, g):
        x_shape, grid_shape, rows, targets, weights, combos, slopes, mode = self.meta
        n, c, nd, length = x_shape[0], x_shape[1], len(x_shape) - 2, rows.shape[0] // max(x_shape[0], 1)
        g3 = g.reshape(n, c, -1)
        gx = ggrid = None
        if self.needs_input_grad[0]:
            # per channel, every sample's weighted gradient summed into the pixel it read (bincount: no scatter-add)
            target, w = xp.concatenate(targets), xp.stack(weights)  # (K * N * P,), (K, N * P)
            gc = g3.transpose(1, 0, 2).reshape(c, 1, -1)  # (C, 1, N * P)
            if is_recorded(g, w):  # create_graph: bincount cannot record itself; a recorded scatter-add of the rows
                gx_rows = xp.zeros_like(g, shape=(n * length, c))
                xp.add.at(gx_rows, target, (gc * w).reshape(c, -1).T)
                gx_cm = gx_rows.T
            else:
                gx_cm = xp.empty((c, n * length), g.dtype)
                for ch in range(c):
                    gx_cm[ch] = xp.bincount(target, (gc[ch] * w).ravel(), minlength=n * length)
            gx = gx_cm.reshape(c, n, length).transpose(1, 0, 2).reshape(x_shape)
        if self.needs_input_grad[1]:
            ggrid = xp.zeros_like(g, shape=(n * g3.shape[2], nd), order="C")  # (under create_graph: recorded)
            if mode != "nearest":  # d out / d position_a = sum over pixels of (value . g) * d weight / d position_a
                g_rows = g3.transpose(0, 2, 1).copy().reshape(-1, c)  # (N * P, C)
                for t, (combo, inside) in zip(targets, combos):
                    dot = xp.einsum("ij,ij->i", xp.take(rows, t, axis=0), g_rows) * inside
                    for a in range(nd):
                        dw = _product([combo[b][1] for b in range(nd) if b != a])
                        ggrid[:, nd - 1 - a] += dot * combo[a][2] * (1 if dw is None else dw)
                for a in range(nd):
                    ggrid[:, nd - 1 - a] *= slopes[a]
            ggrid = ggrid.reshape(grid_shape)
        return gx, ggrid


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample (N, C, H, W) at ``grid`` (N, H_out, W_out, 2) -> (N, C, H_out, W_out); 5-D input with a (N, D_out,
    H_out, W_out, 3) grid likewise. Grid values are x, y(, z) in [-1, 1] (the input's corners: pixel centres with
    ``align_corners=True``, pixel edges with False, the default). ``mode``: 'bilinear' (trilinear for 5-D),
    'nearest' or 'bicubic' (4-D only). ``padding_mode``: 'zeros', 'border' or 'reflection'."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING)
        align_corners = False
    ishape, gshape = list(input.shape), list(grid.shape)
    nd = len(ishape)
    if nd not in (4, 5) or len(gshape) != nd:
        want = f"{nd}D" if nd in (4, 5) else "4D or 5D"
        raise RuntimeError(f"grid_sampler(): expected {want} input and grid with same number of dimensions, but got "
                           f"input with sizes {ishape} and grid with sizes {gshape}")
    if ishape[0] != gshape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                           f"{ishape} and grid with sizes {gshape}")
    if gshape[-1] != nd - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd - 2} in last dimension, but got grid with "
                           f"sizes {gshape}")
    if any(s == 0 for s in ishape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                           f"{ishape} with dimension {ishape.index(0, 2)} being empty")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has {input.dtype} "
                           f"and grid has {grid.dtype}")
    if not input.is_floating_point():
        raise RuntimeError(f"grid_sampler(): expected floating-point input and grid, got {input.dtype}")
    if mode == "bicubic" and nd == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    out = GridSample.apply(input, grid, mode=mode, padding_mode=padding_mode, align_corners=bool(align_corners))
    return shown_as(out, "GridSampler2DBackward0" if nd == 4 else "GridSampler3DBackward0")  # (PyTorch's kernels)


def _linspace(n: int, align_corners: bool, dtype):
    """PyTorch's base coordinates along a dim of n pixels: -1..1 (pixel centres) or scaled to the pixel edges."""
    if n <= 1:
        return xp.zeros(1, dtype)
    from ..._creation import linspace_values

    r = linspace_values(-1, 1, n, dtype)  # PyTorch's values to the last bit: grid points at pixel centres stay there
    return r if align_corners else r * (n - 1) / n


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) of the affine maps ``theta`` (N, 2, 3) for an output of ``size`` (N, C, H,
    W) (3-D: theta (N, 3, 4), size (N, C, D, H, W), grid (N, D, H, W, 3)): grid = theta @ (x, y(, z), 1) over the
    output's base coordinates. Differentiable in theta."""
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        d = len(size) - 2
        if theta._data.ndim != 3 or tuple(theta.shape[-2:]) != (d, d + 1):
            raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size {size}. Got "
                             f"{theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    dtype = theta._data.dtype
    axes = [_linspace(n, bool(align_corners), dtype) for n in reversed(spatial)]  # x, y(, z)
    base = xp.stack([*(m.ravel() for m in xp.meshgrid(*reversed(axes), indexing="ij")[::-1]),
                     xp.ones(math.prod(spatial), dtype)], axis=-1)  # (prod(spatial), d + 1), row-major positions
    grid = Tensor._make(base).matmul(theta.transpose(1, 2))  # (N, prod(spatial), d)
    return grid.reshape(size[0], *spatial, d)
