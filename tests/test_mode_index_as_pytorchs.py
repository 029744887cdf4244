"""``mode``'s index among equal values as PyTorch's CPU kernel gives it: the row's (value, index) pairs sorted by
value with libstdc++'s ``std::sort``, the last pair of the mode's run taken. Up to 16 elements that is the last
occurrence (insertion sort, stable); beyond, introsort's partitions reorder equal values, and ember runs the same
sort (the index is deterministic, not the last occurrence)."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels import mode as compiled_mode
from ember._kernels.policy import policy
from ember.ops import statistics


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


def _grid():
    """Rows of 1 to 1000 elements, one value to many (ties everywhere), in every dtype mode accepts; the float rows
    with NaN, +-inf and -0.0 among them."""
    rng = np.random.default_rng(11)
    for n in (1, 2, 16, 17, 18, 33, 100, 257, 1000):
        for levels in (1, 2, 3, 40):
            for dtype in ("float64", "float32", "int64", "int32", "int16", "int8", "uint8", "bool"):
                a = rng.integers(0, levels, size=(5, n)).astype(dtype)
                if a.dtype.kind == "f":
                    for value, share in ((np.nan, 0.1), (np.inf, 0.05), (-np.inf, 0.05), (-0.0, 0.05)):
                        a[rng.random(a.shape) < share] = value
                yield a


@pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")
def test_compiled_sort_is_the_reference():
    """The compiled kernel (ember._kernels.mode) gives the Python reference's index on every row, and both give
    PyTorch's."""
    for a in _grid():
        wide = np.ascontiguousarray(a, dtype=np.float64 if a.dtype.kind == "f" else np.int64)
        out = np.full(len(a), -1, np.int64)
        compiled_mode.mode_indices(wide, np.arange(len(a)), out)
        reference = [statistics._mode_index(row.tolist()) for row in wide]
        assert out.tolist() == reference, (a.dtype, a.shape)
        assert torch.from_numpy(a).mode(1).indices.tolist() == reference, (a.dtype, a.shape)


@pytest.mark.parametrize("compiled", [False, True])
def test_either_path_is_pytorchs(compiled):
    """mode itself on either path (the compiled kernel from any size here), in every dtype, along both dims."""
    if compiled and not policy.use_compiled():
        pytest.skip("numba is not installed (or EMBER_KERNELS=numpy)")
    with policy.override(compiled=compiled, min_compiled_elements=0):
        for a in _grid():
            for dim in (0, 1):
                tv, ti = torch.from_numpy(a).mode(dim)
                ev, ei = ember.tensor(a).mode(dim)
                assert ei.tolist() == ti.tolist(), (a.dtype, a.shape, dim)
                np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    for half in ("float16", "bfloat16"):
        a = np.random.default_rng(5).integers(0, 4, size=(3, 60)).astype(np.float32)
        a[0, 7] = np.nan
        t = torch.from_numpy(a).to(getattr(torch, half))
        e = ember.tensor(a).to(getattr(ember, half))
        with policy.override(compiled=compiled, min_compiled_elements=0):
            assert e.mode(1).indices.tolist() == t.mode(1).indices.tolist()


def test_complex_is_refused_as_pytorch():
    """PyTorch's mode has no complex kernel (beyond 16 elements ember's sort raised TypeError, below it answered)."""
    for n in (5, 30):
        with pytest.raises(NotImplementedError) as expected:
            torch.zeros(2, n, dtype=torch.complex64).mode()
        with pytest.raises(NotImplementedError) as got:
            ember.zeros(2, n, dtype=ember.complex64).mode()
        assert str(got.value) == str(expected.value)
    assert ember.zeros(0, 3, dtype=ember.complex128).mode(1).values.shape == (0,)
    assert ember.zeros((), dtype=ember.complex64).mode().indices.item() == 0
