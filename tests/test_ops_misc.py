"""unique/bincount/searchsorted/bucketize/isin/take/take_along_dim, nan_to_num/logaddexp/hypot/fmod,
fliplr/flipud/rot90/atleast_*/column_stack/dstack, nansum/nanmean/logcumsumexp, bitwise functions and
the in-place pointwise methods against PyTorch."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check
from test_data_samplers import raises_like_torch

import ember

INTS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])


@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"return_inverse": True, "return_counts": True}, {"sorted": True}])
def test_unique(kwargs):
    e, t = ember.unique(ember.tensor(INTS), **kwargs), torch.unique(torch.tensor(INTS), **kwargs)
    for a, b in zip(e if isinstance(e, tuple) else [e], t if isinstance(t, tuple) else [t]):
        assert_close(a, b)
    m = np.array([[1, 2], [3, 4], [1, 2]])
    e, t = ember.tensor(m).unique(dim=0, return_inverse=True), torch.tensor(m).unique(dim=0, return_inverse=True)
    assert_close(e[0], t[0])
    assert_close(e[1], t[1])
    e, t = ember.tensor(m.reshape(2, 3)).unique(return_inverse=True), torch.tensor(m.reshape(2, 3)).unique(
        return_inverse=True)
    assert_close(e[1], t[1])


def test_bincount_and_lookups():
    assert_close(ember.bincount(ember.tensor(INTS)), torch.bincount(torch.tensor(INTS)))
    assert_close(ember.tensor(INTS).bincount(minlength=12), torch.tensor(INTS).bincount(minlength=12))
    w = np.linspace(0, 1, INTS.size)
    assert_close(ember.bincount(ember.tensor(INTS), ember.tensor(w)), torch.bincount(torch.tensor(INTS),
                                                                                   torch.tensor(w)))
    bounds = np.array([1.0, 3.0, 5.0, 7.0])
    vals = np.array([[0.5, 3.0, 6.0], [7.0, 8.0, 1.0]])
    for right in (False, True):
        assert_close(ember.searchsorted(ember.tensor(bounds), ember.tensor(vals), right=right),
                     torch.searchsorted(torch.tensor(bounds), torch.tensor(vals), right=right))
        assert_close(ember.bucketize(ember.tensor(vals), ember.tensor(bounds), right=right),
                     torch.bucketize(torch.tensor(vals), torch.tensor(bounds), right=right))
    rows = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 6.0]])
    assert_close(ember.searchsorted(ember.tensor(rows), ember.tensor([[2.5], [5.0]]), side="right", out_int32=True),
                 torch.searchsorted(torch.tensor(rows), torch.tensor([[2.5], [5.0]]), side="right", out_int32=True))
    assert_close(ember.isin(ember.tensor(INTS), ember.tensor([1, 5])), torch.isin(torch.tensor(INTS),
                                                                                 torch.tensor([1, 5])))
    assert_close(ember.isin(ember.tensor(INTS), 5, invert=True), torch.isin(torch.tensor(INTS), 5, invert=True))


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: m.take(x, m.tensor([[0, 5], [11, -1]])), [(3, 4)]),
    (lambda m, x: x.take(m.tensor([2, 2])), [(3,)]),
    (lambda m, x: m.take_along_dim(x, m.tensor([[1], [0], [2]]), 1), [(3, 4)]),
    (lambda m, x: x.take_along_dim(m.tensor([[3, 0]]), dim=1), [(3, 4)]),
    (lambda m, x: m.take_along_dim(x, m.tensor([0, 11, 4])), [(3, 4)]),
    (lambda m, x: m.take_along_dim(x, x.argmax(1, keepdim=True), 1), [(3, 4)]),
])
def test_take(fn, specs):
    check(fn, specs)


INF = np.array([[1.0, np.nan, np.inf], [-np.inf, -2.0, 0.5]], dtype=np.float32)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: m.nan_to_num(x), [INF]),
    (lambda m, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), [INF]),
    (lambda m, a, b: m.logaddexp(a, b), [(3, 4), (4,)]),
    (lambda m, a, b: a.logaddexp(b * 100), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.logaddexp2(a, b), [(3, 4), (4,)]),
    (lambda m, a, b: a.logaddexp2(b * 100), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.hypot(a, b), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.fmod(a, b.exp() + 0.5), [(3, 4), (3, 4)]),
    (lambda m, a, b: a.fmod(1.5) + b, [(3, 4), (3, 4)]),
    (lambda m, x: m.nansum(x), [INF[:, :2]]),
    (lambda m, x: x.nansum(1), [INF[:, :2]]),
    (lambda m, x: m.nanmean(x, 0, keepdim=True), [INF[:, :2]]),
    (lambda m, x: x.nanmean(), [(3, 4)]),
    (lambda m, x: m.logcumsumexp(x, 1), [(3, 4)]),
    (lambda m, x: x.logcumsumexp(0) , [np.array([[1.0, -2.0], [200.0, 3.0], [-np.inf, 1.0]], dtype=np.float32)]),
    (lambda m, x: m.logcumsumexp(x, 0), [()]),
    (lambda m, x: m.logcumsumexp(x, 1), [np.array([[-np.inf, 1.0, -np.inf, 2.0]])]),
])
def test_pointwise_and_nan_reductions(fn, specs):
    check(fn, specs)


def test_integer_fmod_and_nan_to_num():
    a, b = np.array([5, -5, 7, -7]), np.array([3, 3, -2, -2])
    assert_close(ember.fmod(ember.tensor(a), ember.tensor(b)), torch.fmod(torch.tensor(a), torch.tensor(b)))
    assert_close(ember.tensor(a).nan_to_num(), torch.tensor(a).nan_to_num())


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: m.fliplr(x), [(3, 4)]),
    (lambda m, x: x.flipud(), [(3, 4, 2)]),
    (lambda m, x: m.rot90(x), [(3, 4)]),
    (lambda m, x: x.rot90(2, [1, 2]), [(2, 3, 4)]),
    (lambda m, x: x.rot90(-1), [(3, 4)]),
    (lambda m, x: x.rot90(4, (1, 0)), [(3, 4)]),
    (lambda m, a, b: m.atleast_1d(a, b), [(), (2, 3)]),
    (lambda m, a, b: m.atleast_2d([a, b]), [(), (3,)]),
    (lambda m, a, b: m.atleast_3d(a, b), [(3,), (2, 3)]),
    (lambda m, x: m.atleast_3d(x), [()]),
    (lambda m, a, b: m.column_stack([a, b]), [(3,), (3, 2)]),
    (lambda m, a, b: m.dstack([a, b]), [(3,), (3,)]),
    (lambda m, a, b: m.dstack((a, b)), [(2, 3), (2, 3, 2)]),
])
def test_shapes(fn, specs):
    check(fn, specs)


def test_bitwise_and_logical_functions():
    a, b = np.array([12, 10, 7]), np.array([10, 6, 1])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert_close(getattr(ember, name)(ember.tensor(a), ember.tensor(b)), getattr(torch, name)(torch.tensor(a),
                                                                                               torch.tensor(b)))
        assert_close(getattr(ember.tensor(a), name)(ember.tensor(b)), getattr(torch.tensor(a), name)(torch.tensor(b)))
    assert_close(ember.bitwise_not(ember.tensor(a)), torch.bitwise_not(torch.tensor(a)))
    p, q = np.array([True, False, True]), np.array([True, True, False])
    assert_close(ember.logical_xor(ember.tensor(p), ember.tensor(q)), torch.logical_xor(torch.tensor(p),
                                                                                       torch.tensor(q)))


@pytest.mark.parametrize("name,args", [("log_", ()), ("log1p_", ()), ("sin_", ()), ("cos_", ()), ("floor_", ()),
                                       ("ceil_", ()), ("round_", ()), ("trunc_", ()), ("sign_", ()),
                                       ("reciprocal_", ()), ("square_", ()), ("rsqrt_", ()), ("tan_", ()),
                                       ("atan_", ()), ("sinh_", ()), ("cosh_", ()), ("erf_", ()), ("expm1_", ()),
                                       ("frac_", ()), ("remainder_", (0.7,)), ("fmod_", (0.7,)),
                                       ("nan_to_num_", ()), ("logit_", (0.1,))])
def test_in_place_pointwise(name, args):
    a = np.random.default_rng(1).uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    e, t = ember.tensor(a), torch.tensor(a)
    v = e._version
    assert getattr(e, name)(*args) is e
    getattr(t, name)(*args)
    assert_close(e, t, atol=1e-6)
    assert e._version == v + 1
    grads = {}
    for m in (ember, torch):  # recorded on a non-leaf: same gradient as the out-of-place op
        x = m.tensor(a, requires_grad=True)
        y = x * 1
        getattr(y, name)(*args)
        (y * y).sum().backward()
        grads[m] = x.grad
    assert_close(grads[ember], grads[torch], atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3, dtype=m.int64).log_(),
    lambda m: m.bincount(m.tensor([-1, 2])),
    lambda m: m.bincount(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.take(m.ones(3), m.tensor([3])),
    lambda m: m.take_along_dim(m.ones(3, 4), m.tensor([0]), 1),
    lambda m: m.fliplr(m.ones(3)),
    lambda m: m.rot90(m.ones(3, 3), 1, (0, 0)),
    lambda m: m.bucketize(m.ones(3), m.ones(2, 2)),
    lambda m: m.searchsorted(m.ones(2, 3), m.ones(3, 1)),
    lambda m: m.fmod(m.tensor([1, 2]), 0),
])
def test_errors_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1.0, 2.0]),  # a confusion matrix built from float predictions
    lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    lambda m: m.tensor([[1.0]]),  # the dtype is refused before the shape
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([1.0], dtype=m.float16),
])
def test_bincount_refuses_non_integer_dtypes_as_torch(make):
    # PyTorch's kernel exists for integer types only: NotImplementedError naming the dtype, not the 1-d message
    with pytest.raises(NotImplementedError) as want:
        torch.bincount(make(torch))
    with pytest.raises(NotImplementedError) as got:
        ember.bincount(make(ember))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("fn,specs", [
    (lambda m, x: x.unfold(0, 3, 2), [(7,)]),
    (lambda m, x: x.unfold(1, 2, 1), [(2, 5, 3)]),
    (lambda m, x: x.unfold(-1, 4, 3), [(2, 3, 10)]),
    (lambda m, x: x.unfold(0, 1, 1), [()]),
    (lambda m, x: x.unfold(0, 0, 1), [(3,)]),
    (lambda m, x: x.ravel(), [(2, 3)]),
    (lambda m, x: x.swapdims(0, 1), [(2, 3)]),
    (lambda m, x: m.swapdims(x, -1, 0), [(2, 3, 4)]),
    (lambda m, x: m.absolute(x) + x.absolute(), [(2, 3)]),
    (lambda m, a, b: m.fmax(a, b), [np.array([1.0, np.nan, 3.0, np.nan], dtype=np.float32),
                                    np.array([np.nan, 2.0, 1.0, np.nan], dtype=np.float32)]),
    (lambda m, a, b: a.fmin(b), [np.array([1.0, np.nan, 3.0, 0.5], dtype=np.float32),
                                 np.array([np.nan, 2.0, 1.0, 4.0], dtype=np.float32)]),
])
def test_windows_and_aliases(fn, specs):
    check(fn, specs)


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3).unfold(0, 4, 1),
    lambda m: m.ones(3).unfold(0, 2, 0),
    lambda m: m.ones(3).unfold(1, 2, 1),
])
def test_unfold_errors_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("name,args", [("unsqueeze_", (0,)), ("unsqueeze_", (-1,)), ("squeeze_", ()),
                                       ("squeeze_", (1,)), ("t_", ()), ("transpose_", (0, 1)),
                                       ("swapdims_", (1, 0)), ("swapaxes_", (0, 1))])
def test_in_place_views(name, args):
    a = np.random.default_rng(2).standard_normal((3, 1)).astype(np.float32)
    e, t = ember.tensor(a), torch.tensor(a)
    v, before = e._version, e.numpy()
    assert getattr(e, name)(*args) is e
    getattr(t, name)(*args)
    assert_close(e, t)
    assert e._version == v + 1
    assert np.shares_memory(e.numpy(), before)  # the same storage, reshaped
    grads = {}
    for m in (ember, torch):  # on a non-leaf the view's gradient flows back
        x = m.tensor(a, requires_grad=True)
        y = x * 2
        getattr(y, name)(*args)
        (y * m.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        grads[m] = x.grad
    assert_close(grads[ember], grads[torch])


def test_in_place_view_on_leaf_requiring_grad_raises_like_torch():
    raises_like_torch(lambda m: m.ones(2, requires_grad=True).unsqueeze_(0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16", "bfloat16"])
def test_linspace_is_pytorchs_to_the_last_bit(dtype):
    # PyTorch's CPU kernel counts up from start for the first half and down from end for the rest, one fused
    # multiply-add each (half precision: rounded after each operation); NumPy's values differ by one unit in the
    # last place in about half the elements.
    for steps in [*range(0, 40), 100, 257, 1001, 4097]:
        for start, end in [(-1, 1), (0, 1), (1e-4, 0.02), (-3.5, 10), (0, 999), (10, -2.5), (0.3, 0.7)]:
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).float().numpy()
            got = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).float().numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {start} {end} {steps}")
