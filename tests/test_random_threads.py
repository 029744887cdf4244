"""Two threads drawing from one generator get PyTorch's numbers for one draw after the other.

PyTorch's CPU kernels hold the generator's mutex for a whole draw. ember's draws read the generator in several
steps (a normal block's ragged tail, the cached second Box-Muller sample, multinomial's rows), so each holds the
generator's lock. The tests below start a second thread's draw in the middle of the first one (at its k-th read of
the mt19937 words) and wait for it: with the lock, the second draw waits for the first to finish, so both threads'
numbers and the generator's state after are those of the two draws run one after the other, as PyTorch's.
"""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest
import torch

import ember

SEED = 1234


def _draw_both_with_intrusion(g, read: str, at: int, first, second):
    """Run ``first(g)`` in this thread; at its ``at``-th call of ``g.<read>`` start ``second(g)`` in another thread
    and give it up to 0.5 s to finish before reading on (without the lock it finishes inside ``first``; with it,
    it waits). Returns both results."""
    real = getattr(g, read)
    calls = {"n": 0}
    results = {}
    thread = threading.Thread(target=lambda: results.setdefault("second", second(g)), daemon=True)
    done = threading.Event()

    def hooked(n, *out):
        calls["n"] += 1
        if calls["n"] == at and threading.current_thread() is threading.main_thread():
            thread.start()
            done.wait(0.5)
        return real(n, *out)

    setattr(g, read, hooked)  # an instance attribute: only this generator, only this test
    try:
        results["first"] = first(g)
        thread.join(30)
        assert not thread.is_alive(), "the second draw did not finish"
    finally:
        delattr(g, read)
    return results["first"], results["second"]


def _cached_normal(g):
    ember.randn(1, generator=g, dtype=ember.float64)  # leaves the second sample of a pair cached
    return g


def _torch_cached_normal(g):
    torch.randn(1, generator=g, dtype=torch.float64)
    return g


CASES = {
    # the cached normal is taken before the pair is drawn: a draw in between must not take it too
    "scalar_normal_cache": (
        "unit64", 1, _cached_normal, _torch_cached_normal,
        lambda lib, g: lib.randn(3, generator=g, dtype=lib.float64),
        lambda lib, g: lib.randn(2, generator=g, dtype=lib.float64)),
    # a ragged block: 16 fresh uniforms for the tail are read after the body's (a second read from the compiled
    # kernels' size on; fewer values read the body's and the tail's at once)
    "normal_block_tail": (
        "unit32", 2, lambda g: g, lambda g: g,
        lambda lib, g: lib.randn(16390, generator=g),
        lambda lib, g: lib.rand(5, generator=g)),
    # multinomial with replacement reads one row's uniforms after the other
    "multinomial_rows": (
        "unit64", 2, lambda g: g, lambda g: g,
        lambda lib, g: lib.multinomial(lib.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 1.0]]), 4, True, generator=g),
        lambda lib, g: lib.randint(0, 100, (6,), generator=g)),
    # log_normal_ goes through the scalar normal path and its cache
    "log_normal_cache": (
        "unit64", 1, _cached_normal, _torch_cached_normal,
        lambda lib, g: lib.empty(3, dtype=lib.float64).log_normal_(generator=g),
        lambda lib, g: lib.empty(1, dtype=lib.float64).normal_(generator=g)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_draw_from_another_thread_waits_for_the_one_under_way(case):
    read, at, prepare, torch_prepare, first, second = CASES[case]
    g = prepare(ember.Generator().manual_seed(SEED))
    got_first, got_second = _draw_both_with_intrusion(g, read, at, lambda g: first(ember, g),
                                                      lambda g: second(ember, g))

    tg = torch_prepare(torch.Generator().manual_seed(SEED))
    want_first, want_second = first(torch, tg), second(torch, tg)  # one after the other
    np.testing.assert_array_equal(got_first.numpy(), want_first.numpy())
    np.testing.assert_array_equal(got_second.numpy(), want_second.numpy())
    np.testing.assert_array_equal(g.get_state().numpy(), tg.get_state().numpy())


def test_generator_pickles_and_copies_with_its_state():
    g = ember.Generator().manual_seed(SEED)
    ember.randn(3, generator=g, dtype=ember.float64)  # a cached normal, part of the state
    for duplicate in (lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy):
        h = duplicate(g)
        np.testing.assert_array_equal(h.get_state().numpy(), g.get_state().numpy())
        assert h.lock is not g.lock
        np.testing.assert_array_equal(ember.randn(5, generator=h).numpy(), ember.randn(5, generator=g).numpy())


def _draw_inside_a_compiled_draw(g, first, second):
    """Run ``first(g)`` (a compiled draw) in this thread; between its read of the mt19937 state and its write of the
    state moved on, start ``second(g)`` in another thread and give it up to 0.5 s. Returns both results."""
    real = g.compiled_draw
    results = {}
    thread = threading.Thread(target=lambda: results.setdefault("second", second(g)), daemon=True)

    def hooked(kernel, out, *args):
        def kernel_after_the_intrusion(*kernel_args):
            if not thread.is_alive() and "second" not in results:
                thread.start()
                thread.join(0.5)
            return kernel(*kernel_args)
        return real(kernel_after_the_intrusion, out, *args)

    g.compiled_draw = hooked
    try:
        results["first"] = first(g)
        thread.join(30)
        assert not thread.is_alive(), "the second draw did not finish"
    finally:
        del g.compiled_draw
    return results["first"], results["second"]


NUMPY_ALGORITHM_DRAWS = {  # the draws that keep ember's own algorithm (NumPy's generator on the same mt19937)
    "binomial": lambda g: ember.binomial(ember.full((50,), 40.0), ember.full((50,), 0.3), generator=g),
    "distributions.Binomial": lambda g: ember.distributions.Binomial(40, ember.full((50,), 0.3)).sample(),
    "distributions.Multinomial": lambda g: ember.distributions.Multinomial(30, ember.ones(4, 6)).sample(),
}


@pytest.mark.parametrize("name", sorted(NUMPY_ALGORITHM_DRAWS))
def test_a_numpy_algorithm_draw_waits_for_a_compiled_draw_under_way(name):
    from ember._kernels.policy import policy

    if not policy.use_compiled():
        pytest.skip("numba's compiled kernels are not available")
    second = NUMPY_ALGORITHM_DRAWS[name]
    uses_global = name.startswith("distributions")
    with policy.override(compiled=True, min_compiled_elements=1, min_compiled_draw=1):
        g = ember.default_generator if uses_global else ember.Generator()
        saved = g.get_state()
        try:
            g.manual_seed(SEED)
            got_first, got_second = _draw_inside_a_compiled_draw(g, lambda g: ember.rand(3000, generator=g), second)
            after = g.get_state().numpy()
            g.manual_seed(SEED)  # one after the other: the numbers the two threads must get
            want_first, want_second = ember.rand(3000, generator=g), second(g)
            np.testing.assert_array_equal(got_first.numpy(), want_first.numpy())
            np.testing.assert_array_equal(got_second.numpy(), want_second.numpy())
            np.testing.assert_array_equal(after, g.get_state().numpy())
        finally:
            g.set_state(saved)
