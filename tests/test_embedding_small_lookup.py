"""An embedding lookup too small for a thread split (fewer than ``policy.min_parallel_pass_elements`` values looked
up) is NumPy's ``take`` of the table's rows: the values, shapes, strides, gradients and errors of PyTorch's
``F.embedding``, and the same bits as the compiled gather that a split lookup runs."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels import policy

F = ember.nn.functional


def _pair(array, requires_grad=False):
    return ember.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("shape", [(), (5,), (1, 64), (2, 3, 4)])
def test_small_lookup_matches_torch(dtype, index_dtype, shape):
    """Values bit for bit, shape, strides (row-major) and the weight's gradient (repeated rows summed), as
    PyTorch's; the result is a copy (writing it leaves the table alone)."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((65, 16)).astype(dtype)
    idx = rng.integers(0, 65, shape).astype(index_dtype)
    if idx.size > 1:
        idx.reshape(-1)[:2] = 7  # a row looked up twice: its gradient rows add
    (w, tw), (i, ti) = _pair(table, True), _pair(idx)
    out, expected = F.embedding(i, w), torch.nn.functional.embedding(ti, tw)
    assert out.shape == expected.shape and out.stride() == expected.stride() and out.dtype == w.dtype
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__ == "EmbeddingBackward0"
    g = rng.standard_normal(out.shape).astype(dtype)
    out.backward(ember.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6, atol=1e-6)
    with ember.no_grad():
        out.detach().fill_(5.0)
    np.testing.assert_array_equal(w.detach().numpy(), table)


def test_small_lookup_of_a_transposed_table_and_padding_idx():
    """A table that is a transposed view (not row-major) and a ``padding_idx`` row: PyTorch's values and gradient
    (none for the padding row)."""
    rng = np.random.default_rng(1)
    stored = rng.standard_normal((16, 40)).astype(np.float32)
    idx = np.array([[3, 0, 3, 39], [1, 3, 2, 0]])
    (s, ts), (i, ti) = _pair(stored, True), _pair(idx)
    out = F.embedding(i, s.t(), padding_idx=3)
    expected = torch.nn.functional.embedding(ti, ts.t(), padding_idx=3)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), ts.grad.numpy())
    assert not s.grad.numpy()[:, 3].any()


@pytest.mark.parametrize("bad", [65, -1, 1 << 40])
def test_small_lookup_out_of_range_is_pytorchs_index_error(bad):
    table = np.zeros((65, 8), np.float32)
    idx = np.array([[0, 4, bad]])
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.functional.embedding(torch.tensor(idx), torch.tensor(table))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor(idx), ember.tensor(table))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_lookup_same_bits_as_the_split_gather(dtype):
    """The same lookups through ``take`` (the shipped threshold) and through the split path (the threshold at a
    few values: the compiled gather where the kernels are on, split over two threads): the same bits."""
    rng = np.random.default_rng(2)
    table = rng.standard_normal((300, 24)).astype(dtype)
    idx = rng.integers(0, 300, (8, 32))
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        results = []
        for changes in ({}, {"min_parallel_pass_elements": 8}):
            with policy.override(**changes):
                w = ember.tensor(table, requires_grad=True)
                out = F.embedding(ember.tensor(idx), w)
                out.backward(ember.ones_like(out))
                results.append((out.detach().numpy().copy(), w.grad.numpy().copy()))
    finally:
        ember.set_num_threads(saved)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(results[0][0], table[idx])
