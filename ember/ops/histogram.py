"""Histograms: ``histc`` (counts over equal bins) and ``histogram`` (equal bins or given edges, weights, density).

Neither is differentiable (as in PyTorch). Binning follows PyTorch's kernel: an element ``x`` falls in bin ``i``
when ``edges[i] <= x < edges[i + 1]``, the last bin also holding its right edge; elements outside
``[edges[0], edges[-1]]`` and NaN are not counted. Equal bins are found by PyTorch's interpolation
``int((x - left) * bins / (right - left))`` in the input's dtype (histc then corrects it against the edges, as
PyTorch's does), given edges by binary search. Counts are summed in float64 and returned in the input's dtype.
"""

from __future__ import annotations

import math

from .. import return_types
from .._backend import xp
from .._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, np_kind
from .._meta import meta_results
from .._size import c_type_name
from .._tensor import Tensor

_Histogram = return_types.histogram


def _check_floating(input: Tensor, kernel: str) -> None:
    if np_kind(input._data.dtype) != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[input.dtype.name]}\'')


def _check_bins(bins: int) -> None:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _equal_edges(left: float, right: float, bins: int, dtype):
    """PyTorch's edges: its linspace(left, right, bins + 1) in ``dtype``, to the last bit."""
    from .._creation import linspace_values

    return linspace_values(float(left), float(right), bins + 1, dtype)


def _bin_of(x, edges, equal: bool, local_search: bool):
    """Each element's bin (-1: not counted)."""
    left, right = edges[0], edges[-1]
    inside = (x >= left) & (x <= right)  # (False for NaN)
    x = xp.where(inside, x, left)
    nb = edges.size - 1
    if not equal:
        pos = xp.searchsorted(edges, x, side="right") - 1
    else:
        pos = ((x - left) * x.dtype.type(nb) / (right - left)).astype(xp.int64)
        if local_search:  # the first edge above x among edges[pos - 1 : pos + 2], minus one
            lo = xp.maximum(pos - 1, 0)
            hi = xp.minimum(pos + 2, nb + 1)
            count = xp.zeros_like(pos)
            for k in range(3):
                at = xp.minimum(lo + k, nb)
                count += (lo + k < hi) & (edges[at] <= x)
            pos = lo + count - 1
    pos = xp.where(pos == nb, nb - 1, pos)
    return xp.where(inside, pos, -1)


def _count(x, edges, weight, equal: bool, local_search: bool, dtype):
    pos = _bin_of(x, edges, equal, local_search)
    keep = pos >= 0
    w = None if weight is None else weight[keep]
    return xp.bincount(pos[keep], weights=w, minlength=edges.size - 1).astype(dtype)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of ``input``'s elements in ``bins`` equal bins over [min, max]; with min == max (the default) the
    data's minimum and maximum (widened by 1 each way when equal). Floating inputs only, as in PyTorch."""
    _check_floating(input, "histogram_cpu")
    if isinstance(bins, bool) or not isinstance(bins, int):
        raise TypeError(f"histc(): argument 'bins' (position 2) must be int, not {c_type_name(bins)}")
    _check_bins(bins)
    a = input._data.reshape(-1)
    left, right = float(min), float(max)
    if left == right and a.size:
        left, right = float(a.min()), float(a.max())
    if left == right:
        left, right = left - 1, right + 1
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histc: range of [{left:g}, {right:g}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = _equal_edges(left, right, bins, a.dtype)
    return Tensor._make(meta_results((a,), _count(a, edges, None, True, True, a.dtype)))


def histogram(input: Tensor, bins=100, *, range: tuple[float, float] | None = None, weight: Tensor | None = None,
              density: bool = False) -> tuple[Tensor, Tensor]:
    """``(hist, bin_edges)`` of ``input``'s elements: ``bins`` equal bins over ``range`` (default: the data's
    minimum and maximum; [0, 1] for an empty input; widened by 0.5 each way when equal), or the bins whose edges
    the 1-D tensor ``bins`` lists. ``weight`` (input's shape and dtype) sums weights instead of counting;
    ``density`` divides by the total and the bin widths. Floating inputs only, as in PyTorch."""
    _check_floating(input, "histogramdd")
    a = input._data.reshape(-1)
    w = None
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_cpp(input)}), and weight({_cpp(weight)})")
        if weight._data.shape != input._data.shape:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"{[a.size, 1]} and weight with shape {list(weight.shape)}")
        w = weight._data.reshape(-1)
    if isinstance(bins, Tensor):
        if bins._data.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins._data.ndim} "
                               "dimensions in the bins tensor for dimension 0")
        if bins.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_cpp(input)} and bins for dimension 0 with dtype {_cpp(bins)}")
        _check_bins(bins._data.size - 1)
        edges, equal = bins._data.copy(), False
    else:
        _check_bins(int(bins))
        edges, equal = _equal_edges(*_outer_edges(a, range), int(bins), a.dtype), True
    hist = _count(a, edges, w, equal, False, a.dtype)
    if density:
        with xp.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / hist.sum() / xp.diff(edges)).astype(a.dtype)
    return _Histogram._make((Tensor._make(hist), Tensor._make(edges)))


def _outer_edges(a, range) -> tuple[float, float]:
    if range is not None:
        left, right = (float(v) for v in range)
    elif a.size:
        left, right = float(a.min()), float(a.max())
    else:
        left, right = 0.0, 1.0
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{left:g}, {right:g}] is not finite")
    if left > right:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {left:g} max {right:g} for "
                           "dimension 0")
    if left == right:  # (NumPy's rule: no division by a zero width)
        left, right = left - 0.5, right + 0.5
    return left, right


def _cpp(t: Tensor) -> str:
    return CPP_TYPE_NAMES[t.dtype.name]
