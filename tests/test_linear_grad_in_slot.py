"""A Linear's weight gradient written by its GEMM straight into the weight's slot of its gradient store
(``nn/_ops/linear.py``'s ``_weight_slot``, graph.py's ``leaf_slot_to_fill``), which becomes ``.grad`` with no copy,
as PyTorch's AccumulateGrad takes the weight gradient's own tensor: the bits of the GEMM into a new array, PyTorch's
values (its peak memory: tests/test_grad_store.py), and a new array wherever the slot may not be lent (a weight
used twice, a hook that keeps its gradient, a ``.grad`` already there)."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember._kernels import openblas
from ember._kernels.policy import policy

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 5, 24)).astype(np.float32)
W = (0.2 * RNG.standard_normal((40, 24))).astype(np.float32)
B = RNG.standard_normal(40).astype(np.float32)
G = RNG.standard_normal((6, 5, 40)).astype(np.float32)


def _grads(fw, stored: bool, bias: bool = True):
    """``linear``'s weight, bias and input gradients (arrays); ``stored``: the parameters in an optimizer's gradient
    store (ember: their slots lendable)."""
    w = fw.nn.Parameter(fw.tensor(W))
    b = fw.nn.Parameter(fw.tensor(B)) if bias else None
    if stored:
        fw.optim.SGD([w] + ([b] if bias else []), lr=0.1)
    x = fw.tensor(X, requires_grad=True)
    fw.nn.functional.linear(x, w, b).backward(fw.tensor(G))
    return [t.grad.detach().numpy().copy() for t in (w, *((b,) if bias else ()), x)], w


# the GEMMs one after the other (one thread), and the input and weight gradients at once on two threads
AT_ONCE = {"blas_threaded_mnk": 0, "blas_one_thread_mnk": 1 << 12, "blas_threads": 2, "min_parallel_elements": 1 << 8,
           "linear_grads_at_once": True}


@pytest.mark.parametrize("at_once", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_the_weight_gradient_in_its_slot_has_the_bits_of_a_new_array_and_torchs_values(at_once, bias, threads):
    if at_once:
        if not openblas.functions():
            pytest.skip("NumPy here is not built with OpenBLAS")
        ember.set_num_threads(2)
    with policy.override(**(AT_ONCE if at_once else {})):
        (stored, w) = _grads(ember, True, bias)
        (plain, _) = _grads(ember, False, bias)
    store = w._grad_slot[0]
    assert w.grad._data is store.views[w._grad_slot[1]]  # .grad is the slot
    for got, want in zip(stored, plain):
        np.testing.assert_array_equal(got, want)
    (theirs, _) = _grads(torch, True, bias)
    for got, want in zip(stored, theirs):
        assert_close(got, want, rtol=1e-5, atol=1e-5)


def _twice(fw, how: str):
    """A weight used by two linears (tied), or kept by a tensor hook, or given a ``.grad`` before: gradients over
    two backwards, the hook's kept gradient as it was given."""
    w = fw.nn.Parameter(fw.tensor(W))
    fw.optim.SGD([w], lr=0.1)
    kept = []
    if how == "hook":
        w.register_hook(kept.append)
    if how == "held":
        w.grad = fw.ones_like(w)
    x, x2 = fw.tensor(X), fw.tensor(2 * X[:, :3])
    results = []
    for scale in (1.0, -3.0):
        y = fw.nn.functional.linear(x, w).square().sum()
        if how == "tied":
            y = y + fw.nn.functional.linear(x2, w).sum()
        (scale * y).backward()
        results.append(w.grad.detach().numpy().copy())
    return results + [k.detach().numpy().copy() for k in kept]


@pytest.mark.parametrize("how", ["tied", "hook", "held"])
def test_a_slot_that_may_not_be_lent_leaves_pytorchs_gradients(how):
    got, want = _twice(ember, how), _twice(torch, how)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_close(a, b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("path", ["plain", "held", "omp_blocks"])
def test_a_product_into_out_has_the_bits_of_a_new_one_on_each_path(path, threads):
    """``openblas.matmul(a, b, out=...)``, which the weight gradient's GEMM calls with the slot: ``out`` returned,
    holding the bits of the product into a new array, whichever way the product runs."""
    from ember._kernels import _omp

    if path != "plain" and not openblas.functions():
        pytest.skip("NumPy here is not built with OpenBLAS")
    if path == "omp_blocks" and not (policy.use_compiled() and _omp.available()):
        pytest.skip("needs numba and its omp threading layer")
    ember.set_num_threads(2)
    settings = {"plain": {"blas_threads": 1}, "held": {"blas_threads": 2, "blas_one_thread_mnk": 1 << 30},
                "omp_blocks": {"blas_threads": 2, "omp_gemm": True, "blas_threaded_mnk": 0}}[path]
    rng = np.random.default_rng(3)
    g, x = rng.standard_normal((256, 130)).astype(np.float32), rng.standard_normal((256, 96)).astype(np.float32)
    with policy.override(**settings):
        want = openblas.matmul(g.T, x)
        out = np.full((130, 96), np.nan, np.float32)
        assert openblas.matmul(g.T, x, out=out) is out
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(out, g.T.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)
