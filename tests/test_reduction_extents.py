"""Reductions over a dimension of extent 0, 1, 2 and 5 (and over all of a one-element tensor and a 0-d one), in each
float dtype, against PyTorch: the values and the gradient (or PyTorch's error). A reduction's special cases are keyed
on the extent (an empty product is 1, one factor is the product, an unbiased variance of one element is NaN, the
half-precision product's running loop), so a comparison written against the wrong extent shows only here. The
half-precision results within one rounding of their dtype, the others to float rounding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

OPS = {
    "sum": lambda m, x: x.sum(1),
    "prod": lambda m, x: x.prod(1),
    "prod keepdim": lambda m, x: m.prod(x, 1, keepdim=True),
    "prod all": lambda m, x: x.prod(),
    "mean": lambda m, x: x.mean(1),
    "nansum": lambda m, x: m.nansum(x, 1),
    "nanmean": lambda m, x: m.nanmean(x, 1),
    "amax": lambda m, x: x.amax(1),
    "amin": lambda m, x: x.amin(1),
    "max(dim)": lambda m, x: x.max(1).values,
    "argmin": lambda m, x: x.argmin(1),
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "norm 2": lambda m, x: m.linalg.vector_norm(x, 2, dim=1),
    "norm 1": lambda m, x: m.linalg.vector_norm(x, 1, dim=1),
    "norm 3": lambda m, x: m.linalg.vector_norm(x, 3, dim=1),
    "norm 0.5": lambda m, x: m.linalg.vector_norm(x, 0.5, dim=1),
    "norm inf": lambda m, x: m.linalg.vector_norm(x, float("inf"), dim=1),
    "var": lambda m, x: x.var(1),
    "var(correction=0)": lambda m, x: x.var(1, correction=0),
    "std": lambda m, x: x.std(1),
    "cumsum": lambda m, x: x.cumsum(1),
    "cumprod": lambda m, x: x.cumprod(1),
    "logcumsumexp": lambda m, x: m.logcumsumexp(x, 1),
}

VALUES = [1.5, -0.75, 2.0, 0.5, -3.0, 1.25, 0.0, 2.5, -1.0, 0.25]


def _run(m, op, dtype, extent):
    if extent == "0-d":
        x = m.tensor(1.75, dtype=getattr(m, dtype))
    elif extent == "one element":
        x = m.tensor([[1.75]], dtype=getattr(m, dtype))
    else:
        x = m.tensor(VALUES[:2 * extent], dtype=getattr(m, dtype)).reshape(2, extent)
    x.requires_grad_()
    try:
        out = OPS[op](m, x if x.ndim == 2 else x.reshape(1, -1) if x.ndim == 0 and "all" not in op else x)
        if not out.is_floating_point():
            return str(out.dtype).split(".")[-1], out.tolist(), None
        weights = m.arange(1.0, out.numel() + 1.0).to(out.dtype).reshape(out.shape)
        (grad,) = m.autograd.grad((out * weights).sum(), x)
    except (RuntimeError, IndexError) as err:
        return f"{type(err).__name__}: {err}"
    return str(out.dtype).split(".")[-1], np.asarray(out.detach().double().tolist()), \
        np.asarray(grad.double().tolist())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("extent", [0, 1, 2, 5, "one element", "0-d"])
@pytest.mark.parametrize("op", list(OPS))
def test_reduction_over_each_extent_as_pytorch(op, extent, dtype):
    got, want = (_run(m, op, dtype, extent) for m in (ember, torch))
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    assert got[0] == want[0]
    if want[2] is None:
        assert got[1] == want[1]
        return
    rtol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-6)
    for mine, theirs in zip(got[1:], want[1:]):
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("p", [float("inf"), -float("inf"), 2, 0, 1.5, 0.5, -1, -1.0, -0.5])
@pytest.mark.parametrize(("shape", "dim"), [((2, 0), 1), ((2, 0), -1), ((2, 0), (0, 1)), ((0, 3), 1), ((0, 3), 0),
                                            ((0, 3), None), ((2, 0), ()), ((0,), 0), ((2, 0, 3), (2, 1)),
                                            ((2, 0, 3), 2), ((2, 0), 5)])
def test_norms_of_empty_tensors_as_pytorch(shape, dim, p):
    """The inf and -inf norms are a max and a min, a negative order's a sum of inverse powers: over an empty dim (or
    all of an empty tensor) PyTorch's error, naming the order and the dim as given; the others are sums (0 there)."""
    for call in (lambda m: m.linalg.vector_norm(m.ones(shape), p, dim=dim),
                 lambda m: m.norm(m.ones(shape), p, dim=dim if dim != () else None)):
        seen = []
        for m in (ember, torch):
            try:
                out = call(m)
                seen.append((tuple(out.shape), out.tolist()))
            except (RuntimeError, IndexError) as err:
                seen.append(f"{type(err).__name__}: {err}")
        assert seen[0] == seen[1]


@pytest.mark.parametrize("p", [float("inf"), -float("inf"), 2, 1, -1.0])
@pytest.mark.parametrize("features", [0, 3])
@pytest.mark.parametrize("call", ["cdist", "pdist", "pairwise_distance", "_foreach_norm", "_foreach_norm of two"])
def test_distances_and_foreach_norms_of_empty_rows_as_pytorch(call, features, p):
    """Rows of no features: cdist and pdist give zeros for every p (their kernels'), pairwise_distance and
    _foreach_norm refuse the inf-norm of nothing (each with its own message), as PyTorch; a negative p is cdist's
    and pdist's error, with features or without."""
    def run(m):
        x = m.ones(3, features, requires_grad=True)
        calls = {"cdist": lambda: m.cdist(x[:2], m.ones(3, features), p=p),
                 "pdist": lambda: m.pdist(x, p=p),
                 "pairwise_distance": lambda: m.nn.functional.pairwise_distance(x, m.zeros(3, features), p=p),
                 "_foreach_norm": lambda: m._foreach_norm([x], p)[0],
                 "_foreach_norm of two": lambda: m._foreach_norm([m.ones(2), x], p)[1]}
        try:
            out = calls[call]()
        except RuntimeError as err:
            return str(err)
        (grad,) = m.autograd.grad(out.sum(), x)
        return type(out.grad_fn).__name__, out.tolist(), grad.tolist()

    assert run(ember) == run(torch)


def _outcome(call, m):
    try:
        out = call(m)
        return tuple(out.shape), str(out.dtype).split(".")[-1], out.requires_grad, out.tolist()
    except (RuntimeError, IndexError) as err:
        return f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("dim", [(), (0, 1), (1, 0), (-1, 0), (0, -1), -1, 1, [-1]])
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_of_an_empty_dim_name_it_as_given(name, dim):
    """PyTorch's IndexError names the first empty dim in ``dim``'s order as it was given (-1, not 1), and asks for a
    dim where none is given."""
    call = lambda m: getattr(m, name)(m.zeros(2, 0, requires_grad=True), dim)  # noqa: E731
    assert _outcome(call, ember) == _outcome(call, torch)


@pytest.mark.parametrize(("shape", "k", "dim"), [((2, 0), 1, -1), ((0,), 1, 0), ((2, 0), 2, 1), ((2, 3), 4, -1)])
def test_kthvalue_over_an_empty_dim_as_pytorch(shape, k, dim):
    call = lambda m: m.kthvalue(m.zeros(shape), k, dim).values  # noqa: E731
    assert _outcome(call, ember) == _outcome(call, torch)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("ord", [2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"])
@pytest.mark.parametrize(("shape", "dim"), [((0, 3), (-2, -1)), ((3, 0), (-2, -1)), ((2, 0, 3), (-2, -1)),
                                            ((0, 0), (-2, -1)), ((2, 0, 3), (0, 1)), ((2, 0, 3), (2, 1))])
def test_matrix_norms_of_empty_matrices_as_pytorch(shape, dim, ord, keepdim):
    """The largest of no singular values, column or row sums (order 2, 1, inf) is PyTorch's zeros (without history);
    the smallest of none its IndexError."""
    for call in (lambda m: m.linalg.matrix_norm(m.zeros(shape, requires_grad=True), ord, dim, keepdim),
                 lambda m: m.linalg.norm(m.zeros(shape, dtype=m.float64), ord, dim, keepdim)):
        assert _outcome(call, ember) == _outcome(call, torch)
