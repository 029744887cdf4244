"""Norms as PyTorch's graph: every vector norm (x.norm(), torch.norm, linalg.vector_norm, linalg.norm of a vector,
matrix_norm('fro')) is one LinalgVectorNormBackward0 node for every ord, with PyTorch's values and gradients (zeros,
ties at the extreme, complex input, dims, keepdim, second order); the max/min-based matrix norms end in
AmaxBackward0 / AminBackward0; x.norm(p='nuc') is the nuclear norm."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

INF = float("inf")
X = np.array([[1.5, -2.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [-3.0, 3.0, 0.5, -0.25]])
CALLS = {
    "x.norm()": lambda m, x: x.norm(),
    "norm(p=1)": lambda m, x: x.norm(p=1),
    "norm(p=3, dim=1)": lambda m, x: x.norm(p=3, dim=1),
    "norm(p=0.5, dim=1)": lambda m, x: x.norm(p=0.5, dim=1),
    "norm(p=1.5, dim=0, keepdim)": lambda m, x: x.norm(p=1.5, dim=0, keepdim=True),
    "norm(p=inf, dim=1)": lambda m, x: x.norm(p=INF, dim=1),
    "norm(p=0)": lambda m, x: x.norm(p=0),
    "norm('fro')": lambda m, x: x.norm(p="fro"),
    "norm('nuc')": lambda m, x: x.norm(p="nuc"),
    "torch.norm(x, 2, 0)": lambda m, x: m.norm(x, 2, 0),
    "vector_norm": lambda m, x: m.linalg.vector_norm(x),
    "vector_norm -inf dim 1": lambda m, x: m.linalg.vector_norm(x, -INF, dim=1),
    "vector_norm inf": lambda m, x: m.linalg.vector_norm(x, INF),
    "vector_norm 4 keepdim": lambda m, x: m.linalg.vector_norm(x, 4, dim=(0, 1), keepdim=True),
    "linalg.norm": lambda m, x: m.linalg.norm(x),
    "linalg.norm of a row, ord 3": lambda m, x: m.linalg.norm(x[2], 3),
    "matrix_norm": lambda m, x: m.linalg.matrix_norm(x),
    "matrix_norm 1": lambda m, x: m.linalg.matrix_norm(x, 1),
    "matrix_norm -1": lambda m, x: m.linalg.matrix_norm(x, -1),
    "matrix_norm inf keepdim": lambda m, x: m.linalg.matrix_norm(x, INF, keepdim=True),
    "matrix_norm -inf": lambda m, x: m.linalg.matrix_norm(x, -INF),
    "matrix_norm 2": lambda m, x: m.linalg.matrix_norm(x, 2),
    "linalg.norm inf": lambda m, x: m.linalg.norm(x, INF),
}


W = np.random.default_rng(0).standard_normal(X.shape)


def _run(m, call, complex_input=False):
    x = m.tensor(X * (1 + 0.5j) if complex_input else X, requires_grad=True)
    y = CALLS[call](m, x)
    (g,) = m.autograd.grad(y.sum(), x, create_graph=True, allow_unused=True)
    gg = None
    if g is not None and g.requires_grad and not complex_input:
        (gg,) = m.autograd.grad((g * m.tensor(W)).sum(), x, allow_unused=True)
    arrays = [t if t is None else t.detach().numpy(**({"force": True} if m is torch else {})) for t in (y, g, gg)]
    for i in (1, 2):
        if arrays[i] is not None and not (np.abs(arrays[i]) > 1e-12).any():
            arrays[i] = None  # (a zero derivative: PyTorch's ZeroTensor or unused input, ember's None or zeros)
    return (y.grad_fn.name(), *arrays)


@pytest.mark.parametrize("call", list(CALLS))
def test_norm_node_values_and_gradients_as_pytorch(call):
    ours, theirs = _run(ember, call), _run(torch, call)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", ["x.norm()", "norm(p=1)", "norm(p=3, dim=1)", "vector_norm inf", "norm(p=0)"])
def test_norm_of_complex_input_as_pytorch(call):
    ours, theirs = _run(ember, call, True), _run(torch, call, True)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:3], theirs[1:3]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("call", [c for c in CALLS if c not in ("norm(p=0)", "norm('nuc')", "matrix_norm 2")])
def test_norm_gradient_keeps_the_input_dtype(call, dtype):
    """The gradient is in the input's dtype, as PyTorch's: the inf-norms' share of the gradient among the elements
    at the extreme divides by their count in that dtype (an int64 count made it float64)."""
    if dtype != "float32" and ("matrix_norm" in call or call in ("linalg.norm", "linalg.norm inf")):
        pytest.skip("PyTorch's CPU matrix norms need float32 or float64")
    grads = []
    for m in (ember, torch):
        x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(CALLS[call](m, x).sum(), x)
        grads.append(g)
    ours, theirs = grads
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("call", ["amax", "amin", "max", "min", "amax dim keepdim"])
def test_extreme_gradient_keeps_the_input_dtype(call, dtype):
    """amax / amin and max() / min() of all elements split the gradient evenly among tied extremes, divided by their
    count in the gradient's dtype (an int64 count made a float32 input's gradient float64)."""
    fns = {"amax": lambda x: x.amax(1), "amin": lambda x: x.amin(0), "max": lambda x: x.max(),
           "min": lambda x: x.min(), "amax dim keepdim": lambda x: x.amax((0, 1), keepdim=True)}
    grads = []
    for m in (ember, torch):
        x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(fns[call](x).sum(), x)
        grads.append(g)
    ours, theirs = grads
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-3, atol=1e-4)


NORMS_WITH_DTYPE = {
    "linalg.vector_norm": lambda m, x, d: m.linalg.vector_norm(x, dtype=d),
    "torch.norm": lambda m, x, d: m.norm(x, dtype=d),
    "x.norm(2, dim)": lambda m, x, d: x.norm(2, dim=1, dtype=d),
    "linalg.norm": lambda m, x, d: m.linalg.norm(x, dtype=d),
    "linalg.matrix_norm": lambda m, x, d: m.linalg.matrix_norm(x, dtype=d),
    "matrix_norm(1)": lambda m, x, d: m.linalg.matrix_norm(x, 1, dtype=d),
}


@pytest.mark.parametrize("call", list(NORMS_WITH_DTYPE))
@pytest.mark.parametrize("given, asked", [
    ("float32", "int64"), ("float32", "bool"), ("float32", "float16"), ("float64", "bfloat16"),
    ("bfloat16", "float16"), ("float32", "complex64"), ("complex64", "float32"), ("complex128", "complex64"),
    ("int64", "float32"), ("int64", None), ("float16", "float32"), ("float32", "float64"),
])
def test_norm_dtype_is_checked_as_pytorchs(call, given, asked):
    # PyTorch's check_linalg_norm_dtype: a floating or complex dtype=, complex for a complex input only, which the
    # input's dtype reaches without narrowing (ember cast float32 to float16 and complex to real, with a warning)
    outcomes = []
    for m in (torch, ember):
        x = m.ones(3, 3, dtype=getattr(m, given))
        try:
            out = NORMS_WITH_DTYPE[call](m, x, None if asked is None else getattr(m, asked))
            outcomes.append(str(out.dtype).split(".")[-1])
        except RuntimeError as err:
            outcomes.append(str(err))
    assert outcomes[1] == outcomes[0]
