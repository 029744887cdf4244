"""cumprod/cummax/cummin/diff, repeat_interleave/tile/movedim/tensor_split/meshgrid/cartesian_prod, the addmm family, inner,
trace/tril_indices/triu_indices, median/kthvalue/std_mean/var_mean/count_nonzero/aminmax, addcmul/addcdiv,
cosine_similarity/pairwise_distance/cdist/dist against PyTorch."""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from oracle import assert_close, assert_same_error, check
from test_data_samplers import raises_like_torch

import ember
import ember.nn.functional as EF

DISTINCT = np.random.default_rng(3).permutation(60).astype(np.float32).reshape(3, 4, 5) / 7
WITH_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5], [2.0, -0.5, 1.0, 4.0]], dtype=np.float32)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: m.cumprod(x, 1), [(3, 4)]),
    (lambda m, x: x.cumprod(-1), [(2, 3, 4)]),
    (lambda m, x: x.cumprod(0), [WITH_ZEROS]),
    (lambda m, x: x.cumprod(1), [WITH_ZEROS]),
    (lambda m, x: x.cumprod(0), [()]),
    (lambda m, x: x.cumprod(0), [(0,)]),
    (lambda m, x: tuple(m.cummax(x, 1)), [DISTINCT]),
    (lambda m, x: tuple(x.cummin(-1)), [DISTINCT]),
    (lambda m, x: tuple(x.cummax(0)), [DISTINCT]),
    (lambda m, x: m.diff(x), [(3, 5)]),
    (lambda m, x: x.diff(n=2, dim=0), [(4, 3)]),
    (lambda m, x: m.diff(x, dim=1, prepend=x[:, :1], append=x[:, -2:]), [(3, 4)]),
    (lambda m, x: x.diff(n=5), [(2, 3)]),
])
def test_cumulative(fn, specs):
    check(fn, specs)


def test_cumulative_dtypes_and_ties():
    a = np.array([[1, 3, 3, 2, 3], [0, -1, 0, 5, 5]])
    for fn in (lambda m, x: m.cumprod(x, 1), lambda m, x: m.cummax(x, 1).indices, lambda m, x: m.cummin(x, 1).indices,
               lambda m, x: m.cummax(x, 1).values, lambda m, x: m.diff(x)):
        assert_close(fn(ember, ember.tensor(a)), fn(torch, torch.tensor(a)))
    b = np.array([True, False, False, True])
    assert_close(ember.diff(ember.tensor(b)), torch.diff(torch.tensor(b)))
    assert_close(ember.cumprod(ember.tensor(b), 0), torch.cumprod(torch.tensor(b), 0))
    nan = np.array([1.0, np.nan, 0.5, 2.0], dtype=np.float32)
    for name in ("cummax", "cummin"):
        e, t = getattr(ember, name)(ember.tensor(nan), 0), getattr(torch, name)(torch.tensor(nan), 0)
        assert_close(e.values, t.values)
        assert_close(e.indices, t.indices)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: x.repeat_interleave(2), [(3,)]),
    (lambda m, x: m.repeat_interleave(x, 3, dim=1), [(2, 3)]),
    (lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2]), dim=0), [(3, 2)]),
    (lambda m, x: x.repeat_interleave(m.tensor([2]), dim=-1), [(2, 3)]),
    (lambda m, x: x.repeat_interleave(2), [(2, 2)]),
    (lambda m, x: x.repeat_interleave(3), [()]),
    (lambda m, x: x.tile((2,)), [(2, 3)]),
    (lambda m, x: m.tile(x, (2, 1, 2)), [(2, 3)]),
    (lambda m, x: x.movedim(0, -1), [(2, 3, 4)]),
    (lambda m, x: m.movedim(x, (0, 1), (2, 0)), [(2, 3, 4)]),
    (lambda m, x: m.moveaxis(x, -1, 0), [(2, 3, 4)]),
    (lambda m, x: x.tensor_split(3), [(7, 2)]),
    (lambda m, x: m.tensor_split(x, [1, 4], dim=1), [(2, 6)]),
    (lambda m, x: x.tensor_split((2, 1, 9)), [(5,)]),
    (lambda m, x: x.tensor_split(4, dim=1), [(2, 3)]),
    (lambda m, x: m.hsplit(x, 3), [(2, 6, 2)]),
    (lambda m, x: x.hsplit([1, 4]), [(6,)]),
    (lambda m, x: m.vsplit(x, [1]), [(3, 2)]),
    (lambda m, x: x.vsplit(2), [(4, 3)]),
    (lambda m, x: m.dsplit(x, 2), [(2, 3, 4)]),
])
def test_movement(fn, specs):
    check(lambda m, x: tuple(fn(m, x)) if isinstance(fn(m, x), tuple) else fn(m, x), specs)


def test_repeat_interleave_counts_only():
    assert_close(ember.repeat_interleave(ember.tensor([2, 0, 1])), torch.repeat_interleave(torch.tensor([2, 0, 1])))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    check(lambda m, a, b, c: m.meshgrid(a, b, c, indexing=indexing), [(2,), (3,), (4,)])
    check(lambda m, a, b: m.meshgrid([a, b], indexing=indexing), [(3,), ()])


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("int32", "int64"), ("float32", "float64")])
def test_meshgrid_of_mixed_dtypes_is_an_error_as_pytorchs(dtypes):
    for lib in (torch, ember):
        a, b = (lib.ones(2, dtype=getattr(lib, d)) for d in dtypes)
        with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
            lib.meshgrid(a, b, indexing="ij")
        with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
            lib.meshgrid([], indexing="ij")


def test_cartesian_prod_values_and_gradients():
    check(lambda m, a, b, c: m.cartesian_prod(a, b, c) * m.arange(3.0), [(2,), (3,), (4,)])
    check(lambda m, a, b: m.cartesian_prod(a, b), [(3,), (0,)])
    check(lambda m, a: m.cartesian_prod(a) * 2, [(4,)])
    ints = [lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])) for lib in (ember, torch)]
    assert_close(*ints)
    one = ember.tensor([1.0, 2.0])
    assert ember.cartesian_prod(one) is one  # a single tensor comes back as it is, as PyTorch's


@pytest.mark.parametrize("make", [
    lambda m: m.cartesian_prod(m.ones(2, 2)), lambda m: m.cartesian_prod(m.ones(()), m.ones(2)),
    lambda m: m.cartesian_prod(m.ones(2), m.tensor([1, 2])), lambda m: m.cartesian_prod(),
])
def test_cartesian_prod_errors_like_torch(make):
    ours, theirs = raises_like_torch(make)
    assert ours == theirs


@pytest.mark.parametrize("fn,specs", [
    (lambda m, i, a, b: m.addmm(i, a, b), [(2, 4), (2, 3), (3, 4)]),
    (lambda m, i, a, b: i.addmm(a, b, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    (lambda m, i, a, b: m.addmm(i, a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    (lambda m, i, a, b: m.baddbmm(i, a, b, alpha=0.1), [(2, 3, 4), (2, 3, 5), (2, 5, 4)]),
    (lambda m, i, a, b: i.baddbmm(a, b, beta=0, alpha=0.5), [(1, 3, 4), (2, 3, 5), (2, 5, 4)]),
    (lambda m, i, a, b: m.addbmm(i, a, b), [(3, 4), (2, 3, 5), (2, 5, 4)]),
    (lambda m, i, a, b: m.addmv(i, a, b, beta=2), [(3,), (3, 4), (4,)]),
    (lambda m, i, a, b: i.addr(a, b, alpha=3), [(3, 4), (3,), (4,)]),
    (lambda m, i, a, b: m.addcmul(i, a, b, value=0.5), [(3, 4), (3, 4), (4,)]),
    (lambda m, i, a, b: i.addcdiv(a, b.exp()), [(3, 4), (3, 1), (3, 4)]),
    (lambda m, i, a, b: m.dot(a, b) * i, [(), (3,), (3,)]),  # 1-D @ 1-D: a 0-d gradient flows back
    (lambda m, i, a, b: (a @ b) + i, [(), (3,), (3,)]),
])
def test_scaled_products(fn, specs):
    check(fn, specs)


@pytest.mark.parametrize("name,specs", [
    ("addbmm", [(3, 4), (0, 3, 5), (0, 5, 4)]), ("addbmm", [(0, 4), (2, 0, 5), (2, 5, 4)]),
    ("addbmm", [(3, 4), (2, 3, 0), (2, 0, 4)]), ("addbmm", [(3, 0), (2, 3, 5), (2, 5, 0)]),
    ("baddbmm", [(0, 3, 4), (0, 3, 5), (0, 5, 4)]), ("baddbmm", [(2, 3, 4), (2, 3, 0), (2, 0, 4)]),
    ("addmm", [(2, 4), (2, 0), (0, 4)]), ("addmm", [(0, 4), (0, 3), (3, 4)]), ("addmm", [(2, 0), (2, 3), (3, 0)]),
    ("addmv", [(3,), (3, 0), (0,)]), ("addmv", [(0,), (0, 4), (4,)]),
    ("addr", [(0, 4), (0,), (4,)]), ("addr", [(3, 0), (3,), (0,)]),
], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_scaled_products_of_empty_extents(name, specs, dtype):
    """Each of the addmm family with an extent 0 in each place (an empty batch, no rows, no columns, an empty
    inner sum): beta * input where nothing is summed, empty results of PyTorch's shape, in the operands' dtype
    (float16, which PyTorch computes in float32 and addbmm batch entry by batch entry; an integer one, with
    integer beta and alpha, as PyTorch requires there), and gradients against PyTorch's."""
    beta, alpha = (3, 2) if dtype == np.int64 else (0.5, 2.0)
    check(lambda m, i, a, b: getattr(m, name)(i, a, b, beta=beta, alpha=alpha), specs, dtype=dtype,
          atol=1e-3 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((4, 2, 3), (3,)), ((2, 1, 4, 3), (3,)),
                                   ((3,), (4, 3, 2)), ((3,), (2, 1, 3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                                   ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 1)), ((4, 1, 3), (4, 3, 1))])
def test_matmul_of_every_pairing_of_ranks(sa, sb):
    """Values and both gradients against PyTorch: vectors on either side (a row on the left, a column on the
    right) against matrices and batches, batches broadcast, and a size-1 row or column."""
    check(lambda m, a, b: m.matmul(a, b), [sa, sb])


def test_beta_zero_ignores_nan_input():
    i = np.full((2, 2), np.nan, dtype=np.float32)
    a, b = np.eye(2, dtype=np.float32), np.ones((2, 2), dtype=np.float32)
    assert_close(ember.addmm(ember.tensor(i), ember.tensor(a), ember.tensor(b), beta=0),
                 torch.addmm(torch.tensor(i), torch.tensor(a), torch.tensor(b), beta=0))


@pytest.mark.parametrize("name,shapes", [
    ("addmm", [(3, 5), (3, 4), (4, 5)]), ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)]), ("addmv", [(3,), (3, 4), (4,)]), ("addr", [(3, 4), (3,), (4,)]),
])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("alpha", [1, 2])
def test_beta_zero_ignores_a_nan_input_in_every_form(name, shapes, dtype, alpha):
    """beta=0: the input is not read (its NaN and inf do not reach the result), for each of the family, each
    alpha (alpha 1 is a half-precision addmv's fast path) and each floating dtype, as PyTorch's."""
    rng = np.random.default_rng(0)
    i, a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    i.flat[::2] = np.nan
    i.flat[1::2] = np.inf
    results = []
    for m in (ember, torch):
        e = [m.tensor(x).to(getattr(m, dtype)) for x in (i, a, b)]
        results.append(getattr(m, name)(*e, beta=0, alpha=alpha).float().numpy())
    assert np.isfinite(results[1]).all()
    np.testing.assert_allclose(results[0], results[1], rtol=1e-2 if dtype != "float32" else 1e-5, atol=1e-5)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, a, b: m.inner(a, b), [(3,), (3,)]),
    (lambda m, a, b: a.inner(b), [(2, 3), (4, 3)]),
    (lambda m, a, b: m.inner(a, b), [(), (2, 3)]),
    (lambda m, a, b: m.trace(a) * b.sum(), [(3, 4), (2,)]),
    (lambda m, a, b: a.trace() + b.sum(), [(4, 4), (1,)]),
])
def test_inner_trace(fn, specs):
    check(fn, specs)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, a, b: m.tensordot(a, b), [(2, 3, 4), (3, 4, 5)]),
    (lambda m, a, b: m.tensordot(a, b, dims=0), [(2,), (3, 2)]),
    (lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 2, 4), (2, 5, 3)]),
    (lambda m, a, b: m.tensordot(a, b, dims=([-1], [0])), [(3, 4), (4,)]),
    (lambda m, a, b: m.tensordot(a, b, dims=([0, 1], [1, 0])), [(3, 4), (4, 3)]),
    (lambda m, a, b: m.tensordot(a, b, dims=0), [(), (2,)]),
    (lambda m, a, b: m.kron(a, b), [(2, 3), (4, 2)]),
    (lambda m, a, b: a.kron(b), [(2, 3), (4,)]),
    (lambda m, a, b: m.kron(a, b), [(3,), (2, 1, 2)]),
    (lambda m, a, b: m.vdot(a, b), [(4,), (4,)]),
    (lambda m, a, b: a.vdot(b), [(0,), (0,)]),
])
def test_tensordot_kron_vdot(fn, specs):
    check(fn, specs)


_MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, False]])


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x, s: x.masked_scatter(m.tensor(_MASK), s), [(3, 4), (3, 4)]),
    (lambda m, x, s: m.masked_scatter(x, m.tensor(_MASK), s), [(4,), (9,)]),  # x broadcast to the mask
    (lambda m, x, s: x.masked_scatter(m.tensor(_MASK[0]), s), [(3, 4), (2, 5)]),  # the mask broadcast
    (lambda m, x, s: (x * 1).masked_scatter_(m.tensor(_MASK), s), [(3, 4), (7,)]),
    (lambda m, x, s: x.masked_scatter(m.tensor(_MASK & False), s), [(3, 4), (0,)]),
])
def test_masked_scatter(fn, specs):
    check(fn, specs)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.gather(x, 0, m.tensor(0)),
    lambda m, x: m.gather(x, -1, m.tensor([0, 0])),
    lambda m, x: m.index_select(x, 0, m.tensor([0])),
    lambda m, x: m.index_select(x, -1, m.tensor(0)),
    lambda m, x: m.cumsum(x, 0),
    lambda m, x: m.cumsum(x, -1),
])
def test_zero_dim_gather_index_select_cumsum(fn):
    check(fn, [()])


def test_zero_dim_index_errors():
    for bad in [lambda m: m.gather(m.tensor(2.0), 0, m.tensor(1)),
                lambda m: m.index_select(m.tensor(2.0), 0, m.tensor([0, 0]))]:
        with pytest.raises(RuntimeError) as expected:
            bad(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
            bad(ember)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: m.pdist(x), [(5, 3)]),
    (lambda m, x: TF.pdist(x, p=1) if m is torch else EF.pdist(x, p=1), [(4, 2)]),
    (lambda m, x: m.pdist(x, p=3.5), [(3, 4)]),
    (lambda m, x: m.pdist(x, p=float("inf")), [(4, 3)]),
    (lambda m, x: m.pdist(x, p=0), [(4, 3)]),
    (lambda m, x: m.pdist(x), [(1, 3)]),
])
def test_pdist(fn, specs):
    check(fn, specs)


def test_pdist_errors():
    for bad in [lambda m: m.pdist(m.ones(2, 3, 4)), lambda m: m.pdist(m.ones(3, 4), p=-1)]:
        with pytest.raises(RuntimeError) as expected:
            bad(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
            bad(ember)


def test_masked_scatter_errors():
    for bad in [lambda m: m.zeros(2, 3).masked_scatter(m.ones(2, 3) > 0, m.ones(5)),
                lambda m: m.zeros(2, 3).masked_scatter(m.ones(2, 3), m.ones(6)),
                lambda m: m.zeros(2, 3).masked_scatter(m.ones(2, 3) > 0, m.ones(6, dtype=m.float64))]:
        with pytest.raises(RuntimeError) as expected:
            bad(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value)[:40])):
            bad(ember)


def test_tensordot_kron_vdot_complex_and_errors():
    check(lambda m, a, b: m.vdot(a, b), [(3,), (3,)], dtype=np.complex128)
    check(lambda m, a, b: m.kron(a, b), [(2,), (2, 2)], dtype=np.complex128)
    for bad in [lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 2), dims=1),
                lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 2), dims=-1),
                lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 2), dims=3),
                lambda m: m.tensordot(m.ones(2, 3, 4), m.ones(4), dims=2),  # more dims than b alone has
                lambda m: m.tensordot(m.ones(4), m.ones(4, 3, 2), dims=2),  # ... than a alone has
                lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 2), dims=([0], [0, 1])),
                lambda m: m.vdot(m.ones(2, 2), m.ones(2))]:
        with pytest.raises(RuntimeError) as expected:
            bad(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value).split(",")[0])):
            bad(ember)


def test_tri_indices():
    for args in [(3, 3), (4, 2), (2, 5, 1), (3, 4, -1), (0, 3), (3, 3, 5)]:
        assert_close(ember.tril_indices(*args), torch.tril_indices(*args))
        assert_close(ember.triu_indices(*args), torch.triu_indices(*args))
    assert ember.tril_indices(3, 3, dtype=ember.int32).dtype == ember.int32


@pytest.mark.parametrize("fn", [
    lambda m, x: m.median(x),
    lambda m, x: tuple(x.median(1)),
    lambda m, x: tuple(m.median(x, 0, keepdim=True)),
    lambda m, x: tuple(m.median(x, -1)),
    lambda m, x: tuple(m.kthvalue(x, 2)),
    lambda m, x: tuple(x.kthvalue(3, dim=0, keepdim=True)),
    lambda m, x: m.std_mean(x, 1),
    lambda m, x: m.var_mean(x, (0, 2), correction=0, keepdim=True),
    lambda m, x: m.std_mean(x),
    lambda m, x: tuple(m.aminmax(x)),
    lambda m, x: tuple(x.aminmax(dim=1, keepdim=True)),
])
def test_statistics(fn):
    check(fn, [DISTINCT])


def test_median_nan_and_count_nonzero():
    a = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, 1.0]], dtype=np.float32)
    assert_close(ember.median(ember.tensor(a)), torch.median(torch.tensor(a)))
    e, t = ember.tensor(a).median(1), torch.tensor(a).median(1)
    assert_close(e.values, t.values)
    assert_close(e.indices, t.indices)
    for dim in (None, 0, 1, (0, 1)):
        assert_close(ember.count_nonzero(ember.tensor(a), dim), torch.count_nonzero(torch.tensor(a), dim))
    assert_close(ember.tensor([[0, 2], [3, 0]]).count_nonzero(), torch.tensor([[0, 2], [3, 0]]).count_nonzero())


@pytest.mark.parametrize("fn,specs", [
    (lambda m, a, b: m.cosine_similarity(a, b), [(4, 5), (4, 5)]),
    (lambda m, a, b: m.cosine_similarity(a, b, dim=-1, eps=1e-3), [(2, 3, 5), (3, 5)]),
    (lambda m, a, b: m.pairwise_distance(a, b), [(4, 5), (4, 5)]),
    (lambda m, a, b: m.pairwise_distance(a, b, p=1, keepdim=True), [(4, 5), (5,)]),
    (lambda m, a, b: m.pairwise_distance(a, b, p=3.0, eps=0.0), [(4, 5), (4, 5)]),
    (lambda m, a, b: m.cdist(a, b), [(4, 3), (5, 3)]),
    (lambda m, a, b: m.cdist(a, b, p=1), [(2, 4, 3), (2, 5, 3)]),
    (lambda m, a, b: m.dist(a, b), [(4, 3), (4, 3)]),
    (lambda m, a, b: a.dist(b, 3), [(4, 3), (3,)]),
])
def test_distances(fn, specs):
    check(fn, specs, atol=1e-5)


def test_functional_distances_and_zero_vectors():
    a = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    b = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    check(lambda m, x, y: (EF if m is ember else TF).cosine_similarity(x, y), [a, b])
    check(lambda m, x, y: (EF if m is ember else TF).pairwise_distance(x, y), [a, b])


@pytest.mark.parametrize("make", [
    lambda m: m.cumprod(m.ones(3), 1),
    lambda m: m.diff(m.tensor(1.0)),
    lambda m: m.ones(3).repeat_interleave(m.tensor([1, 2]), dim=0),
    lambda m: m.ones(3).repeat_interleave(-1),
    lambda m: m.movedim(m.ones(2, 3), (0, 1), (1,)),
    lambda m: m.movedim(m.ones(2, 3), (0, 0), (1, 0)),
    lambda m: m.ones(3).tensor_split(0),
    lambda m: m.hsplit(m.ones(2, 6), 4),
    lambda m: m.vsplit(m.ones(3), 1),
    lambda m: m.dsplit(m.ones(2, 3), 1),
    lambda m: m.hsplit(m.tensor(1.0), 1),
    lambda m: m.meshgrid(m.ones(2, 2), m.ones(2), indexing="ij"),
    lambda m: m.meshgrid(m.ones(2), indexing="yx"),
    lambda m: m.addmm(m.ones(3, 3), m.ones(2, 3), m.ones(3, 4)),
    lambda m: m.trace(m.ones(3)),
    lambda m: m.kthvalue(m.ones(3), 4),
    lambda m: m.median(m.ones(2, 0), 1),
    lambda m: m.cdist(m.ones(3), m.ones(3, 3)),
    lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
])
def test_errors_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_backward_data_as_pytorch(dim):
    """torch._softmax_backward_data (custom softmax autograd Functions call it): values and its own gradients."""
    check(lambda m, g, x: m._softmax_backward_data(g, m.softmax(x, dim), dim, g.dtype), [(3, 4), (3, 4)],
          dtype=np.float64)


def test_jit_overload_returns_the_function():
    def f(x: int) -> int:
        return x

    assert ember.jit._overload(f) is f


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 2)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "Softmax", "LogSoftmax", "Softmin"])
def test_implicit_softmax_dim_as_pytorch(shape, name):
    """``F.softmax(x)`` without ``dim`` (old attention code): PyTorch's legacy dim (0 for 1-d and 3-d input,
    else 1), its deprecation warning naming the function, and its values."""
    import warnings

    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for m, F in ((torch, TF), (ember, EF)):
        fn = getattr(F, name) if name[0].islower() else getattr(m.nn, name)()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = fn(m.tensor(x))
        results.append((out, [str(w.message) for w in seen]))
    assert_close(results[1][0], results[0][0])
    assert results[1][1] == results[0][1] and len(results[0][1]) == 1


@pytest.mark.parametrize("shapes", [((2,), ()), ((), (2,)), ((), ()), ((), (2, 3))])
def test_tensordot_with_a_0d_operand_matches_torch(shapes):
    """dims=0 with a 0-d operand on either side (or both): an outer product with a scalar, values and
    gradients."""
    check(lambda m, a, b: m.tensordot(a, b, dims=0), list(shapes))


_MATRIX_PRODUCT_ERRORS = {  # the call, and the part of PyTorch's message ember's repeats (None: all of it)
    "matmul of a 0-d": (lambda m: m.matmul(m.tensor(2.0), m.ones(3)), None),
    "matmul inner sizes": (lambda m: m.matmul(m.ones(2, 3), m.ones(4, 2)),
                           "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"),
    "matmul of vectors' dtypes": (lambda m: m.matmul(m.ones(3), m.ones(3, dtype=m.float64)), None),
    "matmul of matrices' dtypes": (lambda m: m.matmul(m.ones(2, 3), m.ones(3, 2, dtype=m.float64)), None),
    "chain_matmul of none": (lambda m: m.chain_matmul(), None),
    "chain_matmul of a 3-d": (lambda m: m.chain_matmul(m.ones(2, 2, 2), m.ones(2, 2)), None),
    "bmm batch sizes": (lambda m: m.bmm(m.ones(2, 2, 3), m.ones(3, 3, 2)), None),
    "bmm of a 2-d": (lambda m: m.bmm(m.ones(2, 3), m.ones(3, 3, 2)), None),
    "dot of a 2-d": (lambda m: m.dot(m.ones(2, 2), m.ones(2)), None),
    "dot lengths": (lambda m: m.dot(m.ones(3), m.ones(2)), "inconsistent tensor size, expected tensor [3] and src "
                                                           "[2] to have the same number of elements"),
    "vdot dtypes": (lambda m: m.vdot(m.ones(3), m.ones(3, dtype=m.float64)), None),
    "outer of a 2-d": (lambda m: m.outer(m.ones(2, 2), m.ones(2)), None),
    "addmm dtypes": (lambda m: m.addmm(m.ones(2, 2, dtype=m.float64), m.ones(2, 3), m.ones(3, 2)),
                     "must have the same dtype, but got Double and Float"),
}


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("case", list(_MATRIX_PRODUCT_ERRORS))
def test_matrix_product_errors_as_pytorch(case):
    """Each matrix product's refusal of operands PyTorch refuses: its error type, and its message (or the part of
    it that ember's repeats, where ember's words differ)."""
    make, part = _MATRIX_PRODUCT_ERRORS[case]
    got, want = raises_like_torch(make, RuntimeError)
    if part is None:
        assert got == want
    else:
        assert part in got and part in want


@pytest.mark.parametrize("dims", [1, [[1], [0]]])
def test_tensordot_takes_its_dims_as_a_tensor_as_pytorch(dims):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    assert_close(ember.tensordot(ember.tensor(a), ember.tensor(b), dims=ember.tensor(dims)),
                 torch.tensordot(torch.tensor(a), torch.tensor(b), dims=torch.tensor(dims)))


@pytest.mark.parametrize("shapes", [((2, 0), (0, 0)), ((2, 0), (3, 0)), ((0,), (0,)), ((2, 3, 0), (4, 0)),
                                    ((0, 3), (2, 3))])
def test_inner_of_empty_shapes_as_pytorch(shapes):
    # (an empty last dimension: zeros of the leading shapes, not reshape's error for -1)
    results = []
    for m in (ember, torch):
        a, b = (m.ones(*s, requires_grad=True) for s in shapes)
        r = m.inner(a, b)
        r.sum().backward()
        results.append((r.detach(), a.grad, b.grad))
    for e, t in zip(*results):
        assert_close(e, t)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 4)), ((3,), (2, 5))])
def test_inner_of_mismatched_last_dimensions_raises_as_pytorch(shapes):
    assert_same_error(lambda m: m.inner(m.ones(*shapes[0]), m.ones(*shapes[1], dtype=m.float64)))
