"""``interpolate`` (and the deprecated ``upsample*``): resize the spatial dims of (N, C, *spatial).

Each mode is PyTorch's per-axis rule (ATen's ``UpSample.h``), computed in the input's precision (float32 for
float32, as PyTorch's kernels do, so the nearest neighbours chosen at exact ties are PyTorch's):

- scale: ``(in - 1) / (out - 1)`` with ``align_corners``, else ``1 / scale_factor`` when one was given (and
  not recomputed), else ``in / out``;
- nearest: input ``min(floor(o * scale), in - 1)``; nearest-exact: ``floor(o * scale + scale / 2)``, the
  pixel centre's nearest;
- linear: source ``scale * (o + 0.5) - 0.5`` (clamped at 0; ``scale * o`` with ``align_corners``) between its
  two neighbours; cubic: the same source (not clamped) and Keys' cubic (a = -0.75) on 4 neighbours, clamped
  at the borders; area: adaptive average pooling's bins (the taps of a shorter bin repeat its last position with
  weight 0);
- antialias (4-D bilinear / bicubic): PIL's resampling, the filter stretched by the shrink factor so that every
  input pixel under an output pixel counts, each output's weights normalised.

The resampling itself is ``resample.py`` (one separable map per axis, dense or by gathers).
"""

from __future__ import annotations

import math

from ... import _warnings
from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import shown_as
from .pooling import adaptive_avg_pool
from .resample import AxisMap, Resample

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_INTERPOLATING = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_CUBIC_A = -0.75


def _scale(n_in: int, n_out: int, align_corners: bool, scale, ft):
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _source(n_out: int, s, align_corners: bool, ft, clamp: bool):
    """Each output position's real-valued source coordinate."""
    o = xp.arange(n_out, dtype=ft)
    if align_corners:
        return s * o
    src = s * (o + ft(0.5)) - ft(0.5)
    return xp.maximum(src, ft(0)) if clamp else src


def _keys_near(x, a: float):
    """Keys' cubic convolution kernel for |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _keys_far(x, a: float):
    """Keys' cubic convolution kernel for 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_weights(t):
    """Keys' cubic convolution weights (a = -0.75) of the 4 neighbours at offsets -1, 0, 1, 2 for fraction t."""
    a = _CUBIC_A
    return xp.stack([_keys_far(t + 1, a), _keys_near(t, a), _keys_near(1 - t, a), _keys_far(2 - t, a)])


def axis_map(mode: str, n_in: int, n_out: int, align_corners: bool, scale, dtype, nd: int) -> AxisMap:
    """The map of one spatial axis from ``n_in`` to ``n_out`` positions under ``mode`` (``nd`` spatial dims)."""
    m = _forward_map(mode, n_in, n_out, align_corners, scale, dtype, nd)
    # PyTorch's backward kernels copy the gradient of an axis that keeps its size (nearest, bicubic) and halve the
    # positions of one that doubles (nearest), whatever the scale factor; its forward kernels do that only for
    # 2-d nearest (bicubic's forward interpolates with the given scale). The gradient follows PyTorch's backward.
    if mode in ("nearest", "bicubic") and n_out in (n_in, 2 * n_in) and (mode == "nearest" or n_out == n_in):
        m.grad = AxisMap(n_in, n_out, (xp.arange(n_out) >> (n_out != n_in))[None])
    return m


def _forward_map(mode: str, n_in: int, n_out: int, align_corners: bool, scale, dtype, nd: int) -> AxisMap:
    if mode == "area":  # adaptive average pooling's bins [floor(o * in / out), ceil((o + 1) * in / out))
        o = xp.arange(n_out)
        start, end = (o * n_in) // n_out, -((-(o + 1) * n_in) // n_out)
        j = xp.arange(int((end - start).max()))[:, None]
        # taps past a bin repeat its last position with weight 0 (each row stays sorted)
        idx, w = xp.minimum(start + j, end - 1), (j < end - start) / (end - start)
        return AxisMap(n_in, n_out, idx, w.astype(dtype))
    ft = xp.float64 if dtype == xp.float64 else xp.float32
    s = _scale(n_in, n_out, align_corners, scale, ft)
    if mode == "nearest":
        o = xp.arange(n_out)
        idx = xp.floor(o.astype(ft) * s).astype(xp.int64)
        if nd == 2 and n_out in (n_in, 2 * n_in):  # PyTorch's 2-d kernel: the same size copies, twice halves
            idx = o >> (n_out != n_in)
        return AxisMap(n_in, n_out, xp.minimum(idx, n_in - 1)[None])
    if mode == "nearest-exact":
        idx = xp.floor(_source(n_out, s, False, ft, clamp=True) + ft(0.5)).astype(xp.int64)
        return AxisMap(n_in, n_out, xp.minimum(idx, n_in - 1)[None])
    if mode != "bicubic" and n_in == n_out and not align_corners:  # PyTorch copies, whatever the scale
        return AxisMap(n_in, n_out, xp.arange(n_in)[None])
    src = _source(n_out, s, align_corners, ft, clamp=mode != "bicubic")
    i0 = xp.minimum(xp.floor(src).astype(xp.int64), n_in - 1)
    t = xp.clip(src - i0.astype(ft), 0, 1)
    if mode == "bicubic":
        idx = xp.clip(i0[None] + xp.arange(-1, 3)[:, None], 0, n_in - 1)
        return AxisMap(n_in, n_out, idx, _cubic_weights(t).astype(dtype))
    idx = xp.stack([i0, i0 + (i0 < n_in - 1)])
    return AxisMap(n_in, n_out, idx, xp.stack([1 - t, t]).astype(dtype))


def _aa_filter(mode: str, x):
    """PyTorch's anti-aliasing filters: the triangle (bilinear) and Keys' cubic with a = -0.5 (bicubic)."""
    x = xp.abs(x)
    if mode == "bilinear":
        return xp.maximum(1 - x, 0)
    return xp.where(x < 1, _keys_near(x, -0.5), xp.where(x < 2, _keys_far(x, -0.5), 0))


def antialias_map(mode: str, n_in: int, n_out: int, align_corners: bool, scale, dtype) -> AxisMap:
    """The anti-aliased map (ATen's ``_compute_weights_aa``): when shrinking by ``s``, the filter is stretched s
    times, so every input pixel under an output pixel contributes; each output's weights are normalised to 1."""
    ft = xp.float64 if dtype == xp.float64 else xp.float32
    s = _scale(n_in, n_out, align_corners, scale, ft)
    half = ft(1 if mode == "bilinear" else 2)
    support, invscale = (half * s, 1 / s) if s >= 1 else (half, ft(1))
    center = s * (xp.arange(n_out, dtype=ft) + ft(0.5))
    lo = xp.maximum((center - support + ft(0.5)).astype(xp.int64), 0)  # C's truncation, as ATen
    size = xp.clip(xp.minimum((center + support + ft(0.5)).astype(xp.int64), n_in) - lo, 0,
                   int(math.ceil(support)) * 2 + 1)
    j = xp.arange(max(int(size.max()), 1))[:, None]
    w = _aa_filter(mode, (j + lo - center + ft(0.5)) * invscale).astype(ft) * (j < size)
    total = w.sum(axis=0)
    w = xp.where(total != 0, w / xp.where(total != 0, total, 1), w)
    # taps past an output's window repeat its last position with weight 0 (each row stays sorted)
    idx = xp.minimum(lo + j, lo + xp.maximum(size, 1) - 1)
    return AxisMap(n_in, n_out, idx, w.astype(dtype))


def _is_int(v) -> bool:
    return isinstance(v, int) or (hasattr(v, "__index__") and not isinstance(v, float))


def _per_dim(value, spatial: list, who: str, shown: str, letter: str) -> list:
    """``value`` for each spatial dim: a scalar repeated, a list or tuple checked for its length."""
    if not isinstance(value, (list, tuple)):
        return [value] * len(spatial)
    if len(value) != len(spatial):
        raise ValueError(
            f"Input and {who} must have the same number of spatial dimensions, but got input with spatial dimensions "
            f"of {spatial} and {shown} {value}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            f"{shown.split(' of')[0]} in ({letter}1, {letter}2, ...,{letter}K) format.")
    return list(value)


def _sizes(input: Tensor, size, scale_factor, recompute_scale_factor, mode: str):
    """(output sizes, per-axis scale factors handed to the kernel or None), validated as PyTorch does."""
    spatial = list(input._data.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        out = _per_dim(size, spatial, "output", "output size of", "o")
        if not all(_is_int(s) for s in out):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                            f"int], but got size with types {[type(s) for s in out]}")
        out = [int(s) for s in out]
    elif scale_factor is not None:
        scales = [float(s) for s in _per_dim(scale_factor, spatial, "scale_factor", "scale_factor of shape", "s")]
        out = [int(n * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":  # the kernel derives its scale from the integer sizes
        scales = None
    return out, scales


def _check_input(input: Tensor, out: list, mode: str) -> None:
    shape = list(input._data.shape)
    if any(n <= 0 for n in shape[2:]) or any(o <= 0 for o in out):
        names = "DHW"[3 - len(out):]
        ins = ", ".join(f"{c}: {n}" for c, n in zip(names, shape[2:]))
        outs = ", ".join(f"{c}: {n}" for c, n in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}) output ({outs})")
    if shape[1] == 0:
        raise RuntimeError(f"Non-empty {len(shape)}D data tensor expected but got a tensor with sizes {shape}")
    if not input.is_floating_point():
        raise NotImplementedError(f'"upsample_{mode}" not implemented for \'{input.dtype}\': ember interpolates '
                                  "floating-point tensors")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of a 3-D (N, C, W), 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input.

    Exactly one of ``size`` (int or one per spatial dim) and ``scale_factor`` (float or one per dim; the output
    size is ``floor(in * scale)``). Modes: 'nearest' (default), 'nearest-exact', 'linear' (3-D), 'bilinear' and
    'bicubic' (4-D), 'trilinear' (5-D), 'area' (adaptive average pooling). ``align_corners`` (interpolating modes
    only, default False) maps the corner pixels' centres onto each other; ``recompute_scale_factor=True`` derives
    the scale from the integer output size instead of using ``scale_factor``. ``antialias=True`` (4-D bilinear and
    bicubic) low-pass filters when shrinking, as PIL does; mode 'lanczos' is not implemented in ember.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    nd = input._data.ndim
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and nd == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and nd == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("interpolate(mode='lanczos') is not implemented in ember (antialias=True with "
                                  "'bilinear' or 'bicubic' is)")
    want = _INTERPOLATING.get(mode)
    if want is not None and nd in (3, 4, 5) and nd != want:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {want}D input")
    if nd not in (3, 4, 5) or mode not in ("nearest", "nearest-exact", "area", *_INTERPOLATING):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the "
                                  f"modes: {_MODES} (got {mode})")
    if mode == "area":  # PyTorch's is adaptive average pooling to the size
        if nd == 3:  # (its 1-d pooling: the 2-d one of a (N, C, 1, L) view, squeezed back)
            return interpolate(input.unsqueeze(-2), size=(1, *out), mode="area").squeeze(-2)
        if (all(o == 1 for o in out) or not input.is_floating_point() or input._data.dtype.itemsize == 2
                or 0 in input.shape or 0 in out):  # (its mean, its checks, its empty results, half precision's
            return adaptive_avg_pool(input, tuple(out), nd - 2)  # float32 sums rounded once, as PyTorch's kernel)
    _check_input(input, out, mode)
    spatial = input._data.shape[2:]
    scales = scales or [None] * len(out)
    dtype = input._data.dtype
    if antialias:
        maps = tuple(antialias_map(mode, n, o, bool(align_corners), s, dtype) for n, o, s in zip(spatial, out, scales))
    else:
        maps = tuple(axis_map(mode, n, o, bool(align_corners), s, dtype, len(out))
                     for n, o, s in zip(spatial, out, scales))
    out = Resample.apply(input, maps=maps)
    return shown_as(out, _torch_node_name(mode, nd - 2, antialias))


_NODE_MODES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear", "bilinear": "Bilinear",
               "bicubic": "Bicubic", "trilinear": "Trilinear"}


def _torch_node_name(mode: str, dims: int, antialias: bool) -> str:
    """The node PyTorch's interpolate records: its upsample kernel's (``UpsampleBilinear2DBackward0``, ``...Aa...``
    antialiased), adaptive average pooling's for 'area' (2 or 3 spatial dimensions)."""
    if mode == "area":
        return f"AdaptiveAvgPool{dims}DBackward0"
    return f"Upsample{_NODE_MODES[mode]}{dims}D{'Aa' if antialias else ''}Backward0"


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None
             ) -> Tensor:
    """Deprecated spelling of ``interpolate`` (PyTorch warns, then resizes)."""
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')``."""
    _warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)``."""
    _warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)

