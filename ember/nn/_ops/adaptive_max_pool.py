"""Adaptive max pooling: the maximum of each of ``output_size`` bins per spatial dim (1-d, 2-d, 3-d).

Bin ``i`` of a length-``n`` axis pooled to ``m`` is ``[floor(i n / m), ceil((i + 1) n / m))``, as PyTorch's (and
adaptive average pooling's) bins: neighbouring bins may share an element. One whole-batch NumPy reduction per
output position (output sizes are small: a classifier head's 1x1 or 7x7). The gradient goes to each bin's
maximum (the first in the bin; a NaN, which wins any bin, the last one, as PyTorch's kernel scans), summed
where bins share it.
"""

from __future__ import annotations

import itertools

from ..._backend import xp
from ..._dtype import not_implemented_for
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named
from .pooling import adaptive_output_size


def _bins(n: int, m: int) -> list[tuple[int, int]]:
    return [((i * n) // m, -((-(i + 1) * n) // m)) for i in range(m)]


class AdaptiveMaxPool(Node):
    formula_reads = (0,)  # PyTorch's gradient formula reads the input: it requires grad (recorded._reading_inputs)
    def forward(self, x, output_size):
        nd = len(output_size)
        lead, spatial = x.shape[:-nd], x.shape[-nd:]
        out = xp.empty(lead + output_size, x.dtype)
        arg = xp.empty(lead + output_size, xp.int64)  # flat position in the (unbatched) spatial plane
        bins = [_bins(n, m) for n, m in zip(spatial, output_size)]
        for pos in itertools.product(*(range(m) for m in output_size)):
            box = [bins[d][i] for d, i in enumerate(pos)]
            region = x[(..., *(slice(lo, hi) for lo, hi in box))]
            flat = region.reshape(lead + (-1,))
            local = xp.argmax(flat, -1)
            if x.dtype.kind in "fc":
                nan = xp.isnan(flat)
                last_nan = flat.shape[-1] - 1 - xp.argmax(nan[..., ::-1], -1)
                local = xp.where(nan.any(-1), last_nan, local)
            out[(..., *pos)] = xp.take_along_axis(flat, local[..., None], -1)[..., 0]
            coords = xp.unravel_index(local, region.shape[-nd:])
            arg[(..., *pos)] = xp.ravel_multi_index([c + lo for c, (lo, _) in zip(coords, box)], spatial)
        self.saved, self.spatial = (arg,), spatial
        return out

    def backward(self, g):
        (arg,) = self.saved
        nd, spatial = len(self.spatial), self.spatial
        per_plane = int(xp.prod(g.shape[-nd:]))
        rows, positions = g.reshape(-1, per_plane), arg.reshape(-1, per_plane)
        # (zeros like g: under create_graph a recorded buffer, into which the scatter-add is recorded)
        gx = xp.zeros_like(g, shape=(rows.shape[0], int(xp.prod(spatial))))
        xp.add.at(gx, (xp.arange(rows.shape[0])[:, None], positions), rows)  # bins may share their maximum
        return (gx.reshape(g.shape[:-nd] + spatial),)


@torch_named("AdaptiveMaxPool2DBackward0")
class AdaptiveMaxPool2D(AdaptiveMaxPool):
    """2-d adaptive max pooling's node, named as PyTorch's (1-d pooling is this on a (..., 1, L) view)."""


@torch_named("AdaptiveMaxPool3DBackward0")
class AdaptiveMaxPool3D(AdaptiveMaxPool):
    """3-d adaptive max pooling's node, named as PyTorch's."""


def _pooled(input: Tensor, out: tuple, return_indices: bool):
    node_class = AdaptiveMaxPool2D if len(out) == 2 else AdaptiveMaxPool3D
    result = node_class.apply(input, output_size=out)
    if not return_indices:
        return result
    node = result.grad_fn or node_class()
    if result.grad_fn is None:  # no graph recorded: the indices are computed again
        node.forward(input._data, out)
    return result, Tensor._make(node.saved[0])


def adaptive_max_pool(input: Tensor, output_size, nd: int, return_indices: bool = False):
    name = f"adaptive_max_pool{nd}d"
    if input._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    out = adaptive_output_size(name, input, output_size, nd)
    if not input.is_floating_point():  # (PyTorch's kernels are floating-point only)
        raise not_implemented_for("adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d", input.dtype)
    if 0 in out or input._data.size == 0:  # an empty result, on the graph (an empty batch still trains)
        empty_shape = input._data.shape[:-nd] + out
        result = input.flatten()[:0].reshape(empty_shape)
        return (result, Tensor._make(xp.zeros(empty_shape, xp.int64))) if return_indices else result
    if nd == 1:  # as PyTorch: 2-d pooling of a (..., 1, L) view, squeezed back (SqueezeBackward1 over its node)
        pooled = _pooled(input.unsqueeze(-2), (1, *out), return_indices)
        return tuple(t.squeeze(-2) for t in pooled) if return_indices else pooled.squeeze(-2)
    return _pooled(input, out, return_indices)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of each of ``output_size`` bins of (N, C, L); with ``return_indices``, also where it is."""
    return adaptive_max_pool(input, output_size, 1, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of each bin of (N, C, H, W), ``output_size`` bins per spatial dim (None keeps the dim);
    with ``return_indices``, also the flat position of each maximum in its H x W plane."""
    return adaptive_max_pool(input, output_size, 2, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of each bin of (N, C, D, H, W); see ``adaptive_max_pool2d``."""
    return adaptive_max_pool(input, output_size, 3, return_indices)


def _adaptive_max_pool_with_indices(nd: int):
    """PyTorch's ``adaptive_max_pool{nd}d_with_indices``: the pooling and the indices of its maxima, always (its
    ``return_indices`` is ignored, as PyTorch's)."""
    def pooled(input: Tensor, output_size, return_indices: bool = False):
        return adaptive_max_pool(input, output_size, nd, True)

    pooled.__name__ = pooled.__qualname__ = f"adaptive_max_pool{nd}d_with_indices"
    pooled.__doc__ = f"``adaptive_max_pool{nd}d`` and the indices of its maxima (``return_indices`` is ignored)."
    return pooled


adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices = map(
    _adaptive_max_pool_with_indices, (1, 2, 3))
