"""Second-order gradients of reductions, shape/view ops, indexing, scatter/gather, in-place ops, sorting,
matrix products, linear algebra, distances and FFTs, against PyTorch (``check_second_order``, float64).

Each case differentiates the op's gradient again (with respect to the inputs and the cotangent): a backward
formula that leaves the recorded world, or records a constant where an input-dependent value belongs, fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from higher_order_oracle import check_second_order

_I = np.array  # integer index arrays travel as inputs without gradient


def _sym_pd(m, a):
    """A symmetric positive-definite matrix (batch) built from ``a``, differentiably."""
    return a @ a.mT + a.shape[-1] * m.eye(a.shape[-1], dtype=a.dtype)


REDUCTIONS = [
    ("sum", lambda m, x: x.sum(), [(3, 4)]),
    ("sum 0-d", lambda m, x: (x * x).sum(), [()]),
    ("sum dim", lambda m, x: (x * x).sum(dim=1), [(3, 4)]),
    ("sum neg dim keepdim", lambda m, x: (x * x).sum(dim=-2, keepdim=True) * x, [(2, 3, 4)]),
    ("sum dims tuple", lambda m, x: (x ** 3).sum(dim=(0, 2)), [(2, 3, 4)]),
    ("sum size-1 dim", lambda m, x: (x ** 3).sum(dim=1), [(3, 1)]),
    ("mean", lambda m, x: (x ** 2).mean(), [(3, 4)]),
    ("mean dim keepdim", lambda m, x: (x ** 2).mean(dim=-1, keepdim=True) * x, [(3, 4)]),
    ("mean dims", lambda m, x: m.exp(x).mean(dim=(0, 1)), [(2, 3, 4)]),
    ("prod", lambda m, x: x.prod(), [(5,)]),
    ("prod dim", lambda m, x: x.prod(dim=1), [(3, 4)]),
    ("prod dim keepdim", lambda m, x: x.prod(dim=-1, keepdim=True) * x, [(3, 4)]),
    ("prod with a zero", lambda m, x: x.prod(dim=1), [np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [1.0, 2.0, 3.0]])]),
    ("amax", lambda m, x: m.amax(x * x, dim=1), [(3, 4)]),
    ("amax dims keepdim", lambda m, x: m.amax(x ** 3, dim=(0, -1), keepdim=True), [(2, 3, 4)]),
    ("amin", lambda m, x: m.amin(x ** 3, dim=0), [(3, 4)]),
    ("amax ties", lambda m, x: m.amax(x * x, dim=1), [np.array([[1.0, -1.0, 0.5], [2.0, 2.0, -3.0]])]),
    ("max all", lambda m, x: (x ** 3).max(), [(3, 4)]),
    ("min all", lambda m, x: (x ** 3).min(), [(3, 4)]),
    ("max dim", lambda m, x: (x ** 3).max(dim=1).values, [(3, 4)]),
    ("min dim keepdim", lambda m, x: (x ** 3).min(dim=-1, keepdim=True)[0] * x, [(3, 4)]),
    ("max binary", lambda m, x, y: m.max(x * x, y), [(3, 4), (4,)]),
    ("var", lambda m, x: x.var(), [(3, 4)]),
    ("var dim", lambda m, x: x.var(dim=1), [(3, 4)]),
    ("var correction 0 keepdim", lambda m, x: m.var(x, dim=-1, correction=0, keepdim=True) * x, [(3, 4)]),
    ("std", lambda m, x: x.std(), [(3, 4)]),
    ("std dims", lambda m, x: x.std(dim=(0, 2), unbiased=False), [(2, 3, 4)]),
    ("var_mean", lambda m, x: m.var_mean(x, dim=1), [(3, 4)]),
    ("std_mean", lambda m, x: m.std_mean(x, dim=0), [(3, 4)]),
    ("norm", lambda m, x: x.norm(), [(3, 4)]),
    ("norm dim", lambda m, x: m.norm(x, dim=1), [(3, 4)]),
    ("norm p=1", lambda m, x: m.norm(x ** 3, p=1, dim=-1), [(3, 4)]),
    ("norm p=3", lambda m, x: m.norm(x, p=3, dim=0, keepdim=True), [(3, 4)]),
    ("norm inf", lambda m, x: m.norm(x ** 3, p=float("inf"), dim=1), [(3, 4)]),
    ("norm fro", lambda m, x: m.norm(x, p="fro"), [(3, 4)]),
    ("vector_norm", lambda m, x: m.linalg.vector_norm(x, ord=2, dim=(0, 1)), [(2, 3, 4)]),
    ("vector_norm ord 4", lambda m, x: m.linalg.vector_norm(x, ord=4, dim=-1), [(3, 4)]),
    ("logsumexp", lambda m, x: m.logsumexp(x, dim=1), [(3, 4)]),
    ("logsumexp dims keepdim", lambda m, x: m.logsumexp(x, dim=(0, -1), keepdim=True) * x, [(2, 3, 4)]),
    ("nansum", lambda m, x: m.nansum(x * x, dim=0), [(3, 4)]),
    ("nansum squared", lambda m, x: m.nansum(x, dim=1, keepdim=True) ** 2 * x, [(3, 4)]),
    ("nanmean", lambda m, x: m.nanmean(x * x, dim=1), [(3, 4)]),
    ("aminmax", lambda m, x: m.aminmax(x ** 3, dim=1), [(3, 4)]),
    ("median", lambda m, x: (x ** 3).median(), [(3, 5)]),
    ("median dim", lambda m, x: (x ** 3).median(dim=1).values, [(3, 5)]),
    ("kthvalue", lambda m, x: m.kthvalue(x ** 3, 2, dim=-1).values, [(3, 5)]),
    ("mode", lambda m, x: m.mode(x ** 3, dim=1).values, [(3, 5)]),
    ("quantile", lambda m, x: m.quantile(x ** 3, 0.3, dim=1), [(3, 5)]),
    ("quantile midpoint keepdim", lambda m, x: m.quantile(x ** 3, 0.4, dim=0, keepdim=True, interpolation="midpoint"),
     [(4, 3)]),
    ("median keepdim", lambda m, x: m.median(x ** 3, dim=-1, keepdim=True).values, [(3, 4)]),
    ("quantile vector q", lambda m, x: m.quantile(x ** 3, m.tensor([0.2, 0.75], dtype=x.dtype)), [(7,)]),
]

CUMULATIVE = [
    ("cumsum", lambda m, x: (x * x).cumsum(dim=1), [(3, 4)]),
    ("cumsum neg dim", lambda m, x: m.cumsum(x ** 3, dim=-2), [(2, 3, 4)]),
    ("cumsum 0-d", lambda m, x: m.cumsum(x ** 3, dim=0), [()]),
    ("cumprod", lambda m, x: m.cumprod(x, dim=1), [(3, 4)]),
    ("cumprod with a zero", lambda m, x: m.cumprod(x, dim=0), [np.array([1.5, 0.0, 2.0, -1.0])]),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, dim=1), [(3, 4)]),
    ("cummax", lambda m, x: m.cummax(x ** 3, dim=1).values, [(3, 4)]),
    ("cummin", lambda m, x: m.cummin(x ** 3, dim=0).values, [(3, 4)]),
    ("diff", lambda m, x: m.diff(x ** 3, dim=-1), [(3, 4)]),
    ("trapezoid", lambda m, x: m.trapezoid(x ** 3, dim=1), [(3, 4)]),
    ("trapezoid x", lambda m, y, x: m.trapezoid(y ** 3, x * x, dim=-1), [(3, 4), (4,)]),
    ("diff prepend n=2", lambda m, x, p: m.diff(x ** 3, n=2, dim=0, prepend=p * p), [(3, 4), (1, 4)]),
    ("logcumsumexp neg dim", lambda m, x: m.logcumsumexp(x * 3, dim=-2), [(3, 4)]),
]

SHAPE = [
    ("reshape", lambda m, x: (x ** 3).reshape(4, 3), [(3, 4)]),
    ("reshape -1", lambda m, x: (x ** 3).reshape(-1, 2), [(3, 4)]),
    ("view", lambda m, x: (x ** 3).view(2, 6), [(3, 4)]),
    ("view 0-d", lambda m, x: (x ** 3).view(1, 1), [()]),
    ("flatten", lambda m, x: (x ** 3).flatten(1), [(2, 3, 4)]),
    ("unflatten", lambda m, x: (x ** 3).unflatten(-1, (2, 2)), [(3, 4)]),
    ("permute", lambda m, x: (x ** 3).permute(2, 0, 1), [(2, 3, 4)]),
    ("permute neg", lambda m, x: (x ** 3).permute(-1, -3, -2), [(2, 3, 4)]),
    ("transpose", lambda m, x: (x ** 3).transpose(0, -1), [(2, 3, 4)]),
    ("t", lambda m, x: (x ** 3).t(), [(3, 4)]),
    ("mT", lambda m, x: (x ** 3).mT, [(2, 3, 4)]),
    ("movedim", lambda m, x: m.movedim(x ** 3, 0, -1), [(2, 3, 4)]),
    ("swapaxes", lambda m, x: m.swapaxes(x ** 3, 0, 1), [(2, 3, 4)]),
    ("expand", lambda m, x: (x ** 3).expand(2, 3, 4), [(3, 1)]),
    ("expand_as", lambda m, x, y: (x ** 3).expand_as(y) * y, [(1, 4), (3, 4)]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x ** 3, (2, 3)), [()]),
    ("squeeze", lambda m, x: (x ** 3).squeeze(), [(3, 1, 4, 1)]),
    ("squeeze dim", lambda m, x: (x ** 3).squeeze(-1), [(3, 1)]),
    ("unsqueeze", lambda m, x: (x ** 3).unsqueeze(-2), [(3, 4)]),
    ("contiguous", lambda m, x: (x ** 3).t().contiguous(), [(3, 4)]),
    ("repeat", lambda m, x: (x ** 3).repeat(2, 1, 3), [(3, 4)]),
    ("tile", lambda m, x: m.tile(x ** 3, (2,)), [(3, 4)]),
    ("repeat_interleave", lambda m, x: m.repeat_interleave(x ** 3, 2, dim=0), [(3, 4)]),
    ("repeat_interleave tensor", lambda m, x: m.repeat_interleave(x ** 3, m.tensor([1, 0, 3]), dim=-1), [(2, 3)]),
    ("flip", lambda m, x: m.flip(x ** 3, dims=(0, -1)), [(2, 3, 4)]),
    ("fliplr", lambda m, x: m.fliplr(x ** 3), [(3, 4)]),
    ("rot90", lambda m, x: m.rot90(x ** 3, 1, (0, 1)), [(3, 4)]),
    ("roll", lambda m, x: m.roll(x ** 3, 1, dims=1), [(3, 4)]),
    ("roll flat", lambda m, x: m.roll(x ** 3, -2), [(3, 4)]),
    ("roll dims", lambda m, x: m.roll(x ** 3, (1, 2), dims=(0, -1)), [(3, 4)]),
    ("cat", lambda m, x, y: m.cat([x ** 3, y * x], dim=0), [(3, 4), (3, 4)]),
    ("cat neg dim", lambda m, x, y: m.cat([x ** 3, y ** 2], dim=-1), [(3, 2), (3, 4)]),
    ("stack", lambda m, x, y: m.stack([x ** 3, y ** 2], dim=1), [(3, 4), (3, 4)]),
    ("hstack", lambda m, x, y: m.hstack([x ** 3, y ** 2]), [(3,), (4,)]),
    ("vstack", lambda m, x, y: m.vstack([x ** 3, y ** 2]), [(4,), (2, 4)]),
    ("dstack", lambda m, x, y: m.dstack([x ** 3, y ** 2]), [(2, 3), (2, 3)]),
    ("column_stack", lambda m, x, y: m.column_stack([x ** 3, y ** 2]), [(3,), (3, 2)]),
    ("split", lambda m, x: [p ** 2 for p in m.split(x ** 3, 2, dim=1)], [(3, 5)]),
    ("split sections", lambda m, x: [p * 2 for p in m.split(x ** 3, [1, 3], dim=0)], [(4, 2)]),
    ("chunk", lambda m, x: [p ** 2 for p in (x ** 3).chunk(3, dim=-1)], [(2, 7)]),
    ("tensor_split", lambda m, x: [p ** 2 for p in m.tensor_split(x ** 3, 3, dim=0)], [(5, 2)]),
    ("unbind", lambda m, x: [p ** 2 * (i + 1) for i, p in enumerate(m.unbind(x ** 3, dim=1))], [(3, 4)]),
    ("narrow", lambda m, x: m.narrow(x ** 3, -1, 1, 2), [(3, 4)]),
    ("select", lambda m, x: m.select(x ** 3, 1, -1), [(3, 4)]),
    ("unfold", lambda m, x: (x ** 3).unfold(1, 2, 1), [(2, 5)]),
    ("unfold step", lambda m, x: (x ** 3).unfold(0, 2, 2), [(5, 3)]),
    ("as_strided", lambda m, x: (x ** 3).as_strided((2, 3), (3, 1), 1), [(3, 4)]),
    ("as_strided overlapping", lambda m, x: (x ** 3).as_strided((3, 3), (1, 1)), [(3, 4)]),
    ("as_strided of a view", lambda m, x: (x ** 3).t().as_strided((2, 2), (1, 4), 2), [(3, 4)]),
    ("diagonal", lambda m, x: m.diagonal(x ** 3), [(3, 4)]),
    ("diagonal offset dims", lambda m, x: m.diagonal(x ** 3, offset=-1, dim1=0, dim2=2), [(4, 2, 3)]),
    ("diag", lambda m, x: m.diag(x ** 3), [(3,)]),
    ("diag of matrix", lambda m, x: m.diag(x ** 3, 1), [(3, 4)]),
    ("diag_embed", lambda m, x: m.diag_embed(x ** 3, offset=1), [(2, 3)]),
    ("tril", lambda m, x: m.tril(x ** 3), [(3, 4)]),
    ("triu offset", lambda m, x: m.triu(x ** 3, -1), [(2, 3, 4)]),
    ("trace", lambda m, x: m.trace(x ** 3), [(3, 4)]),
    ("atleast_2d", lambda m, x: m.atleast_2d(x ** 3), [()]),
    ("flipud", lambda m, x: m.flipud(x ** 3), [(3, 4)]),
    ("rot90 k=-1 dims", lambda m, x: m.rot90(x ** 3, -1, (-1, 0)), [(2, 3, 4)]),
    ("tile longer reps", lambda m, x: m.tile(x ** 3, (2, 1, 2)), [(3,)]),
    ("repeat 0-d", lambda m, x: (x ** 3).repeat(2, 3), [()]),
    ("tensor_split indices", lambda m, x: [p * (i + 1) for i, p in enumerate(m.tensor_split(x ** 3, [1, 3], 1))],
     [(2, 5)]),
    ("chunk uneven", lambda m, x: [p ** 2 for p in m.chunk(x ** 3, 2, 0)], [(5, 2)]),
    ("squeeze dims tuple", lambda m, x: (x ** 3).squeeze((0, 2)), [(1, 3, 1, 2)]),
    ("view_as reshape_as", lambda m, x, y: (x ** 3).view_as(y) + (x * 2).reshape_as(y) * y, [(3, 4), (4, 3)]),
    ("movedim tuples", lambda m, x: m.movedim(x ** 3, (0, 1), (-1, 0)), [(2, 3, 4)]),
    ("atleast_3d", lambda m, x: m.atleast_3d(x ** 3), [(3,)]),
    ("meshgrid xy", lambda m, x, y: [g * (i + 1) for i, g in enumerate(m.meshgrid(x ** 3, y ** 2, indexing="xy"))],
     [(3,), (2,)]),
    ("meshgrid", lambda m, x, y: [g * 2 for g in m.meshgrid(x ** 3, y ** 2, indexing="ij")], [(3,), (2,)]),
]


def _idx(m, a):
    return m.tensor(np.asarray(a))


INDEXING = [
    ("slice", lambda m, x: (x ** 3)[1:, ::2], [(3, 4)]),
    ("negative int", lambda m, x: (x ** 3)[-1], [(3, 4)]),
    ("ellipsis None", lambda m, x: (x ** 3)[..., None, 1], [(2, 3, 4)]),
    ("0-d index", lambda m, x: (x ** 3)[()], [()]),
    ("advanced repeated", lambda m, x: (x ** 3)[_idx(m, [0, 2, 0, 0])], [(3, 4)]),
    ("advanced two arrays", lambda m, x: (x ** 3)[_idx(m, [0, 2, 0]), _idx(m, [1, 1, 3])], [(3, 4)]),
    ("advanced mixed", lambda m, x: (x ** 3)[:, _idx(m, [[1, 0], [1, 1]]), 1:], [(2, 3, 4)]),
    ("bool mask", lambda m, x: (x ** 3)[x > 0], [(3, 4)]),
    ("list index", lambda m, x: (x ** 3)[[1, -1]], [(3, 4)]),
    ("setitem slice", lambda m, x, y: _setitem(m, x, (slice(None), 1), y), [(3, 4), (3,)]),
    ("setitem broadcast", lambda m, x, y: _setitem(m, x, (slice(0, 2),), y), [(3, 4), (4,)]),
    ("setitem advanced", lambda m, x, y: _setitem(m, x, _idx(m, [2, 0]), y), [(3, 4), (2, 4)]),
    ("setitem mask", lambda m, x, y: _setitem(m, x, x > 0, y), [(3, 4), ()]),
    ("setitem scalar", lambda m, x: _setitem(m, x, (0, 1), 2.5), [(3, 4)]),
    ("index_put", lambda m, x, v: (x ** 2).index_put((_idx(m, [0, 2]), _idx(m, [1, 1])), v ** 3), [(3, 4), (2,)]),
    ("index_put accumulate", lambda m, x, v: (x ** 2).index_put((_idx(m, [0, 2, 0]),), v ** 3, accumulate=True),
     [(3, 4), (3, 4)]),
    ("index_put_ accumulate", lambda m, x, v: (x * x).index_put_((_idx(m, [1, 1]), _idx(m, [0, 0])), v ** 3,
                                                                  accumulate=True), [(3, 4), (2,)]),
    ("gather", lambda m, x: m.gather(x ** 3, 1, _idx(m, [[0, 0, 2], [1, 3, 3], [2, 1, 0]])), [(3, 4)]),
    ("gather neg dim", lambda m, x: (x ** 3).gather(-2, _idx(m, [[0, 2, 2, 1]])), [(3, 4)]),
    ("take_along_dim", lambda m, x: m.take_along_dim(x ** 3, _idx(m, [[1], [0], [3]]), dim=1), [(3, 4)]),
    ("take", lambda m, x: m.take(x ** 3, _idx(m, [[0, 5], [11, 5]])), [(3, 4)]),
    ("scatter", lambda m, x, s: m.scatter(x ** 2, 1, _idx(m, [[0, 1], [2, 3], [1, 0]]), s ** 3), [(3, 4), (3, 2)]),
    ("scatter value", lambda m, x: m.scatter(x ** 3, 0, _idx(m, [[0, 1, 2, 0]]), 1.5), [(3, 4)]),
    ("scatter_add", lambda m, x, s: m.scatter_add(x ** 2, 1, _idx(m, [[0, 0], [2, 3], [1, 1]]), s ** 3),
     [(3, 4), (3, 2)]),
    ("scatter_ on clone", lambda m, x, s: (x * x).scatter_(0, _idx(m, [[1, 0, 2, 1]]), s ** 3), [(3, 4), (1, 4)]),
    ("scatter_add_", lambda m, x, s: (x * x).scatter_add_(-1, _idx(m, [[0, 0]]), s ** 3), [(1, 4), (1, 2)]),
    ("index_select", lambda m, x: m.index_select(x ** 3, 1, _idx(m, [3, 0, 3])), [(3, 4)]),
    ("index_select 0-d", lambda m, x: m.index_select(x ** 3, 0, _idx(m, 0)), [()]),
    ("index_add", lambda m, x, s: m.index_add(x ** 2, 0, _idx(m, [2, 0, 2]), s ** 3, alpha=2.0), [(3, 4), (3, 4)]),
    ("index_add_", lambda m, x, s: (x * x).index_add_(-1, _idx(m, [1, 1]), s ** 3), [(3, 4), (3, 2)]),
    ("index_copy", lambda m, x, s: m.index_copy(x ** 2, 0, _idx(m, [2, 0]), s ** 3), [(3, 4), (2, 4)]),
    ("index_fill", lambda m, x: m.index_fill(x ** 3, 1, _idx(m, [0, 2]), -1.0), [(3, 4)]),
    ("masked_fill", lambda m, x: m.masked_fill(x ** 3, x > 0, 0.5), [(3, 4)]),
    ("masked_fill_", lambda m, x: (x * x * x).masked_fill_(x < 0, 2.0), [(3, 4)]),
    ("masked_fill tensor value", lambda m, x, v: (x ** 3).masked_fill(x > 0, v ** 2), [(3, 4), ()]),
    ("masked_scatter", lambda m, x, s: (x * x).masked_scatter(x > 0, s ** 3), [(3, 4), (3, 4)]),
    ("masked_scatter broadcast", lambda m, x, s: m.masked_scatter(x ** 3, s[:1] > 0, s * x[0]), [(4,), (3, 4)]),
    ("masked_scatter_", lambda m, x, s: (x * x).masked_scatter_(x < 0, s ** 3), [(3, 4), (12,)]),
    ("masked_select", lambda m, x: m.masked_select(x ** 3, x > 0), [(3, 4)]),
    ("where", lambda m, x, y: m.where(x > 0, x ** 3, y ** 2), [(3, 4), (4,)]),
    ("where scalar", lambda m, x: m.where(x > 0, x ** 3, 0.0), [(3, 4)]),
]


def _setitem(m, x, index, value):
    y = x * x  # (PyTorch's pow saves no output; ember's does, and refuses the in-place write)
    y[index] = value ** 3 if not isinstance(value, float) else value
    return y * x


INPLACE = [
    ("add_", lambda m, x, y: (x * x).add_(y ** 3, alpha=2), [(3, 4), (4,)]),
    ("sub_", lambda m, x, y: (x * x).sub_(y * x), [(3, 4), (3, 4)]),
    ("mul_", lambda m, x, y: (x * x).mul_(y ** 3), [(3, 4), (3, 4)]),
    ("div_", lambda m, x, y: (x * x).div_(y), [(3, 4), (3, 4)]),
    ("pow_", lambda m, x: (x ** 2 + 1).pow_(1.5), [(3, 4)]),
    ("mul_ scalar chain", lambda m, x: (x * x).mul_(3).add_(x).mul_(x), [(3, 4)]),
    ("addcmul_", lambda m, x, a, b: (x * x).addcmul_(a, b ** 2, value=0.5), [(3, 4), (3, 4), (4,)]),
    ("addcdiv_", lambda m, x, a, b: (x * x).addcdiv_(a, b * b + 1), [(3, 4), (3, 4), (3, 4)]),
    ("clamp_", lambda m, x: (x * x * x).clamp_(-0.5, 0.5) * x, [(3, 4)]),
    ("exp_", lambda m, x: (x * 0.5).exp_(), [(3, 4)]),
    ("neg_", lambda m, x: (x * x * x).neg_() * x, [(3, 4)]),
    ("sqrt_", lambda m, x: (x * x + 1).sqrt_(), [(3, 4)]),
    ("tanh_", lambda m, x: (x * 2).tanh_(), [(3, 4)]),
    ("sigmoid_", lambda m, x: (x * 2).sigmoid_(), [(3, 4)]),
    ("abs_", lambda m, x: (x * x * x).abs_() * x, [(3, 4)]),
    ("copy_", lambda m, x, y: (x * x).copy_(y ** 3) * x, [(3, 4), (4,)]),
    ("fill_", lambda m, x: (x * x).fill_(1.5) * x, [(3, 4)]),
    ("transpose_", lambda m, x: (x * x * x).transpose_(0, 1) * 2, [(3, 4)]),
    ("squeeze_", lambda m, x: (x * x * x).squeeze_(1) * 2, [(3, 1)]),
    ("lerp_", lambda m, x, y, w: (x * x).lerp_(y ** 3, w * w), [(3, 4), (3, 4), (4,)]),
    ("clamp_min_", lambda m, x: (x * x * x).clamp_min_(0.1) * x, [(3, 4)]),
    ("index_fill_", lambda m, x: (x * x * x).index_fill_(0, _idx(m, [1]), 2.0) * x, [(3, 4)]),
    ("index_copy_", lambda m, x, s: (x * x).index_copy_(1, _idx(m, [3, 0]), s ** 3), [(3, 4), (3, 2)]),
    ("unsqueeze_", lambda m, x: (x * x * x).unsqueeze_(0) * 2, [(3, 4)]),
    ("t_", lambda m, x: (x * x * x).t_() * 2, [(3, 4)]),
    ("tril_", lambda m, x: (x * x * x).tril_() * x, [(3, 3)]),
]


SORTING = [
    ("sort", lambda m, x: m.sort(x ** 3, dim=1).values, [(3, 4)]),
    ("sort descending neg dim", lambda m, x: m.sort(x ** 3, dim=-2, descending=True)[0], [(3, 4)]),
    ("sort 0-d", lambda m, x: m.sort(x ** 3).values, [()]),
    ("msort", lambda m, x: m.msort(x ** 3), [(3, 4)]),
    ("topk", lambda m, x: m.topk(x ** 3, 2, dim=1).values, [(3, 4)]),
    ("topk smallest", lambda m, x: m.topk(x ** 3, 3, dim=0, largest=False)[0], [(3, 4)]),
    ("max dim indices unused", lambda m, x: (x ** 3).max(dim=0)[0] * x[0], [(3, 4)]),
]

MATRIX = [
    ("matmul 2d", lambda m, a, b: a @ b, [(3, 4), (4, 5)]),
    ("matmul vec-vec", lambda m, a, b: m.matmul(a, b), [(4,), (4,)]),
    ("matmul mat-vec", lambda m, a, b: m.matmul(a, b), [(3, 4), (4,)]),
    ("matmul vec-mat", lambda m, a, b: m.matmul(a, b), [(4,), (4, 2)]),
    ("matmul batch broadcast", lambda m, a, b: m.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)]),
    ("matmul batch vec", lambda m, a, b: m.matmul(a, b), [(2, 3, 4), (4,)]),
    ("matmul squared", lambda m, a: (a @ a) ** 2, [(3, 3)]),
    ("mm", lambda m, a, b: m.mm(a, b * b), [(3, 4), (4, 2)]),
    ("mv", lambda m, a, b: m.mv(a, b), [(3, 4), (4,)]),
    ("bmm", lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    ("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b, beta=0.5, alpha=2.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=2.0, alpha=0.5), [(5,), (3, 4), (4, 5)]),
    ("addmv", lambda m, c, a, b: m.addmv(c, a, b), [(3,), (3, 4), (4,)]),
    ("addbmm", lambda m, c, a, b: m.addbmm(c, a, b), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addr", lambda m, c, a, b: m.addr(c, a, b, alpha=2.0), [(3, 4), (3,), (4,)]),
    ("addr squared", lambda m, c, a, b: m.addr(c, a * a, b, beta=0.5) ** 2, [(4,), (3,), (4,)]),
    ("addmm beta 0", lambda m, c, a, b: m.addmm(c, a, b * b, beta=0) ** 2, [(5,), (3, 4), (4, 5)]),
    ("addmm squared", lambda m, c, a, b: m.addmm(c * c, a, b, alpha=-1.5) ** 2, [(3, 5), (3, 4), (4, 5)]),
    ("addbmm squared", lambda m, c, a, b: m.addbmm(c, a * a, b, beta=2.0, alpha=0.5) ** 2,
     [(3, 5), (2, 3, 4), (2, 4, 5)]),
    ("baddbmm squared", lambda m, c, a, b: m.baddbmm(c, a, b * b) ** 2, [(5,), (2, 3, 4), (2, 4, 5)]),
    ("dot", lambda m, a, b: m.dot(a, b * b), [(4,), (4,)]),
    ("vdot", lambda m, a, b: m.vdot(a, b * b), [(4,), (4,)]),
    ("inner", lambda m, a, b: m.inner(a, b), [(2, 4), (3, 4)]),
    ("outer", lambda m, a, b: m.outer(a * a, b), [(3,), (4,)]),
    ("kron", lambda m, a, b: m.kron(a, b * b), [(2, 3), (2, 2)]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 2, 4), (2, 5, 3)]),
    ("tensordot int", lambda m, a, b: m.tensordot(a, b, dims=1), [(3, 4), (4, 2)]),
    ("einsum", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    ("einsum trace", lambda m, a: m.einsum("ii->", a * a), [(3, 3)]),
    ("einsum diag broadcast", lambda m, a, b: m.einsum("...ii,i->...i", a, b), [(2, 3, 3), (3,)]),
    ("einsum outer sum", lambda m, a, b: m.einsum("i,j->", a, b) * a.sum(), [(3,), (4,)]),
    ("multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    ("chain_matmul", lambda m, a, b: m.linalg.multi_dot([a, b]) ** 2, [(2, 3), (3, 2)]),
    ("vecdot", lambda m, a, b: m.linalg.vecdot(a, b), [(3, 4), (4,)]),
    ("cross", lambda m, a, b: m.cross(a, b, dim=-1), [(2, 3), (2, 3)]),
    ("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), [(2, 3), (1, 3)]),
    ("matrix_power", lambda m, a: m.matrix_power(a, 3), [(3, 3)]),
    ("matrix_power 0", lambda m, a: m.linalg.matrix_power(a, 0) * a, [(3, 3)]),
]

LINALG = [
    ("det", lambda m, a: m.det(a), [(3, 3)]),
    ("det batch", lambda m, a: m.linalg.det(a), [(2, 3, 3)]),
    ("det 1x1", lambda m, a: m.linalg.det(a * a), [(1, 1)]),
    ("det singular", lambda m, a: m.linalg.det(a), [np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])]),
    ("slogdet", lambda m, a: m.linalg.slogdet(a).logabsdet, [(2, 3, 3)]),
    ("logdet", lambda m, a: m.logdet(_sym_pd(m, a)), [(3, 3)]),
    ("inv", lambda m, a: m.linalg.inv(a + 3 * m.eye(3, dtype=a.dtype)), [(3, 3)]),
    ("inverse batch", lambda m, a: m.inverse(a + 3 * m.eye(3, dtype=a.dtype)), [(2, 3, 3)]),
    ("inv_ex", lambda m, a: m.linalg.inv_ex(a + 3 * m.eye(3, dtype=a.dtype)).inverse, [(3, 3)]),
    ("solve", lambda m, a, b: m.linalg.solve(a + 3 * m.eye(3, dtype=a.dtype), b), [(3, 3), (3, 2)]),
    ("solve vector", lambda m, a, b: m.linalg.solve(a + 3 * m.eye(3, dtype=a.dtype), b), [(3, 3), (3,)]),
    ("solve batch broadcast", lambda m, a, b: m.linalg.solve(a + 3 * m.eye(3, dtype=a.dtype), b),
     [(2, 3, 3), (3, 1)]),
    ("solve left=False", lambda m, a, b: m.linalg.solve(a + 3 * m.eye(3, dtype=a.dtype), b, left=False),
     [(3, 3), (2, 3)]),
    ("solve_triangular", lambda m, a, b: m.linalg.solve_triangular(m.tril(a) + 3 * m.eye(3, dtype=a.dtype), b,
                                                                   upper=False), [(3, 3), (3, 2)]),
    ("solve_triangular upper unit", lambda m, a, b: m.linalg.solve_triangular(
        m.triu(a), b, upper=True, unitriangular=True), [(3, 3), (3, 2)]),
    ("triangular_solve", lambda m, b, a: m.triangular_solve(b, m.triu(a) + 3 * m.eye(3, dtype=a.dtype)).solution,
     [(3, 2), (3, 3)]),
    ("cholesky", lambda m, a: m.linalg.cholesky(_sym_pd(m, a)), [(3, 3)]),
    ("cholesky upper", lambda m, a: m.linalg.cholesky(_sym_pd(m, a), upper=True), [(2, 3, 3)]),
    ("cholesky_ex", lambda m, a: m.linalg.cholesky_ex(_sym_pd(m, a)).L, [(3, 3)]),
    ("cholesky_solve", lambda m, a, b: m.cholesky_solve(b, m.linalg.cholesky(_sym_pd(m, a))), [(3, 3), (3, 2)]),
    ("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(_sym_pd(m, a))), [(3, 3)]),
    ("qr", lambda m, a: m.linalg.qr(a), [(4, 3)]),
    ("qr square", lambda m, a: m.linalg.qr(a).R, [(3, 3)]),
    ("eigh", lambda m, a: m.linalg.eigh(a + a.mT), [(3, 3)]),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a + a.mT), [(2, 3, 3)]),
    ("svd", lambda m, a: _svd_invariant(m, a), [(4, 3)]),
    ("svdvals", lambda m, a: m.linalg.svdvals(a), [(3, 4)]),
    ("matrix_norm fro", lambda m, a: m.linalg.matrix_norm(a), [(2, 3, 4)]),
    ("matrix_norm nuc", lambda m, a: m.linalg.matrix_norm(a, ord="nuc"), [(3, 4)]),
    ("matrix_norm 2", lambda m, a: m.linalg.matrix_norm(a, ord=2), [(3, 4)]),
    ("matrix_norm 1", lambda m, a: m.linalg.matrix_norm(a ** 3, ord=1), [(3, 4)]),
    ("linalg.norm", lambda m, a: m.linalg.norm(a, dim=-1), [(3, 4)]),
    ("pinv", lambda m, a: m.linalg.pinv(a), [(4, 3)]),
    ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a * 0.5), [(3, 3)]),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    ("lu_factor+lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a + 3 * m.eye(3, dtype=a.dtype)),
                                                             b), [(3, 3), (3, 2)]),
    ("lu", lambda m, a: m.linalg.lu(a + 3 * m.eye(3, dtype=a.dtype))[1:], [(3, 3)]),
    ("cond", lambda m, a: m.linalg.cond(a + 3 * m.eye(3, dtype=a.dtype)), [(3, 3)]),
    ("svd (torch.svd)", lambda m, a: m.svd(a)[1] * m.svd(a)[2].abs().sum(), [(4, 3)]),
    ("pinverse", lambda m, a: m.pinverse(a), [(3, 4)]),
    ("lu_solve (torch.lu)", lambda m, a, b: m.lu_solve(b, *m.linalg.lu_factor(a + 3 * m.eye(3, dtype=a.dtype))),
     [(3, 3), (3, 2)]),
    ("vander", lambda m, x: m.linalg.vander(x, N=3), [(4,)]),
    ("matrix_power negative", lambda m, a: m.linalg.matrix_power(a + 3 * m.eye(3, dtype=a.dtype), -2), [(3, 3)]),
    ("matrix_norm -2", lambda m, a: m.linalg.matrix_norm(a, ord=-2), [(3, 4)]),
    ("matrix_norm inf", lambda m, a: m.linalg.matrix_norm(a ** 3, ord=float("inf")), [(2, 3, 4)]),
    ("linalg.norm matrix", lambda m, a: m.linalg.norm(a, ord="fro", dim=(0, 1)), [(3, 4)]),
    ("linalg.diagonal", lambda m, a: m.linalg.diagonal(a ** 3, offset=1), [(2, 3, 4)]),
    ("cholesky_inverse upper", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(_sym_pd(m, a), upper=True),
                                                              upper=True), [(3, 3)]),
    ("qr complete", lambda m, a: m.linalg.qr(a, mode="complete"), [(3, 3)]),
    ("qr wide", lambda m, a: m.linalg.qr(a), [(2, 4)]),
    ("svd wide", lambda m, a: _svd_invariant(m, a), [(2, 4)]),
    ("eigvalsh upper", lambda m, a: m.linalg.eigvalsh(a, UPLO="U"), [(3, 3)]),
    ("pinv hermitian", lambda m, a: m.linalg.pinv(a + a.mT, hermitian=True), [(3, 3)]),
    ("matrix_exp batch", lambda m, a: m.linalg.matrix_exp(a * 0.3), [(2, 3, 3)]),
    ("solve_ex", lambda m, a, b: m.linalg.solve_ex(a + 3 * m.eye(3, dtype=a.dtype), b).result, [(3, 3), (3,)]),
    ("lu_unpack", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a + 3 * m.eye(3, dtype=a.dtype)))[1:], [(3, 3)]),
]


def _svd_invariant(m, a):
    """SVD's sign-invariant outputs (PyTorch's gradcheck uses the same)."""
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return s, (u * u) @ (vh * vh)


def _cdist(m, a, b, p):
    """ember's cdist; PyTorch's values by its definition, since PyTorch's cdist has no double backward (ember's
    is composed of differentiable ops, so it has one)."""
    if m.__name__ == "ember":
        return m.cdist(a, b, p=p)
    return m.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), ord=p, dim=-1)


def _pdist(m, a, p):
    """ember's pdist; PyTorch's values by its definition (PyTorch's pdist has no double backward either)."""
    if m.__name__ == "ember":
        return m.nn.functional.pdist(a, p=p)
    i, j = np.triu_indices(a.shape[0], 1)
    return m.linalg.vector_norm(a[m.tensor(i)] - a[m.tensor(j)], ord=p, dim=-1)


def _parts(z):
    """A complex result as a real one that reads both its parts: the real part of a rotation (the second
    derivatives of view_as_real and imag belong with the complex ops)."""
    return (z * (0.6 + 0.8j)).real


DISTANCE_FFT = [
    ("cdist", lambda m, a, b: _cdist(m, a, b, 2.0), [(3, 4), (5, 4)]),
    ("cdist p=1", lambda m, a, b: _cdist(m, a, b, 1.0), [(2, 3, 4), (2, 5, 4)]),
    ("cdist p=3", lambda m, a, b: _cdist(m, a, b, 3.0), [(3, 4), (5, 4)]),
    ("cdist inf", lambda m, a, b: _cdist(m, a, b, float("inf")), [(3, 4), (5, 4)]),
    ("pdist", lambda m, a: _pdist(m, a, 2.0), [(4, 3)]),
    ("pdist p=1", lambda m, a: _pdist(m, a, 1.0), [(4, 3)]),
    ("pdist p=inf", lambda m, a: _pdist(m, a, float("inf")), [(3, 2)]),
    ("dist", lambda m, a, b: m.dist(a, b, p=3), [(3, 4), (4,)]),
    ("pairwise_distance", lambda m, a, b: m.nn.functional.pairwise_distance(a, b), [(3, 4), (3, 4)]),
    ("cosine_similarity", lambda m, a, b: m.nn.functional.cosine_similarity(a, b, dim=-1), [(3, 4), (4,)]),
    ("fft", lambda m, x: _parts(m.fft.fft(x * x)), [(2, 5)]),
    ("ifft n", lambda m, x: _parts(m.fft.ifft(x ** 3, n=6, dim=0)), [(4, 3)]),
    ("rfft", lambda m, x: _parts(m.fft.rfft(x ** 3, norm="ortho")), [(2, 6)]),
    ("irfft", lambda m, x: m.fft.irfft(m.fft.rfft(x ** 3), n=6), [(2, 6)]),
    ("fft2", lambda m, x: _parts(m.fft.fft2(x ** 3)), [(3, 4)]),
    ("rfftn", lambda m, x: _parts(m.fft.rfftn(x ** 3, s=(2, 4))), [(3, 4)]),
    ("irfftn", lambda m, x: m.fft.irfftn(m.fft.rfftn(x ** 3), s=(3, 4)), [(3, 4)]),
    ("hfft", lambda m, x: m.fft.hfft(m.fft.ifft(x ** 3)), [(5,)]),
    ("fftshift", lambda m, x: m.fft.fftshift(x ** 3), [(3, 4)]),
    ("ifftshift complex", lambda m, x: _parts(m.fft.ifftshift(m.fft.fft(x * x), dim=0)), [(3, 4)]),
    ("fft of complex", lambda m, x, y: _parts(m.fft.fftn(m.complex(x * x, y ** 3), norm="forward")), [(2, 3), (2, 3)]),
]


EDGE = [  # empty and 0-d tensors, size-1 dims
    ("sum empty dim", lambda m, x, y: (x * x).sum(dim=0) * y, [(0, 3), (3,)]),
    ("mean of size-1 dims", lambda m, x: (x ** 3).mean(dim=(0, -1), keepdim=True), [(1, 3, 1)]),
    ("prod 0-d", lambda m, x: (x ** 3).prod(), [()]),
    ("logsumexp 0-d", lambda m, x: m.logsumexp(x * x, dim=0), [()]),
    ("amax 0-d", lambda m, x: m.amax(x ** 3), [()]),
    ("var size-1 dim", lambda m, x: m.var(x, dim=1, correction=0), [(3, 1)]),
    ("norm 0-d", lambda m, x: m.norm(x ** 3), [()]),
    ("matmul empty inner", lambda m, a, b, c: m.matmul(a, b) + c, [(2, 0), (0, 3), (2, 3)]),
    ("matmul batch size-1", lambda m, a, b: m.matmul(a, b) ** 2, [(1, 2, 3), (5, 3, 2)]),
    ("cat with empty", lambda m, x, y: m.cat([x ** 3, y ** 2]), [(0, 3), (2, 3)]),
    ("index empty", lambda m, x: (x ** 3)[_idx(m, np.zeros(0, dtype=np.int64))], [(3, 4)]),
    ("gather 0-d", lambda m, x: m.gather(x ** 3, 0, _idx(m, 0)), [()]),
    ("cumprod size-1", lambda m, x: m.cumprod(x ** 3, dim=-1), [(3, 1)]),
    ("sort size-1 dim", lambda m, x: m.sort(x ** 3, dim=0).values, [(1, 4)]),
    ("expand 0-d", lambda m, x: (x ** 3).expand(2, 3), [()]),
    ("einsum scalar operand", lambda m, a, b: m.einsum(",ij->ij", a, b) ** 2, [(), (2, 3)]),
    ("det 0x0 batch", lambda m, a: m.linalg.det(a), [(2, 0, 0)]),
]

CASES = REDUCTIONS + CUMULATIVE + SHAPE + INDEXING + INPLACE + SORTING + MATRIX + LINALG + DISTANCE_FFT + EDGE


@pytest.mark.parametrize("name, fn, specs", CASES, ids=[c[0] for c in CASES])
def test_second_order_matches_pytorch(name, fn, specs):
    check_second_order(fn, specs)


def _third_order(lib, a, w, idx):
    x = lib.tensor(a, requires_grad=True)
    m = x @ x.mT + 3 * lib.eye(3, dtype=x.dtype)
    y = lib.linalg.solve(m, lib.tensor(w)).gather(0, lib.tensor(idx)) ** 2
    y = (lib.logsumexp(y, dim=1) * lib.linalg.det(m)).sum() + lib.einsum("ij,ij->", x, x).cumsum(0).sum()
    (g1,) = lib.autograd.grad(y, x, create_graph=True)
    (g2,) = lib.autograd.grad((g1 * g1).sum(), x, create_graph=True)
    (g3,) = lib.autograd.grad(g2.sum(), x)
    return [g.detach().numpy() for g in (g1, g2, g3)]


def test_third_order_through_solve_det_gather_and_logsumexp():
    import torch

    import ember

    rng = np.random.default_rng(7)
    a, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    idx = np.array([[2, 0], [0, 0], [1, 2]])
    for e, t in zip(_third_order(ember, a, w, idx), _third_order(torch, a, w, idx)):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-9)


def test_an_unmapped_numpy_linalg_or_fft_step_names_its_module():
    import ember
    from ember.autograd.recorded import HigherOrderError, RecordedArray, running

    a = RecordedArray(ember.eye(2, dtype=ember.float64))
    with running("SomeBackward0"):
        with pytest.raises(HigherOrderError, match=r"SomeBackward0 .* numpy\.linalg\.matrix_rank"):
            np.linalg.matrix_rank(a)
        with pytest.raises(HigherOrderError, match=r"numpy\.fft\.hfft"):
            np.fft.hfft(a)
        np.testing.assert_allclose(np.linalg.inv(a * 2).t.numpy(), np.eye(2) / 2)  # a mapped one records


# A zero (or constant) slice, where std and the 2-norm have a kink: PyTorch masks their gradients there (a saved
# std result is differentiated through std's own masked formula), and its NaNs and zeros of the second order are
# where its masks put them. ember's std reran as the square root of the variance (infinite slope at 0: NaN where
# PyTorch has 0) and its 2-norm masked the quotient g x / ||x|| as a whole (NaN in the cotangent's gradient).
_KINKED = np.random.default_rng(0).standard_normal((3, 4))
_KINKED[0], _KINKED[1, :2] = 0.0, 0.0
_CONSTANT_ROW = _KINKED.copy()
_CONSTANT_ROW[0] = 1.5
ZERO_SLICES = {
    "std of a constant row": (lambda m, x: x.std(1), _CONSTANT_ROW),
    "std of zeros": (lambda m, x: (x * 0).std(1) + x.sum(), _KINKED),
    "std_mean of a constant row": (lambda m, x: m.std_mean(x, 1)[0], _CONSTANT_ROW),
    "2-norm of a zero row": (lambda m, x: m.linalg.vector_norm(x, dim=1), _KINKED),
    "2-norm of zeros": (lambda m, x: m.linalg.vector_norm(x * 0) + x.sum(), _KINKED),
    "normalize": (lambda m, x: m.nn.functional.normalize(x, dim=1), _KINKED),
    "3-norm of a zero row": (lambda m, x: m.linalg.vector_norm(x, 3, dim=1), _KINKED),
}


@pytest.mark.parametrize("name", list(ZERO_SLICES))
def test_second_order_at_a_zero_slice_of_std_and_norm_is_pytorchs(name):
    fn, values = ZERO_SLICES[name]
    check_second_order(fn, [values.shape], arrays=[values])


# scatter_reduce's prod gradient divides out factors with a product scatter (numpy.multiply.at), which create_graph
# refused (HigherOrderError); recorded, it is a prod scatter_reduce of the flattened buffer
_SCATTER_AT = _I([[0, 0], [2, 3], [1, 1]])
_WITH_ZEROS = (np.where(np.arange(12).reshape(3, 4) == 0, 0.0, np.random.default_rng(2).standard_normal((3, 4))),
               np.where(np.arange(6).reshape(3, 2) == 2, 0.0, np.random.default_rng(3).standard_normal((3, 2))))
PROD_SCATTERS = {
    "scatter_reduce prod": (lambda m, x, s: (x * x).scatter_reduce(1, m.tensor(_SCATTER_AT), s, "prod"), None),
    "scatter_reduce prod without self": (
        lambda m, x, s: x.scatter_reduce(1, m.tensor(_SCATTER_AT), s * s, "prod", include_self=False), None),
    "scatter_reduce prod with zeros": (lambda m, x, s: x.scatter_reduce(1, m.tensor(_SCATTER_AT), s, "prod"),
                                       _WITH_ZEROS),
}


@pytest.mark.parametrize("name", list(PROD_SCATTERS))
def test_prod_scatter_reduce_differentiates_twice_as_pytorchs(name):
    fn, arrays = PROD_SCATTERS[name]
    check_second_order(fn, [(3, 4), (3, 2)], arrays=None if arrays is None else list(arrays))


INDEXES = {"tensor": lambda m: m.tensor([0, 2, 0]), "list": lambda m: [2, 1], "mask": lambda m: m.tensor([True, False, True])}


@pytest.mark.parametrize("cotangent", ["constant", "requires grad"])
@pytest.mark.parametrize("index", list(INDEXES))
def test_create_graph_through_an_advanced_index_of_a_linear_function_is_pytorchs(index, cotangent):
    """``autograd.grad(x[idx] * 2, x, v, create_graph=True)``: the gradient's formula (PyTorch's index_put) records a
    node (IndexPutImplBackward0) only where it depends on something that requires grad, the cotangent ``v`` here;
    for a constant ``v`` the gradient is a constant without history, as PyTorch's (ember's raised AttributeError
    renaming a node that was not there). And the forward-mode Hessian, whose double-backward trick differentiates
    such a gradient, of ``x[0] * x[1]``."""
    import torch

    import ember

    got = []
    for m in (ember, torch):
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x[INDEXES[index](m)] * 2
        v = m.linspace(1.0, 2.0, y.shape[0], dtype=m.float64).requires_grad_(cotangent == "requires grad")
        (g,) = m.autograd.grad(y, x, v, create_graph=True)
        h = m.autograd.functional.hessian(lambda a: a[0] * a[1], x, vectorize=True,
                                          outer_jacobian_strategy="forward-mode")
        got.append((g.tolist(), g.requires_grad, g.grad_fn.name() if g.grad_fn is not None else None, h.tolist()))
    assert got[0] == got[1]
