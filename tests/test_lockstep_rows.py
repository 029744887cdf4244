"""The lockstep rows that ride DDP's bucket all-reduce (ember/distributed/lockstep.py), without MPI."""

import numpy as np
import pytest

from ember.distributed import lockstep


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nonfinite_scan(dtype):
    g = np.random.default_rng(0).standard_normal(1000).astype(dtype)
    assert not lockstep.has_nonfinite(g)
    for bad in (np.nan, np.inf, -np.inf):
        h = g.copy()
        h[537] = bad
        assert lockstep.has_nonfinite(h)
    huge = np.full(1000, np.finfo(dtype).max / 2, dtype=dtype)  # finite, but its sum of squares overflows
    assert not lockstep.has_nonfinite(huge)


def summed(rows):
    """What every rank holds after the SUM all-reduce of the per-rank tables."""
    tables = []
    for rank, (iteration, bucket, layout, bad) in enumerate(rows):
        t = np.empty((len(rows), lockstep.FIELDS), dtype=np.float32)
        lockstep.stamp(t, rank, iteration, bucket, layout, bad)
        tables.append(t)
    return sum(tables)


def test_ranks_in_step_and_nonfinite_ranks():
    table = summed([(7, 0, 99, False), (7, 0, 99, True), (7, 0, 99, True)])
    assert lockstep.out_of_step(table, 0) is None
    assert lockstep.nonfinite_ranks(table) == [1, 2]


def test_a_rank_ahead_is_named_as_the_one_that_skipped_backward():
    message = lockstep.out_of_step(summed([(5, 0, 99, False), (6, 0, 99, False), (5, 0, 99, False)]), 0)
    assert "rank(s) [0, 2] at iteration 5; rank(s) [1] at iteration 6" in message
    assert "Rank(s) [1] ran a DDP forward without the synchronised backward" in message


def test_different_buckets_are_reported():
    message = lockstep.out_of_step(summed([(5, 0, 99, False), (5, 0, 12, False)]), 0)
    assert "disagree on gradient bucket 0" in message and "models or bucket_cap_mb differ" in message


def test_iterations_wrap_exactly_in_float32():
    table = summed([(2**24 + 3, 1, 5, False), (2**24 + 3, 1, 5, False)])
    assert lockstep.out_of_step(table, 1) is None
    assert table[0, 0] == 3
