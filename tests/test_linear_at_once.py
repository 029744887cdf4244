"""A Linear's GEMMs at two threads on ember's pool (``policy.linear_grads_at_once``, ``policy.linear_forward_halves``):
the input and weight gradients at once, the forward's two halves of rows at once, each on its own thread with
OpenBLAS held to one (``_parallel.side_by_side``). The same bits as the GEMMs one after the other on OpenBLAS's own
threads where those sum as one thread does, and one thread's bits where they do not; PyTorch's values and
gradients, OpenBLAS's count held only while they run."""

import threading

import numpy as np
import pytest
import torch

import ember
from ember._kernels import openblas
from ember._kernels.policy import policy
from ember.nn._ops import linear as linear_op

pytestmark = pytest.mark.skipif(not openblas.functions(), reason="NumPy here is not built with OpenBLAS")

# Every GEMM of these small layers counts as one OpenBLAS would thread (the shipped 8 M multiply-adds are the
# LLaMA-style step's 1024 x 128 x 128), OpenBLAS counted at two threads.
SMALL = {"blas_threaded_mnk": 0, "blas_one_thread_mnk": 1 << 12, "blas_threads": 2, "min_parallel_elements": 1 << 8}
BOTH_OFF = {"linear_grads_at_once": False, "linear_forward_halves": False}
BOTH_ON = {"linear_grads_at_once": True, "linear_forward_halves": True}


def _spied(monkeypatch):
    """Each ``side_by_side`` call's two computations noted with the thread that ran them and OpenBLAS's count then."""
    calls = []
    side_by_side = linear_op.side_by_side

    def noted(fn, seen):
        def run():
            seen.append((threading.get_ident(), openblas.functions()[1]()))
            return fn()
        return run

    def spy(first, second, elements, **kwargs):
        seen = []
        calls.append(seen)
        return side_by_side(noted(first, seen), noted(second, seen), elements, **kwargs)

    monkeypatch.setattr(linear_op, "side_by_side", spy)
    return calls


def _step(shape, out_f, bias, dtype, seed=0):
    """ember's and PyTorch's Linear on the same input: output, input, weight and bias gradients, as arrays."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = (0.1 * rng.standard_normal((out_f, shape[-1]))).astype(dtype)
    b = rng.standard_normal(out_f).astype(dtype) if bias else None
    g = rng.standard_normal((*shape[:-1], out_f)).astype(dtype)
    got = []
    for fw in (ember, torch):
        xt = fw.tensor(x, requires_grad=True)
        wt = fw.tensor(w, requires_grad=True)
        bt = fw.tensor(b, requires_grad=True) if bias else None
        y = fw.nn.functional.linear(xt, wt, bt)
        y.backward(fw.tensor(g))
        got.append([t.detach().numpy().copy() for t in (y, xt.grad, wt.grad, *((bt.grad,) if bias else ()))])
    return got


CASES = [((16, 24, 40), 56, True, np.float32), ((9, 33), 20, False, np.float32), ((4, 7, 30), 17, True, np.float64),
         ((5, 3, 2, 12), 65, False, np.float64)]


@pytest.mark.parametrize("shape,out_f,bias,dtype", CASES)
def test_at_once_gives_the_bits_of_one_after_the_other_and_torchs_values(shape, out_f, bias, dtype, threads,
                                                                         monkeypatch, two_blas_threads):
    calls = _spied(monkeypatch)
    ember.set_num_threads(2)
    with policy.override(**SMALL, **BOTH_OFF):
        (want_off, want_torch) = _step(shape, out_f, bias, dtype)
    assert calls == []
    with policy.override(**SMALL, **BOTH_ON):
        (got, _) = _step(shape, out_f, bias, dtype)
    # the forward's halves (float32's only) and the two gradients: a call each, each two computations on two
    # threads, OpenBLAS at one
    assert len(calls) == (2 if dtype == np.float32 else 1)
    for seen in calls:
        assert len(seen) == 2 and seen[0][0] != seen[1][0]
        assert [count for _, count in seen] == [1, 1]
    assert two_blas_threads() == 2  # the count back after the hold
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    for name, a, b, t in zip(("output", "input grad", "weight grad", "bias grad"), got, want_off, want_torch):
        assert a.dtype == dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
        np.testing.assert_allclose(a, t, err_msg=name, **tol)


def test_one_thread_and_small_gemms_take_openblas_as_before(threads, monkeypatch, two_blas_threads):
    calls = _spied(monkeypatch)
    ember.set_num_threads(1)
    with policy.override(**SMALL, **BOTH_ON):
        _step((16, 24, 40), 56, True, np.float32)
    assert calls == []  # one of ember's threads: nothing to run beside
    ember.set_num_threads(2)
    with policy.override(**BOTH_ON, blas_threads=2):  # the shipped threshold: these GEMMs are far under it
        _step((16, 24, 40), 56, True, np.float32)
    assert calls == []
    with policy.override(**SMALL, **BOTH_ON):  # one row, one output feature: their outer products, as before
        got, want = _step((1, 40), 56, True, np.float32)
        got1, want1 = _step((16, 40), 1, True, np.float32)
    assert calls == []
    for a, t in zip(got + got1, want + want1):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)


def test_a_gradient_that_raises_on_the_worker_is_raised_and_the_count_restored(threads, monkeypatch,
                                                                               two_blas_threads):
    ember.set_num_threads(2)
    real = linear_op.gemm
    boom = []

    def failing(a, b, out=None):
        if threading.current_thread() is not threading.main_thread():
            boom.append(True)
            raise ValueError("boom")
        return real(a, b, out=out)

    monkeypatch.setattr(linear_op, "gemm", failing)
    x = ember.randn(16, 40, requires_grad=True)
    layer = ember.nn.Linear(40, 56)
    with policy.override(**SMALL, **BOTH_ON), pytest.raises(ValueError, match="boom"):
        layer(x).sum().backward()
    assert boom  # the input gradient ran on ember's worker
    assert two_blas_threads() == 2 and not openblas.held()


def test_create_graph_keeps_its_recorded_formulas(threads, two_blas_threads):
    """A double backward through Linear records its gradients (PyTorch's mm's), never the side-by-side arrays."""
    ember.set_num_threads(2)
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((12, 30)).astype(np.float32), rng.standard_normal((20, 30)).astype(np.float32)
    got = []
    for fw in (ember, torch):
        xt, wt = fw.tensor(x, requires_grad=True), fw.tensor(w, requires_grad=True)
        with policy.override(**SMALL, **BOTH_ON) if fw is ember else policy.override():
            y = fw.nn.functional.linear(xt, wt).tanh().sum()
            (gx,) = fw.autograd.grad(y, xt, create_graph=True)
            gx.pow(2).sum().backward()
        got.append(wt.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("grads,halves,calls_made", [(False, True, 1), (True, False, 1), (False, False, 0)])
def test_each_switch_turns_on_its_own_split(grads, halves, calls_made, threads, monkeypatch, two_blas_threads):
    """``linear_forward_halves`` and ``linear_grads_at_once`` each alone: the forward's halves, or the gradients at
    once, and nothing of the other's."""
    calls = _spied(monkeypatch)
    ember.set_num_threads(2)
    with policy.override(**SMALL, linear_grads_at_once=grads, linear_forward_halves=halves):
        got, want = _step((16, 24, 40), 56, True, np.float32)
    assert len(calls) == calls_made
    for a, t in zip(got, want):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m,k,n,dtype", [(2, 63, 66600, np.float32), (3, 40, 70000, np.float32),
                                         (415, 299, 423, np.float64)])
def test_forward_halves_keep_the_bits_of_one_gemm(m, k, n, dtype, threads, monkeypatch, two_blas_threads):
    """At the shipped thresholds, halves of one row (OpenBLAS's matrix-vector product) and double precision's halves
    (its kernels sum an odd tail of rows in another order) would round otherwise than the whole GEMM: they stay one
    GEMM, so the output's bits are those with the halves off, and in single precision those of one thread."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)

    def forward():
        return ember.nn.functional.linear(ember.tensor(x), ember.tensor(w)).numpy().copy()

    ember.set_num_threads(2)
    with policy.override(blas_threads=2, **BOTH_OFF):
        off = forward()
    with policy.override(blas_threads=2, **BOTH_ON):
        on = forward()
        ember.set_num_threads(1)  # (and OpenBLAS at one, as ``set_num_threads`` sets it outside this test)
        openblas.functions()[0](1)
        one = forward()
    np.testing.assert_array_equal(on, off)
    if dtype == np.float32:
        np.testing.assert_array_equal(on, one)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(on, torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)).numpy(), rtol=tol,
                               atol=tol)


def test_at_once_gives_one_threads_bits_where_openblas_splits_the_sum(threads, two_blas_threads):
    """OpenBLAS's threaded GEMM splits the sum over K for a few outputs of a long sum (a weight gradient of few
    features over many rows), so it rounds otherwise than one thread; the GEMMs at once run on one OpenBLAS thread
    each: the output and both gradients have the bits of one thread."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((4097, 65)).astype(np.float32), rng.standard_normal((33, 65)).astype(np.float32)
    g = rng.standard_normal((4097, 33)).astype(np.float32)

    def step():
        xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        y = ember.nn.functional.linear(xt, wt)
        y.backward(ember.tensor(g))
        return [a.numpy().copy() for a in (y.detach(), xt.grad, wt.grad)]

    with policy.override(**SMALL, **BOTH_ON):
        ember.set_num_threads(2)
        two = step()
        ember.set_num_threads(1)  # (and OpenBLAS at one, as ``set_num_threads`` sets it outside this test)
        openblas.functions()[0](1)
        one = step()
    for name, a, b in zip(("output", "input grad", "weight grad"), two, one):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_more_than_two_threads_keep_openblas_threads(threads, monkeypatch, two_blas_threads):
    """At four threads two GEMMs on two of them would leave the others idle where OpenBLAS threads each GEMM over
    all: nothing runs side by side, and the values stay PyTorch's."""
    calls = _spied(monkeypatch)
    ember.set_num_threads(4)
    with policy.override(**SMALL, **BOTH_ON):
        got, want = _step((16, 24, 40), 56, True, np.float32)
    assert calls == []
    for a, t in zip(got, want):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)
