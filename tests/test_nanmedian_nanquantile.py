"""nanmedian and nanquantile against PyTorch: values, indices, dtypes, shapes, gradients (``nanmedian()`` splits
its gradient evenly among the elements equal to the result, as ``median()`` does), slices of NaN only, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_same_error

import ember


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, shape).astype(dtype)  # (ties on purpose)
    if np.dtype(dtype).kind == "f":
        a[rng.random(shape) < 0.35] = np.nan
        if len(shape) == 2:
            a[0] = np.nan  # a slice of NaN only
    return a


def _as_numpy(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, False), (-1, True), (0, True)])
def test_median_and_nanmedian_values_indices_and_gradients_as_pytorch(name, dtype, dim, keepdim):
    a = _data((4, 7), dtype)
    seen = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=dtype != np.int64)
        args = () if dim is None else (dim, keepdim)
        out = getattr(m, name)(x, *args)
        method = getattr(x, name)(*args)
        values = out if dim is None else out.values
        got = [_as_numpy(values), str(values.dtype).split(".")[-1], _as_numpy(method if dim is None else method.values)]
        if dim is not None:
            assert type(out).__name__ == name and len(out) == 2 and out.values is out[0] and out.indices is out[1]
            got += [_as_numpy(out.indices), str(out.indices.dtype).split(".")[-1], _as_numpy(method.indices)]
        if x.requires_grad:
            w = m.tensor(np.arange(1.0, values.numel() + 1).reshape(tuple(values.shape)), dtype=values.dtype)
            (values * w).sum().backward()
            got += [_as_numpy(x.grad), values.grad_fn.name()]
        seen.append(got)
    for e, t in zip(*seen):
        if isinstance(e, np.ndarray):
            assert e.shape == t.shape and e.dtype == t.dtype
            np.testing.assert_array_equal(e, t)
        else:
            assert e == t


@pytest.mark.parametrize("fn", [
    lambda m: m.nanmedian(m.tensor([float("nan")] * 3)),
    lambda m: m.nanmedian(m.zeros(0)),
    lambda m: m.nanmedian(m.zeros(0, 3), 1),
    lambda m: m.nanmedian(m.tensor(5.0), 0),
    lambda m: m.nanmedian(m.tensor(float("nan"))),
    lambda m: m.nanmedian(m.tensor([1.0, 2.0, float("nan")], dtype=m.float16)),
    lambda m: m.nanmedian(m.tensor([[3, 1, 2]]), 1, True),
    lambda m: m.tensor([[float("nan"), 1.0], [2.0, float("nan")]]).nanmedian(0),
    # an empty integer tensor's median(): the C cast of NaN PyTorch's kernel stores (ember raised ValueError)
    lambda m: m.median(m.zeros(0, dtype=m.int64)),
    lambda m: m.nanmedian(m.zeros(0, dtype=m.int32)),
    lambda m: m.median(m.zeros(0, dtype=m.int8)),
    # an empty bool/complex tensor's median(): its NaN too, before the kernel's dtype check (True, nan + 0j)
    lambda m: m.median(m.zeros(0, dtype=m.bool)),
    lambda m: m.nanmedian(m.zeros(0, dtype=m.bool)),
    lambda m: m.median(m.zeros(0, dtype=m.complex64)),
    lambda m: m.nanmedian(m.zeros(0, 2, dtype=m.complex128)),
])
def test_nanmedian_edge_cases_as_pytorch(fn):
    e, t = fn(ember), fn(torch)
    e, t = (e, t) if isinstance(t, torch.Tensor) else (tuple(e), tuple(t))
    for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("fn", [
    lambda m: m.nanmedian(m.zeros(2, 0), 1),
    lambda m: m.nanmedian(m.tensor([True, False])),
    lambda m: m.nanmedian(m.tensor([1j])),
    lambda m: m.median(m.tensor([True])),
    lambda m: m.median(m.tensor([True]), 0),  # (with a dim PyTorch's kernel is median_out)
    lambda m: m.nanmedian(m.tensor([1j]), 0),
    lambda m: m.nanmedian(m.zeros(2, 3), 2),
    lambda m: m.nanquantile(m.ones(3, dtype=m.int64), 0.5),
    lambda m: m.nanquantile(m.ones(3), 1.5),
    lambda m: m.nanquantile(m.ones(3), m.ones(2, 2) / 2),
    lambda m: m.nanquantile(m.ones(3), 0.5, interpolation="cubic"),
    lambda m: m.nanquantile(m.zeros(0), 0.5),
])
def test_nanmedian_and_nanquantile_errors_as_pytorch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 0.5, 0.9, 1.0]])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (1, False), (0, True), (-1, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nanquantile_values_and_gradients_as_pytorch(q, interpolation, dim, keepdim, dtype):
    a = _data((5, 6), dtype, seed=1) + np.random.default_rng(2).random((5, 6)).astype(dtype)
    seen = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        qq = m.tensor(q, dtype=x.dtype) if isinstance(q, list) else q
        out = m.nanquantile(x, qq, dim, keepdim, interpolation=interpolation)
        same = x.nanquantile(qq, dim, keepdim, interpolation=interpolation)
        w = m.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=out.dtype)
        (out * w).sum().backward()
        seen.append((_as_numpy(out), _as_numpy(same), _as_numpy(x.grad)))
    for e, t in zip(*seen):
        assert e.shape == t.shape and e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=1e-6 if dtype == np.float32 else 1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_bfloat16_median_and_nanmedian_see_nan_as_pytorch(name, dim):
    # bfloat16's NumPy kind is not "f": its NaN must still propagate (median) or be skipped (nanmedian)
    a = _data((4, 7), np.float32, seed=3)
    seen = []
    for m in (ember, torch):
        x = m.tensor(a).to(m.bfloat16)
        out = getattr(x, name)() if dim is None else getattr(x, name)(dim)
        values = out if dim is None else out.values
        got = [values.float().numpy(), str(values.dtype).split(".")[-1]]
        if dim is not None:
            got.append(out.indices.numpy())
        seen.append(got)
    for e, t in zip(*seen):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(e, t)
        else:
            assert e == t
