"""histc, histogram (Tensor methods too), range, chain_matmul and typename against torch: values, dtypes,
bin edges, the edge cases of the range (empty, constant, given), weights, density, errors and warnings."""

import warnings

import numpy as np
import pytest
import torch
from oracle import outcomes

import ember


def same(e, t):
    """The same tensors (values and dtype), tuples of them, or exceptions of one type."""
    if isinstance(t, Exception):
        assert type(e) is type(t), (e, t)
        return
    if isinstance(t, tuple):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
        return
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert not e.requires_grad
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


DATA = {
    "plain": [1.0, 2.0, 1.0, 2.5, 4.0],
    "edges hit": [0.0, 0.25, 0.5, 0.75, 1.0, 1.0],
    "constant": [2.0, 2.0],
    "empty": [],
    "2-d": [[1.0, 2.0], [3.0, 4.0]],
    "random": np.random.default_rng(0).standard_normal(1000).round(2).tolist(),
}


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("bins, lo, hi", [(4, 0, 0), (7, 0, 0), (4, 0.0, 3.0), (3, -1, 1), (1, 0, 0)])
def test_histc_like_torch(data, dtype, bins, lo, hi):
    (e, ew), (t, tw) = outcomes(lambda m: m.histc(m.tensor(DATA[data], dtype=getattr(m, dtype)), bins, lo, hi))
    same(e, t)
    assert ew == tw == []
    (e, _), (t, _) = outcomes(lambda m: m.tensor(DATA[data], dtype=getattr(m, dtype)).histc(bins, min=lo, max=hi))
    same(e, t)


@pytest.mark.parametrize("case", [
    lambda m: m.histc(m.tensor([1, 2])),  # integers: not implemented
    lambda m: m.histc(m.tensor([1.0, 2.0]), bins=0),
    lambda m: m.histc(m.tensor([1.0, 2.0]), 3, 3, 1),
    lambda m: m.histc(m.tensor([1.0, float("inf")]), 3),
    lambda m: m.histc(m.tensor([1.0, float("nan")]), 3),
    lambda m: m.histc(m.tensor([1.0, float("nan")]), 3, 0, 2),  # NaN is not counted
    lambda m: m.histc(m.tensor([1.0, 2.0]), 2.0),
    lambda m: m.histc(m.tensor([1.0, 2.0], requires_grad=True), 3),  # not differentiable
])
def test_histc_edge_cases_like_torch(case):
    (e, _), (t, _) = outcomes(case)
    same(e, t)
    if isinstance(t, RuntimeError) and "nan" not in str(t):
        assert str(e) == str(t)


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(bins=4), dict(bins=5, range=(0.0, 3.0)), dict(bins=3, density=True),
                                dict(bins=4, range=(-1.0, 1.0), density=True), dict(bins=2, weight=True),
                                dict(bins=3, weight=True, density=True), dict(bins=[0.0, 1.0, 2.5, 5.0]),
                                dict(bins=[-2.0, 0.0, 0.5, 3.0], weight=True, density=True)])
def test_histogram_like_torch(data, dtype, kw):
    def fn(m):
        x = m.tensor(DATA[data], dtype=getattr(m, dtype))
        args = dict(kw)
        if isinstance(args["bins"], list):
            args["bins"] = m.tensor(args["bins"], dtype=x.dtype)
        if args.pop("weight", False):
            args["weight"] = m.arange(x.numel(), dtype=x.dtype).reshape(x.shape) * 0.5 + 1
        return m.histogram(x, **args)
    (e, ew), (t, tw) = outcomes(fn)
    if data == "empty" and kw.get("density"):  # 0 / 0 in both
        assert np.isnan(e.hist.numpy()).all() == np.isnan(t.hist.numpy()).all()
        same(e.bin_edges, t.bin_edges)
        return
    same(tuple(e), tuple(t))
    assert e.hist is e[0] and e.bin_edges is e[1]
    assert ew == tw == []


def test_histogram_method_like_torch():
    (e, _), (t, _) = outcomes(lambda m: m.tensor([1.0, 2.0, 5.0]).histogram(3, range=(0.0, 6.0)))
    same(tuple(e), tuple(t))


@pytest.mark.parametrize("case", [
    lambda m: m.histogram(m.tensor([1, 2]), 2),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 0),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, range=(3.0, 1.0)),
    lambda m: m.histogram(m.tensor([1.0, float("inf")]), 2),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, weight=m.tensor([1.0, 2.0], dtype=m.float64)),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, weight=m.tensor([1.0, 2.0, 3.0])),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), m.tensor([0.0, 1.0], dtype=m.float64)),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), m.ones(2, 2)),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), m.tensor([0.0, 3.0, 1.0])),  # edges not increasing
])
def test_histogram_errors_like_torch(case):
    (e, _), (t, _) = outcomes(case)
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t)
    else:
        same(tuple(e), tuple(t))


RANGE = "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent " \
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end)."


@pytest.mark.parametrize("args, kw", [((1, 4), {}), ((1, 2, 0.3), {}), ((1, 4), {"dtype": "int64"}),
                                      ((4, 1, -1), {}), ((0, 1, 0.1), {"dtype": "float64"}), ((0, 1, 0.1), {}),
                                      ((-3.5, 2), {}), ((2, 2), {}), ((1, 4), {"requires_grad": True}),
                                      ((4, 1), {}), ((1, 4, 0), {}), ((4,), {})])
def test_range_like_torch(args, kw):
    def fn(m):
        k = {key: getattr(m, v) if key == "dtype" else v for key, v in kw.items()}
        return m.range(*args, **k)
    (e, ew), (t, tw) = outcomes(fn)
    assert ew == tw
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t)
        return
    assert ew == [(UserWarning, RANGE)]
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert e.requires_grad == t.requires_grad
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-7)


CHAIN = "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use torch.linalg.multi_dot " \
        "instead, which accepts a list of two or more tensors rather than multiple parameters."


def test_chain_matmul_like_torch_warning_once(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # as in a fresh process
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 5)]]
    with pytest.warns(UserWarning) as caught:
        out = ember.chain_matmul(*(ember.tensor(a) for a in mats))
    assert [str(w.message) for w in caught] == [CHAIN]
    np.testing.assert_allclose(out.numpy(), mats[0] @ mats[1] @ mats[2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not again in this process
        a = ember.tensor(mats[0], requires_grad=True)
        one = ember.chain_matmul(a)
        assert one is not a
        np.testing.assert_array_equal(one.detach().numpy(), mats[0])
        one.sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_chain_matmul_of_each_count_against_torch(count):
    """The product and every factor's gradient, for one to four matrices, as PyTorch's."""
    rng = np.random.default_rng(count)
    dims = [2, 3, 4, 3, 2][:count + 1]
    mats = [rng.standard_normal((dims[i], dims[i + 1])) for i in range(count)]
    upstream = rng.standard_normal((dims[0], dims[-1]))
    results = []
    for m in (ember, torch):
        ts = [m.tensor(a, requires_grad=True) for a in mats]
        out = m.chain_matmul(*ts)
        (out * m.tensor(upstream)).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-12)


@pytest.mark.parametrize("case", [lambda m: m.chain_matmul(), lambda m: m.chain_matmul(m.ones(3), m.ones(3, 4)),
                                  lambda m: m.chain_matmul(m.ones(2, 3), m.ones(4, 4))])
def test_chain_matmul_errors_like_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (e, _), (t, _) = outcomes(case)
    assert type(e) is type(t) is RuntimeError
    if "chain_matmul" in str(t) or "dimension" in str(t):
        assert str(e) == str(t)


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor", "DoubleTensor", "HalfTensor",
                                  "ComplexFloatTensor", "BFloat16Tensor"])
def test_typename_of_tensors_like_torch(name):
    dtypes = {"FloatTensor": "float32", "LongTensor": "int64", "BoolTensor": "bool", "DoubleTensor": "float64",
              "HalfTensor": "float16", "ComplexFloatTensor": "complex64", "BFloat16Tensor": "bfloat16"}
    (e, _), (t, _) = outcomes(lambda m: m.typename(m.zeros(2, dtype=getattr(m, dtypes[name]))))
    assert e == t == f"torch.{name}"


def test_typename_of_other_objects_like_torch():
    class Local:
        pass

    for obj in (3, "s", 2.5, None, Local, Local(), warnings.warn, np.float32):
        assert ember.typename(obj) == torch.typename(obj)
    assert ember.typename(ember.nn.Linear) == "ember.nn.modules.linear.Linear"  # ember's modules name its classes
    assert ember.typename(ember.nn.Linear(2, 2)) == "ember.nn.modules.linear.Linear"
