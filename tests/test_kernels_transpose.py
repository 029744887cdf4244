"""The transposing copy of a swapped GEMM's product (``ember/_kernels/transpose.py``) and the Linear layers that use it
(``nn/_ops/linear.py``: ``_unswapped``): the bits of NumPy's ``s.T + b``, and a Linear's output, gradients and
strides the same under the compiled copy as under NumPy's copy and bias pass, and PyTorch's."""

import numpy as np
import pytest
import torch
from test_kernels import both_ways, compiled_only

import ember
from ember._kernels import policy


@compiled_only
@pytest.mark.parametrize("n, m", [(384, 64), (130, 49), (16, 2), (15, 3), (2304, 8), (1, 5)])
@pytest.mark.parametrize("bias", ["none", "contiguous", "strided"])
def test_transposed_plus_is_numpys_transpose_plus_bias(n, m, bias):
    """out = s.T + b bit for bit (one rounding per element), with whole blocks of 16 product rows and a remainder,
    without a bias, and with a bias that is a strided view."""
    from ember._kernels.transpose import transposed_plus

    rng = np.random.default_rng(n * m)
    s = rng.standard_normal((n, m)).astype(np.float32)
    if bias == "none":
        b, expected = np.empty(0, np.float32), s.T
    else:
        b = rng.standard_normal(2 * n).astype(np.float32)[::2] if bias == "strided" else \
            rng.standard_normal(n).astype(np.float32)
        expected = s.T + b
    out = np.full((m, n), np.nan, np.float32)
    transposed_plus(s, b, out)
    np.testing.assert_array_equal(out, expected)


@compiled_only
@pytest.mark.parametrize("rows, k, n", [(64, 128, 384), (56, 64, 200), (49, 128, 128), (16, 128, 384),
                                        (4, 64, 1536)])
@pytest.mark.parametrize("bias", [True, False])
def test_swapped_linear_same_bits_with_the_compiled_copy(rows, k, n, bias):
    """A swapped float32 Linear (``_swapped``: taken at these sizes) through the compiled copy with its bias and
    through NumPy's copy then the bias pass: the same product, the same additions, so the same bits; a C-ordered
    output of PyTorch's strides, gradients and node name."""
    from ember.nn._ops import linear as L

    rng = np.random.default_rng(rows + k + n)
    xa = rng.standard_normal((1, rows, k)).astype(np.float32)
    wa = (0.1 * rng.standard_normal((n, k))).astype(np.float32)
    ba = rng.standard_normal(n).astype(np.float32)
    assert L._swapped(xa[0], wa)

    def run():
        x, w = ember.tensor(xa, requires_grad=True), ember.tensor(wa, requires_grad=True)
        b = ember.tensor(ba, requires_grad=True) if bias else None
        y = ember.nn.functional.linear(x, w, b)
        y.backward(ember.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(y.shape)))
        assert y._data.flags.c_contiguous
        return [y.detach().numpy(), x.grad.numpy(), w.grad.numpy()] + ([b.grad.numpy()] if bias else [])

    with policy.override(swap_small_gemm=True):
        fast, ref = both_ways(run)  # (rows over 48: NumPy's copy only where the rule still swaps)
    if rows <= 48:
        for a, r in zip(fast, ref):
            np.testing.assert_array_equal(a, r)
    with policy.override(swap_small_gemm=False):
        plain = run()
    for a, r in zip(fast, plain):  # (another CPU's OpenBLAS kernels may sum a layout otherwise: a few ulps)
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=5e-6)
    tx, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    tb = torch.tensor(ba, requires_grad=True) if bias else None
    ty = torch.nn.functional.linear(tx, tw, tb)
    x = ember.tensor(xa)
    y = ember.nn.functional.linear(x, ember.tensor(wa, requires_grad=True), ember.tensor(ba) if bias else None)
    assert y.stride() == ty.stride() and y.grad_fn.name() == ty.grad_fn.name()
    np.testing.assert_allclose(fast[0], ty.detach().numpy(), rtol=1e-5, atol=1e-5)


@compiled_only
def test_swap_rule_over_48_rows_needs_wide_outputs_and_the_compiled_copy():
    """From 49 to 64 rows the swap is taken only with 128 or more output features and the compiled copy (measured:
    NumPy's copy, or narrower outputs, lose it again)."""
    from ember.nn._ops import linear as L

    rows = np.zeros((64, 128), np.float32)
    assert L._swapped(rows, np.zeros((128, 128), np.float32))
    assert not L._swapped(rows, np.zeros((96, 128), np.float32))
    assert not L._swapped(np.zeros((65, 128), np.float32), np.zeros((384, 128), np.float32))
    with policy.override(compiled=False):
        assert not L._swapped(rows, np.zeros((384, 128), np.float32))
        assert L._swapped(rows[:48], np.zeros((384, 128), np.float32))


@compiled_only
def test_swap_over_48_rows_leaves_two_threads_their_halves():
    """At two threads a GEMM large enough for the rows' halves side by side (``linear_forward_halves``) keeps them
    from 49 rows on; at 48 rows and for the smaller GEMMs the swap is taken as at one thread."""
    from ember.nn._ops import linear as L

    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        rows, w = np.zeros((64, 768), np.float32), np.zeros((2304, 768), np.float32)
        halves = L._side_by_side_fits(rows, rows, w)
        assert L._swapped(rows, w) == (not halves)
        assert L._swapped(rows[:48], w)
        assert L._swapped(np.zeros((64, 128), np.float32), np.zeros((384, 128), np.float32))
        with policy.override(linear_forward_halves=False):
            assert L._swapped(rows, w)
        ember.set_num_threads(1)
        assert L._swapped(rows, w)
    finally:
        ember.set_num_threads(saved)
