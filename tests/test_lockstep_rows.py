"""The lockstep table that rides behind DDP's bucket all-reduces (ember/distributed/lockstep.py), without MPI."""

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
    for rank, (iteration, buckets, layout, bad) in enumerate(rows):
        t = lockstep.new_table(len(rows))
        t[...] = 12345  # stale values from the last backward: stamp must clear them
        lockstep.stamp(t, rank, iteration, buckets, layout, bad)
        tables.append(t)
    return sum(tables)


def test_ranks_in_step_and_nonfinite_ranks():
    table = summed([(7, 2, 99, False), (7, 2, 99, True), (7, 2, 99, True)])
    assert lockstep.out_of_step(table) is None
    assert lockstep.nonfinite_ranks(table) == [1, 2]


def test_a_rank_ahead_is_named_as_the_one_that_skipped_backward():
    message = lockstep.out_of_step(summed([(5, 2, 99, False), (6, 2, 99, False), (5, 2, 99, False)]))
    assert "rank(s) [0, 2] at iteration 5; rank(s) [1] at iteration 6" in message
    assert "Rank(s) [1] ran a DDP forward without the synchronised backward" in message


@pytest.mark.parametrize("other", [(5, 3, 99, False), (5, 2, 12, False)])
def test_different_buckets_are_reported(other):
    message = lockstep.out_of_step(summed([(5, 2, 99, False), other]))
    assert "disagree on the gradient buckets" in message and "models, bucket_cap_mb or find_unused_parameters differ" in message
    assert f"rank(s) [1]: {other[1]} bucket(s), layout {other[2]}" in message


def test_layout_hash_tells_bucket_layouts_apart():
    one = lockstep.layout_hash([([(3, 4), (4,)], "float32")])
    assert one == lockstep.layout_hash([([(3, 4), (4,)], "float32")])
    for other in ([([(4, 3), (4,)], "float32")], [([(3, 4), (4,)], "float64")], [([(3, 4)], "float32"), ([(4,)], "float32")]):
        assert lockstep.layout_hash(other) != one


def test_large_counters_stay_exact():
    table = summed([(2**40 + 3, 1, 2**31 + 5, False), (2**40 + 3, 1, 2**31 + 5, False)])
    assert lockstep.out_of_step(table) is None
    assert table[0, 0] == 2**40 + 3
