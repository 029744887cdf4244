"""GEMMs in blocks of rows on numba's OpenMP threads (``ember/_kernels/omp_gemm.py``, ``policy.omp_gemm``): the bits
of NumPy's float32 product on one OpenBLAS thread for any thread count (ragged rows, transposed operands; float64
is not split),
Linear's products take that path only with the switch on, OpenBLAS's count is restored after, and a forked child
(a DataLoader worker) computes its products without numba's threads."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT

import ember
from ember._kernels import _omp, omp_gemm, openblas
from ember._kernels.policy import policy

pytestmark = pytest.mark.skipif(
    not (openblas.functions() and policy.use_compiled() and _omp.available()),
    reason="needs NumPy's OpenBLAS, numba and its omp threading layer (libgomp.so.1)")

# (m, k, n): two blocks of the fewest rows (96), ragged row counts, a block just over OpenBLAS's small-matrix bound
SHAPES = [(96, 128, 384), (96, 512, 128), (100, 4200, 5), (129, 200, 130), (513, 64, 300), (1000, 130, 17)]


_SENTINEL_COUNT = 3


@pytest.fixture(autouse=True)
def openblas_count_kept():
    """Every test here leaves OpenBLAS's thread count as it found it (it is process-wide state that the tests after
    it would inherit): a test that changes it restores it, and a test that does not fails here."""
    functions = openblas.functions()
    if not functions:
        yield
        return
    setter, getter = functions
    before = getter()
    setter(_SENTINEL_COUNT)  # (a count no test sets, so that a test that sets one and leaves it shows)
    try:
        yield
        assert getter() == _SENTINEL_COUNT, "the test left OpenBLAS's thread count changed"
    finally:
        setter(before)


@pytest.fixture
def openblas_count_restored():
    """(setter, getter) of OpenBLAS's thread count, the count put back after the test."""
    setter, getter = openblas.functions()
    before = getter()
    yield setter, getter
    setter(before)


@pytest.fixture
def one_blas_thread_reference(openblas_count_restored):
    """NumPy's product on one OpenBLAS thread (the reference), with the count put back after."""
    setter, getter = openblas_count_restored
    before = getter()

    def reference(a, b):
        setter(1)
        try:
            return a @ b
        finally:
            setter(before)

    return reference


def _layouts(a, b):
    """(a, b) as Linear passes them (x, w.T), a transposed left operand (the weight's gradient g.T @ x), and both
    C-ordered (the input's gradient g @ w)."""
    return [(a, b.T), (np.asfortranarray(a), b.T), (a, np.ascontiguousarray(b.T))]


@pytest.mark.parametrize("shape", SHAPES)
def test_blocks_give_the_bits_of_one_openblas_thread(shape, threads, one_blas_thread_reference):
    m, k, n = shape
    dtype = np.float32
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    for left, right in _layouts(a, b):
        expected = one_blas_thread_reference(left, right)
        for count in (2, 3):
            ember.set_num_threads(count)
            got = omp_gemm.matmul(left, right)
            assert got is not None and got.dtype == dtype and got.flags.c_contiguous
            assert np.array_equal(got, expected), (shape, count, np.abs(got - expected).max())


@pytest.mark.parametrize("shape", [(95, 4096, 64), (64, 64, 64), (1024, 1024, 1), (96, 120, 86)])
def test_too_few_rows_or_columns_for_two_blocks_is_left_to_the_caller(shape, threads):
    """Blocks of fewer than 48 rows (``_ROW_UNIT``), of OpenBLAS's small-matrix size (its other summation order), or a single
    column (NumPy's GEMV) do not split: None, and the caller's product runs."""
    ember.set_num_threads(2)
    m, k, n = shape
    assert omp_gemm.matmul(np.ones((m, k), np.float32), np.ones((k, n), np.float32)) is None


def test_strided_operands_mixed_dtypes_and_one_thread_are_left_to_the_caller(threads):
    ember.set_num_threads(2)
    a, b = np.ones((256, 256), np.float32), np.ones((256, 256), np.float32)
    assert omp_gemm.matmul(a, b) is not None
    assert omp_gemm.matmul(a[:, ::2], b[::2]) is None  # neither rows nor columns contiguous
    assert omp_gemm.matmul(a, b.astype(np.float64)) is None
    # float64: OpenBLAS's dgemm sums some rows near its panel boundaries in another order in a block than whole
    assert omp_gemm.matmul(a.astype(np.float64), b.astype(np.float64)) is None
    ember.set_num_threads(1)
    assert omp_gemm.matmul(a, b) is None


def test_a_sliced_operand_keeps_its_leading_dimension(threads, one_blas_thread_reference):
    ember.set_num_threads(2)
    rng = np.random.default_rng(3)
    big = rng.standard_normal((600, 700)).astype(np.float32)
    a, b = big[10:266, 5:517], big[:512, 600:700]  # rows of 700 elements: lda 700
    assert np.array_equal(omp_gemm.matmul(a, b), one_blas_thread_reference(a, b))
    assert np.array_equal(omp_gemm.matmul(b.T, big[:512, :300]), one_blas_thread_reference(b.T, big[:512, :300]))


def test_linear_takes_the_blocks_only_with_the_switch_and_restores_openblas(threads, monkeypatch,
                                                                          openblas_count_restored):
    setter, getter = openblas_count_restored
    setter(2)
    calls = []
    real = omp_gemm.matmul

    def spy(a, b):
        out = real(a, b)
        if out is not None:
            calls.append(getter())  # after the product: OpenBLAS back at its count
        return out

    monkeypatch.setattr(omp_gemm, "matmul", spy)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4, 128)).astype(np.float32)
    w = rng.standard_normal((384, 128)).astype(np.float32)
    bias = rng.standard_normal(384).astype(np.float32)
    g = rng.standard_normal((24, 4, 384)).astype(np.float32)
    results = {}
    for on in (False, True):
        with policy.override(omp_gemm=on, blas_threads=2):
            for count in (1, 2):
                ember.set_num_threads(count)
                xs, ws, bs = (ember.tensor(v, requires_grad=True) for v in (x, w, bias))
                y = ember.nn.functional.linear(xs, ws, bs)
                y.backward(ember.tensor(g))
                results[on, count] = [t.detach().numpy() for t in (y, xs.grad, ws.grad, bs.grad)]
        assert calls == ([2, 2, 2] if on else [])  # forward, the input's and the weight's gradients, at two threads
        assert getter() == 2
    for got in results.values():  # one thread's bits at two with the blocks (4.7 M each: held at two without them)
        for a, b in zip(got, results[True, 1]):
            assert np.array_equal(a, b)
    xt, wt, bt = (torch.tensor(v, requires_grad=True) for v in (x, w, bias))
    yt = torch.nn.functional.linear(xt, wt, bt)
    yt.backward(torch.tensor(g))
    for a, b in zip(results[True, 2], (yt, xt.grad, wt.grad, bt.grad)):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_env_switch_turns_it_on_at_start_up():
    code = "from ember._kernels.policy import policy; print(policy.omp_gemm)"
    # unset, it follows EMBER_OMP_KERNELS (one switch for the row kernels and the GEMMs); set, it decides alone
    for value, kernels, expected in (("1", "", "True"), ("", "", "False"), ("", "1", "True"), ("0", "1", "False")):
        env = dict(os.environ, EMBER_OMP_GEMM=value, EMBER_OMP_KERNELS=kernels, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == expected, out.stderr


FORK = """
import os, numpy as np, ember
from ember._kernels import omp_gemm, openblas
from ember._kernels.policy import policy
policy.omp_gemm = True
ember.set_num_threads(2)
a, b = np.ones((256, 512), np.float32), np.ones((512, 256), np.float32)
assert omp_gemm.matmul(a, b) is not None  # the parent ran a region on numba's OpenMP threads
pid = os.fork()
if pid == 0:  # GNU OpenMP is not fork-safe: numba ends a child that enters a region after its parent ran one
    y = ember.nn.functional.linear(ember.tensor(a), ember.tensor(b.T.copy()))
    os._exit(0 if omp_gemm.matmul(a, b) is None and (y.numpy() == 512).all() else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_computes_its_products_without_numbas_threads():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", FORK], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0", out.stdout + out.stderr
