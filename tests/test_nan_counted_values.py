"""NaN as PyTorch's mode and unique count it: NaN equals nothing, so each NaN is a value of its own (a run of one
in mode, a distinct value in unique), and mode's index in a row holding NaN is the one its kernel's sort (libstdc++'s
std::sort by ``<``, which NaN breaks) leaves last in the winning run."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

NAN = float("nan")
ROWS = [[0.5, NAN, NAN, 1.0], [NAN, 0.5, 0.5, NAN, NAN], [NAN], [0.5, NAN, 0.5, NAN], [1.0, 2.0, NAN, 2.0, NAN, NAN, 1.0],
        [NAN, NAN, 3.0, 3.0], [float("inf"), NAN, float("inf"), NAN], [NAN, NAN]]


def _same(got, want):
    assert_close(got, want, atol=0, rtol=0)


@pytest.mark.parametrize("row", ROWS)
def test_mode_of_a_row_with_nan(row):
    (v, i), (tv, ti) = ember.mode(ember.tensor(row)), torch.mode(torch.tensor(row))
    _same(v, tv)
    _same(i, ti)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False)])
def test_mode_along_a_dim_with_nan(seed, dim, keepdim):
    """Rows of up to 60 elements (PyTorch's introsort partitions past 16) holding NaN, and rows of up to 16
    without."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    a = rng.integers(0, 4, (6, n)).astype(np.float32)
    a[rng.random(a.shape) < 0.3] = np.nan
    a[::2, 0] = np.nan
    if n > 16:
        a[1::2, 16:] = np.nan  # (each row past 16 elements holds NaN)
    if dim == 0:
        a = a.T.copy()
    got, want = ember.mode(ember.tensor(a), dim, keepdim), torch.mode(torch.tensor(a), dim, keepdim)
    _same(got.values, want.values)
    _same(got.indices, want.indices)


def test_mode_with_nan_in_half_precision():
    for dtype in ("float16", "bfloat16", "float64"):
        a = [[NAN, 2.0, 2.0, NAN], [1.0, NAN, 1.0, NAN]]
        got = ember.mode(ember.tensor(a, dtype=getattr(ember, dtype)))
        want = torch.mode(torch.tensor(a, dtype=getattr(torch, dtype)))
        _same(got.values.float(), want.values.float())
        _same(got.indices, want.indices)


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("sorted_", [True, False])
def test_unique_counts_each_nan(row, sorted_):
    got = ember.unique(ember.tensor(row), sorted=sorted_, return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(row), sorted=sorted_, return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


def test_unique_of_many_with_nan():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 20, 3000).astype(np.float32)
    a[rng.random(3000) < 0.3] = np.nan
    got = ember.unique(ember.tensor(a.reshape(30, 100)), return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(a.reshape(30, 100)), return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


@pytest.mark.parametrize("fn", ["unique_consecutive", "median", "nanmedian"])
@pytest.mark.parametrize("row", ROWS)
def test_relatives_with_nan(fn, row):
    if fn == "unique_consecutive":
        got = ember.unique_consecutive(ember.tensor(row), return_inverse=True, return_counts=True)
        want = torch.unique_consecutive(torch.tensor(row), return_inverse=True, return_counts=True)
    else:
        got = getattr(ember, fn)(ember.tensor(row), 0)
        want = getattr(torch, fn)(torch.tensor(row), 0)
        _same(getattr(ember, fn)(ember.tensor(row)), getattr(torch, fn)(torch.tensor(row)))
    for g, w in zip(got, want, strict=True):
        _same(g, w)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_kthvalue_among_equal_values_and_nan(seed, dtype):
    """The index among equal values (NaN among NaN) is the one PyTorch's quickselect leaves at k, not the first."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 70))
    a = rng.integers(0, 4, (5, n)).astype(np.float64)
    if dtype != "int64":
        a[rng.random(a.shape) < 0.3] = np.nan
    k = int(rng.integers(1, n + 1))
    for dim, keepdim, arr in ((1, False, a), (0, True, a.T.copy())):
        got = ember.kthvalue(ember.tensor(arr).to(getattr(ember, dtype)), k, dim, keepdim)
        want = torch.kthvalue(torch.tensor(arr).to(getattr(torch, dtype)), k, dim, keepdim)
        _same(got.values, want.values)
        _same(got.indices, want.indices)


@pytest.mark.parametrize("row", ROWS)
def test_kthvalue_of_rows_with_nan(row):
    for k in range(1, len(row) + 1):
        got, want = ember.kthvalue(ember.tensor(row), k), torch.kthvalue(torch.tensor(row), k)
        _same(got.values, want.values)
        _same(got.indices, want.indices)
