"""Ops whose forward allocates their result once (PyTorch's kernels write the result and nothing else): pointwise
math, binary arithmetic, comparisons' selections, casts, activations, softmax and layer_norm. Each keeps its peak
memory under 1.5 times its result, with and without a gradient to record, and gives PyTorch's values and strides. A
copy of a result or of an input (a ``copy=True``, an ``astype`` without ``copy=False``, an array built again by
the recording) doubles that peak: the kind of change that leaves every value right (``tests/test_unary_result_memory.py``
checks four unary ops the same way)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import ember

ROWS, COLS = 512, 1024  # 2 MiB of float32

OPS = {
    "exp": lambda m, x: x.exp(), "tanh": lambda m, x: x.tanh(), "sin": lambda m, x: x.sin(),
    "log1p": lambda m, x: x.log1p(), "exp2": lambda m, x: x.exp2(),
    "reciprocal": lambda m, x: x.reciprocal(), "floor": lambda m, x: x.floor(), "round": lambda m, x: x.round(),
    "relu": lambda m, x: x.relu(), "clamp": lambda m, x: x.clamp(-0.5, 0.5),
    "x * 2": lambda m, x: x * 2, "x + x": lambda m, x: x + x, "x * x": lambda m, x: x * x,
    "square": lambda m, x: x.square(), "x ** 2": lambda m, x: x ** 2,
    "maximum": lambda m, x: m.maximum(x, x), "lerp": lambda m, x: m.lerp(x, x, 0.5),
    "double": lambda m, x: x.double(), "half": lambda m, x: x.half(), "clone": lambda m, x: x.clone(),
    "t().contiguous()": lambda m, x: x.t().contiguous(),
    "softmax": lambda m, x: x.softmax(1), "gelu": lambda m, x: m.nn.functional.gelu(x),
    "silu": lambda m, x: m.nn.functional.silu(x), "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x), "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (COLS,)),
}
# recorded with a gradient these keep a derivative or a saved copy beside the result, as PyTorch's kernels do not,
# so only their forward without a gradient is held to the bound
NO_GRAD_ONLY = {"gelu", "silu", "leaky_relu", "hardtanh", "layer_norm"}


def _peak(fn) -> tuple[int, object]:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        return tracemalloc.get_traced_memory()[1] - before, out
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("op", OPS)
def test_the_result_is_the_only_allocation(op, requires_grad):
    if requires_grad and op in NO_GRAD_ONLY:
        pytest.skip("keeps its derivative for backward")
    data = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    x = ember.tensor(data, requires_grad=requires_grad)
    OPS[op](ember, x)  # (the first call: kernels compiled or loaded, caches filled, outside the measurement)
    peak, y = _peak(lambda: OPS[op](ember, x))
    result = y.numel() * y.element_size()
    assert peak < 1.5 * result, f"{op}: a peak of {peak} bytes for a {result}-byte result"
    expected = OPS[op](torch, torch.tensor(data, requires_grad=requires_grad))
    assert y.dtype.__repr__().split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert y.stride() == expected.stride()
    np.testing.assert_allclose(y.detach().float().numpy(), expected.detach().float().numpy(), rtol=2e-6, atol=1e-6)
    assert y.requires_grad == expected.requires_grad


# Reductions whose result is small: PyTorch's var/std kernel (Welford, accumulating float32 in float64) allocates
# nothing the input's size. ember's float32 variance keeps one float64 temporary (twice the input's bytes: x - mean,
# squared where it is) and float64's one of its own dtype; the input itself is what backward keeps, as PyTorch's
# node saves it. They took 7 (float32) and 2 (float64) times the input: a saved x - mean, a float64 copy, the
# deviation and its square side by side.
SPREADS = {
    "var()": lambda m, x: x.var(), "std(1)": lambda m, x: x.std(1), "var(0)": lambda m, x: x.var(0),
    "var_mean(1)": lambda m, x: m.var_mean(x, 1), "std_mean()": lambda m, x: m.std_mean(x),
}
SPREAD_PEAK = {"float32": 2.1, "float64": 1.1}  # times the input's bytes


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", SPREAD_PEAK)
@pytest.mark.parametrize("op", SPREADS)
def test_var_and_std_keep_one_temporary_the_inputs_size(op, dtype, requires_grad):
    data = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(dtype) * 3 + 10
    x = ember.tensor(data, requires_grad=requires_grad)
    SPREADS[op](ember, x)
    peak, y = _peak(lambda: SPREADS[op](ember, x))
    assert peak < SPREAD_PEAK[dtype] * data.nbytes, f"{op}: a peak of {peak / data.nbytes:.2f} times the input"
    t = torch.tensor(data, requires_grad=requires_grad)
    expected = SPREADS[op](torch, t)
    for got, want in zip(y if isinstance(y, tuple) else (y,), expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    if requires_grad:
        loss = sum(o.sum() for o in (y if isinstance(y, tuple) else (y,)))
        (gx,) = ember.autograd.grad(loss, x)
        (gt,) = torch.autograd.grad(sum(o.sum() for o in (expected if isinstance(expected, tuple) else (expected,))), t)
        np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-5, atol=1e-7)


# Reductions whose result keeps a dimension of size 1 (keepdim, or a reduced shape with one): NumPy's result is
# row-major already, strides and all, so laying it out as PyTorch's (``_row_major``) must not copy it
TALL = (ROWS * COLS // 4, 4)
KEPT_DIM_REDUCTIONS = {
    "sum(1, keepdim)": lambda m, x: x.sum(1, keepdim=True), "amax(1, keepdim)": lambda m, x: x.amax(1, keepdim=True),
    "amin(-1, keepdim)": lambda m, x: x.amin(-1, keepdim=True), "prod(1, keepdim)": lambda m, x: x.prod(1, keepdim=True),
    "sum(2) to (n, 1)": lambda m, x: x.reshape(-1, 1, 4).sum(2),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("op", KEPT_DIM_REDUCTIONS)
def test_a_reduction_keeping_a_size_one_dimension_allocates_its_result_once(op, requires_grad):
    data = np.random.default_rng(0).uniform(0.5, 1.5, TALL).astype(np.float32)
    x = ember.tensor(data, requires_grad=requires_grad)
    KEPT_DIM_REDUCTIONS[op](ember, x)
    peak, y = _peak(lambda: KEPT_DIM_REDUCTIONS[op](ember, x))
    result = y.numel() * y.element_size()
    assert peak < 1.5 * result, f"{op}: a peak of {peak} bytes for a {result}-byte result"
    expected = KEPT_DIM_REDUCTIONS[op](torch, torch.tensor(data, requires_grad=requires_grad))
    assert tuple(y.shape) == tuple(expected.shape) and y.stride() == expected.stride()
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    assert y.requires_grad == expected.requires_grad
