"""tril/triu/diagonal/diag, sort/argsort/topk and roll against PyTorch: values, gradients, edge shapes, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check
from test_data_samplers import raises_like_torch

import ember


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.tril(x), (4, 4)),
    (lambda m, x: m.tril(x, 1), (3, 5)),
    (lambda m, x: x.tril(-1), (5, 3)),
    (lambda m, x: x.tril(diagonal=-7), (3, 4)),
    (lambda m, x: m.triu(x), (4, 4)),
    (lambda m, x: x.triu(2), (3, 5)),
    (lambda m, x: m.triu(x, diagonal=-1), (2, 3, 4)),
    (lambda m, x: x.tril(), (2, 2, 3, 3)),
    (lambda m, x: x.tril(), (0, 3)),
    (lambda m, x: x.triu(), (1, 1)),
    (lambda m, x: m.diagonal(x), (3, 4)),
    (lambda m, x: x.diagonal(1), (3, 4)),
    (lambda m, x: x.diagonal(-2), (3, 4)),
    (lambda m, x: x.diagonal(5), (3, 4)),
    (lambda m, x: x.diagonal(0, 1, 2), (2, 3, 4)),
    (lambda m, x: x.diagonal(1, -1, 0), (2, 3, 4)),
    (lambda m, x: m.diag(x), (3, 4)),
    (lambda m, x: m.diag(x, -1), (4, 3)),
    (lambda m, x: m.diag(x), (3,)),
    (lambda m, x: x.diag(2), (3,)),
    (lambda m, x: x.diag(-1), (1,)),
    (lambda m, x: x.diag(), (0,)),
])
def test_triangles_and_diagonals(fn, shape):
    check(fn, [shape])


def test_tril_triu_keep_integer_and_bool_dtypes():
    a = np.arange(12).reshape(3, 4)
    for dt in (np.int64, np.int32, np.bool_):
        assert_close(ember.tensor(a.astype(dt)).tril(1), torch.tensor(a.astype(dt)).tril(1))
        assert_close(ember.tensor(a.astype(dt)).triu(-1), torch.tensor(a.astype(dt)).triu(-1))


def test_tril_in_place_unrecorded_and_recorded():
    e, t = ember.ones(3, 3), torch.ones(3, 3)
    version = e._version
    assert e.tril_(-1) is e
    assert e._version == version + 1
    assert_close(e, t.tril_(-1))
    assert_close(ember.ones(2, 3, 3).triu_(1), torch.ones(2, 3, 3).triu_(1))
    # recorded: the gradient through the in-place triangle is masked the same way
    a = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    el, tl = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ey, ty = el * 2, tl * 2
    ey.triu_(1)
    ty.triu_(1)
    (ey * ey).sum().backward()
    (ty * ty).sum().backward()
    assert_close(ey, ty)
    assert_close(el.grad, tl.grad)


def test_causal_mask_pattern():
    """The GPT pattern: a lower-triangular ones mask, masked_fill(-inf), softmax."""
    out = {}
    for m in (ember, torch):
        mask = m.tril(m.ones(4, 4)).view(1, 1, 4, 4)
        att = m.zeros(1, 1, 4, 4).masked_fill(mask == 0, float("-inf"))
        out[m] = m.softmax(att, dim=-1)
        out[m, "additive"] = m.triu(m.ones(4, 4) * float("-inf"), diagonal=1)  # the word language model's mask
    assert_close(out[ember], out[torch])
    assert_close(out[ember, "additive"], out[torch, "additive"])


@pytest.mark.parametrize("make", [
    lambda m: m.tril(m.ones(3)),
    lambda m: m.triu(m.tensor(1.0)),
    lambda m: m.ones(3).tril_(),
    lambda m: m.diagonal(m.ones(3)),
    lambda m: m.diagonal(m.ones(3, 3), 0, 1, -1),
    lambda m: m.diagonal(m.ones(3, 3), 0, 0, 2),
    lambda m: m.diag(m.ones(2, 2, 2)),
])
def test_matrix_errors_like_torch(make):
    raises_like_torch(make)


# ----------------------------------------------------------------- sorting
DISTINCT = np.random.default_rng(3).permutation(60).astype(np.float32).reshape(3, 4, 5) / 7


@pytest.mark.parametrize("fn", [
    lambda m, x: m.sort(x),
    lambda m, x: x.sort(0),
    lambda m, x: x.sort(dim=1, descending=True),
    lambda m, x: m.sort(x, dim=-1, stable=True),
    lambda m, x: m.topk(x, 2),
    lambda m, x: x.topk(3, dim=0),
    lambda m, x: x.topk(1, dim=1, largest=False),
    lambda m, x: x.topk(4, 1, True, True),
    lambda m, x: x.topk(5),
    lambda m, x: x.topk(0),
    lambda m, x: m.msort(x),
])
def test_sort_topk_values_indices_and_gradient(fn):
    check(lambda m, x: tuple(fn(m, x)) if not isinstance(fn(m, x), m.Tensor) else fn(m, x), [DISTINCT])


def test_argsort_matches_torch():
    for kwargs in ({}, {"dim": 0}, {"descending": True}, {"dim": 1, "descending": True}):
        assert_close(ember.argsort(ember.tensor(DISTINCT), **kwargs), torch.argsort(torch.tensor(DISTINCT), **kwargs))
        assert_close(ember.tensor(DISTINCT).argsort(**kwargs), torch.tensor(DISTINCT).argsort(**kwargs))


def test_topk_unsorted_selects_the_same_elements():
    e = ember.tensor(DISTINCT).topk(3, sorted=False)
    t = torch.tensor(DISTINCT).topk(3, sorted=False)
    assert_close(e.values.sort().values, t.values.sort().values)
    assert_close(e.indices.sort().values, t.indices.sort().values)


def test_stable_sort_keeps_ties_in_order_and_nan_is_largest():
    a = np.array([2, 1, 2, float("nan"), 1, 2, float("nan")], dtype=np.float32)
    for descending in (False, True):
        e = ember.sort(ember.tensor(a), descending=descending, stable=True)
        t = torch.sort(torch.tensor(a), descending=descending, stable=True)
        assert_close(e.values, t.values)
        assert_close(e.indices, t.indices)
    assert_close(ember.topk(ember.tensor(a), 3).values, torch.topk(torch.tensor(a), 3).values)
    assert_close(ember.topk(ember.tensor(a), 3, largest=False).values,
                 torch.topk(torch.tensor(a), 3, largest=False).values)


def test_sort_topk_gradient_with_repeated_values():
    """Each output position sends its gradient to the input position its index names."""
    a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=np.float32)
    check(lambda m, x: m.sort(x, stable=True, descending=True)[0], [a])
    grads = {}
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        v, i = x.topk(2)
        (v * m.tensor([[1.0, 10.0], [1.0, 10.0]])).sum().backward()
        assert (x.grad.gather(1, i) == m.tensor([[1.0, 10.0], [1.0, 10.0]])).all()
        grads[m] = x.grad.sum(dim=1)  # which of several tied elements is picked is PyTorch's own choice
    assert_close(grads[ember], grads[torch])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.uint8])
def test_sort_topk_dtypes(dtype):
    a = (DISTINCT * 7).astype(dtype)
    for fn in (lambda m, x: m.sort(x, descending=True), lambda m, x: m.topk(x, 2, dim=0)):
        e, t = fn(ember, ember.tensor(a)), fn(torch, torch.tensor(a))
        assert_close(e.values, t.values)
        assert_close(e.indices, t.indices)


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: tuple(m.topk(x, 1)), ()),
    (lambda m, x: tuple(m.sort(x)), ()),
    (lambda m, x: tuple(m.topk(x, 0, dim=1)), (3, 0)),
    (lambda m, x: tuple(m.sort(x, 0)), (0, 2)),
    (lambda m, x: tuple(m.topk(x, 1)), (1,)),
])
def test_sort_topk_edge_shapes(fn, shape):
    check(fn, [shape])


@pytest.mark.parametrize("make", [
    lambda m: m.topk(m.ones(3), 4),
    lambda m: m.topk(m.ones(3), -1),
    lambda m: m.topk(m.ones(3, 2), 1, dim=2),
    lambda m: m.sort(m.ones(3), dim=1),
    lambda m: m.topk(m.ones(3), 1.5),
])
def test_sort_topk_errors_like_torch(make):
    raises_like_torch(make)


def test_topk_returns_named_fields():
    out = ember.topk(ember.tensor([1.0, 3.0, 2.0]), 2)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert indices.dtype == ember.int64 and indices.tolist() == [1, 2]


# ----------------------------------------------------------------- roll
@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.roll(x, 1), (5,)),
    (lambda m, x: m.roll(x, -2), (5,)),
    (lambda m, x: m.roll(x, 7), (3, 4)),
    (lambda m, x: x.roll(1, 0), (3, 4)),
    (lambda m, x: x.roll(-1, dims=-1), (3, 4)),
    (lambda m, x: x.roll((1, 2), (0, 1)), (3, 4)),
    (lambda m, x: x.roll(shifts=(2, -1), dims=(-1, 0)), (2, 3, 4)),
    (lambda m, x: x.roll((1, 1), (0, 0)), (3, 4)),
    (lambda m, x: x.roll(3, 1), (2, 0)),
    (lambda m, x: x.roll(3), (0,)),
    (lambda m, x: x.roll(1), ()),
    (lambda m, x: x.roll([1], [0]), (1,)),
])
def test_roll(fn, shape):
    check(fn, [shape])


def test_roll_integer_dtype():
    a = np.arange(12).reshape(3, 4)
    assert_close(ember.tensor(a).roll((1, -1), (0, 1)), torch.tensor(a).roll((1, -1), (0, 1)))


@pytest.mark.parametrize("make", [
    lambda m, x: x.transpose(0, 1),  # row-major result, as the input's suggested memory format
    lambda m, x: x[:, :1].expand(3, 4),
    lambda m, x: x.reshape(1, 3, 1, 4).contiguous(memory_format=m.channels_last),  # kept channels_last
    lambda m, x: x.reshape(1, 3, 2, 2).contiguous(memory_format=m.channels_last)[:, :, ::2],
])
def test_roll_result_layout_as_pytorch(make):
    a = np.arange(12.0).reshape(3, 4)
    results = [m.roll(make(m, m.tensor(a)), 1, 1) for m in (ember, torch)]
    assert results[0].stride() == results[1].stride()
    assert_close(*results)


@pytest.mark.parametrize("make", [
    lambda m: m.roll(m.ones(3), (1, 2), 0),
    lambda m: m.roll(m.ones(3), (1, 2)),
    lambda m: m.roll(m.ones(3), 1, 2),
    lambda m: m.roll(m.tensor(1.0), 1, 0),
    lambda m: m.roll(m.ones(3), []),
])
def test_roll_errors_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("make", [
    lambda m: m.topk(m.tensor([True, False, True]), 2),
    lambda m: m.tensor(True).topk(1),
    lambda m: m.tensor([True, False, True]).topk(4),  # (k's range is checked first)
    lambda m: m.kthvalue(m.tensor([[True, False]]), 1, 1),
    lambda m: m.tensor([True]).kthvalue(2),
])
def test_topk_and_kthvalue_refuse_bool_as_pytorch(make):
    got, want = raises_like_torch(make)
    assert got == want
