"""``mode``'s index among equal values as PyTorch's CPU kernel gives it: the row's (value, index) pairs sorted by
value with libstdc++'s ``std::sort``, the last pair of the mode's run taken. Up to 16 elements that is the last
occurrence (insertion sort, stable); beyond, introsort's partitions reorder equal values, and ember runs the same
sort (the index is deterministic, not the last occurrence)."""

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "int16"])
@pytest.mark.parametrize("n", [5, 16, 17, 24, 51, 100, 333])
def test_index_among_equal_values(n, dtype):
    rng = np.random.default_rng(n)
    for levels in (2, 4, 9):
        a = rng.integers(0, levels, size=(3, n)).astype(dtype)
        for dim in (0, 1, -1):
            tv, ti = torch.from_numpy(a).mode(dim)
            ev, ei = ember.tensor(a).mode(dim)
            assert ei.tolist() == ti.tolist() and ev.tolist() == tv.tolist()


def test_longer_rows_are_not_the_last_occurrence():
    """The case the rule covers: at 51 elements PyTorch's index is not the last of the mode's occurrences."""
    a = np.array([2, 2, 1, 1, 0, 0, 0, 0, 3, 2, 3, 2, 2, 3, 2, 2, 2, 2, 3, 1, 3, 2, 0, 1, 3, 2, 0, 3, 2, 3, 0, 0, 3,
                  0, 2, 0, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 1, 2, 3, 1], dtype=np.float32)
    expected = torch.from_numpy(a).mode()
    got = ember.tensor(a).mode()
    assert got.indices.item() == expected.indices.item() != int(np.flatnonzero(a == 2)[-1])
    assert got.values.item() == expected.values.item() == 2


def test_gradient_goes_to_pytorchs_element():
    a = np.random.default_rng(3).integers(0, 3, size=(2, 40)).astype(np.float64)
    grads = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        x.mode(1).values.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_rows_with_nan_beyond_sixteen():
    a = np.random.default_rng(4).integers(0, 3, size=(4, 30)).astype(np.float32)
    a[1, 3] = a[2, 20] = a[3, 0] = np.nan
    tv, ti = torch.from_numpy(a).mode(1)
    ev, ei = ember.tensor(a).mode(1)
    assert ei.tolist() == ti.tolist()
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
