"""A vmap example (ember's BatchedTensor) that outlives its vmap, kept by a caught exception's traceback or by the
user, leaves no trace: the later tensor operations that search the heap for the tensors sharing a storage (a growing
``resize_``, an ``out=`` that grows, ``share_memory_``) skip it, as it has no storage of its own. They read its
``_data``, which refuses outside a batching rule, and failed with vmap's in-place error long after the vmap ended."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def _caught_inside_vmap(m):
    """The exception raised inside a vmapped function, caught: its frames keep the examples alive."""
    try:
        m.func.vmap(lambda t: m.cat(t, dim=0))(m.ones(2, 3, 4))
    except TypeError as err:
        return err
    raise AssertionError("the vmapped cat of a tensor was taken")


def _kept_by_the_user(m):
    kept = []
    m.func.vmap(lambda t: kept.append(t) or t * 2)(m.ones(2, 3))
    return kept


GROWING = {
    "out= that grows": lambda m: m.arange(4, out=m.empty(3)),
    "resize_ that grows": lambda m: m.arange(3.0).resize_(5)[:3],
    "share_memory_": lambda m: m.arange(3.0).share_memory_(),
    "a view of a grown tensor": lambda m: (lambda x: (x.resize_(6), x)[1][:2] + 1)(m.ones(2)),
}


@pytest.mark.parametrize("keep", [_caught_inside_vmap, _kept_by_the_user], ids=["traceback", "user"])
@pytest.mark.parametrize("op", GROWING)
def test_an_example_kept_after_its_vmap_does_not_break_storage_moves(keep, op):
    results = []
    for m in (ember, torch):
        kept = keep(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the resized out='s warning, which test_user38 checks)
            results.append(GROWING[op](m))
        assert kept is not None
    assert_close(results[0], results[1])


def test_inside_vmap_a_growing_resize_of_an_unbatched_tensor_is_taken():
    def run(m):
        buf = m.zeros(1)

        def f(t):
            buf.resize_(4).fill_(1.0)
            return t + 1

        out = m.func.vmap(f)(m.ones(2, 3))
        return out, buf

    (eo, eb), (to, tb) = run(ember), run(torch)
    assert_close(eo, to)
    assert_close(eb, tb)
    assert np.all(eb.numpy() == 1.0)
