"""Random sampling ops: multinomial, bernoulli, and other draws that take a tensor of parameters.

Draws come from ember's generators (``ember.random``): the same distributions as
PyTorch, not the same numbers. No gradient flows through a sample.
"""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._dtype import np_kind
from .._tensor import Tensor
from ..random import rng_of


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (non-negative weights, not necessarily
    summing to 1); ``input`` is 1-D (one distribution) or 2-D (one per row). Result: int64 of shape
    ``(num_samples,)`` or ``(rows, num_samples)``.

    Without replacement, each category is drawn at most once; once every category of non-zero weight
    has been drawn, the remaining draws are zero-weight categories, as in PyTorch.
    """
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got shape {list(input.shape)})")
    if np_kind(w.dtype) != "f":
        name = _dtype.from_np(w.dtype).name.capitalize()
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {name}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = w.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"(n_sample={num_samples}, prob_dist.size(-1)={n})"
        )
    rows = w.reshape(-1, n).astype(xp.float64)
    if rows.shape[0] == 0:
        return Tensor._make(xp.zeros(w.shape[:-1] + (num_samples,), dtype=xp.int64))
    if not xp.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1, keepdims=True)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = rng_of(generator)
    if replacement:
        # inverse-CDF sampling: the first category whose cumulative share exceeds u ~ U[0, 1). Row r's
        # shares are shifted to [r, r + 1] so that one search serves every row.
        offsets = xp.arange(rows.shape[0])[:, None]
        cdf = xp.cumsum(rows, axis=1) / totals + offsets
        u = rng.random((rows.shape[0], num_samples)) + offsets
        out = xp.searchsorted(cdf.reshape(-1), u.reshape(-1), side="right").reshape(u.shape) - offsets * n
        out = xp.minimum(out, n - 1)  # rounding may leave the last share just under r + 1
    else:
        # Exponential races: category i finishes at E_i / w_i (E_i ~ Exp(1)); the order of finishing is
        # a draw without replacement proportional to the weights. Zero weights finish last (at inf).
        with xp.errstate(divide="ignore"):
            times = rng.exponential(size=rows.shape) / rows
        out = xp.argsort(times, axis=1, kind="stable")[:, :num_samples]
    return Tensor._make(out.astype(xp.int64).reshape(w.shape[:-1] + (num_samples,)))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Draws of Binomial(count, prob), elementwise (count and prob broadcast), in ``count``'s dtype; a
    probability outside [0, 1] counts as the nearer end, as in PyTorch."""
    names = _dtype.SCALAR_TYPE_NAMES
    if np_kind(count._data.dtype) != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {names[count.dtype.name]}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {names[prob.dtype.name]} but expected {names[count.dtype.name]}")
    p = xp.clip(prob._data.astype(xp.float64), 0.0, 1.0)
    draws = rng_of(generator).binomial(count._data.astype(xp.int64), p)
    return Tensor._make(xp.asarray(draws).astype(count._data.dtype))


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p`` when given), elementwise; the result has ``input``'s dtype."""
    probs = input._data if p is None else xp.full(input._data.shape, p)
    if p is None and np_kind(input._data.dtype) != "f":
        raise NotImplementedError(f"bernoulli expects a floating-point probability tensor, got {input.dtype}")
    if ((probs < 0) | (probs > 1)).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = rng_of(generator).random(input._data.shape) < probs
    return Tensor._make(draws.astype(input._data.dtype))
