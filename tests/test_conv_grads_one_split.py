"""A convolution's weight and input gradients computed in one split over ember's threads (``parallel_for_all``):
one hand-off to the workers instead of one per gradient, each thread a share of both. (Their values against
PyTorch's and the same bits at 1, 2 and 3 threads: ``tests/test_parallel.py``'s
``test_convolution_gemms_run_whole_on_one_openblas_thread``, whose cases cover each path.)"""

import threading

import numpy as np
import pytest

import ember
from ember import _parallel
from ember._kernels import policy


@pytest.mark.parametrize("n", [1, 2, 3])
def test_parallel_for_all_runs_every_row_of_every_kernel_once(threads, n, monkeypatch):
    monkeypatch.setattr(policy, "omp_chunks", False)  # ember's pool's named workers (under omp: numba's threads)
    ember.set_num_threads(n)
    seen = [np.zeros(rows, dtype=np.int64) for rows in (7, 40, 1)]
    names = [[] for _ in seen]

    def kernel(j):
        def run(lo, hi):
            seen[j][lo:hi] += 1
            names[j].append(threading.current_thread().name)
        return run

    _parallel.parallel_for_all(*(_parallel.Rows(kernel(j), len(s), 10**7) for j, s in enumerate(seen)))
    assert all((s == 1).all() for s in seen)
    # each of the larger kernels' rows reach every thread: a share of each per thread, not one kernel per thread
    assert len(set(names[0])) == len(set(names[1])) == min(n, 7)


def test_parallel_for_all_is_one_hand_off_and_whole_kernels_run_on_their_own(threads, monkeypatch):
    ember.set_num_threads(2)
    calls = []
    real = _parallel.parallel_for
    monkeypatch.setattr(_parallel, "parallel_for", lambda fn, rows, elements, *a: calls.append(rows) or
                        real(fn, rows, elements, *a))
    order = []
    rows = [_parallel.Rows(lambda lo, hi, j=j: order.append((j, lo, hi)), 4, 10**7) for j in range(2)]
    _parallel.parallel_for_all(*rows)
    assert calls == [8] and sorted(order) == [(0, 0, 2), (0, 2, 4), (1, 0, 2), (1, 2, 4)]
    calls.clear()
    order.clear()
    whole = _parallel.Rows(lambda lo, hi: order.append(("whole", lo, hi)), 1, 10**7, True)
    _parallel.parallel_for_all(rows[0], whole)  # as run one after the other
    assert calls == [4] and order[-1] == ("whole", 0, 1) and len(order) == 3


CASES = [
    ((32, 16, 16, 16), (16, 16, 3, 3), {"padding": 1}),               # Winograd in (N, C, H, W)
    ((32, 32, 8, 8), (32, 32, 3, 3), {"padding": 1}),                 # Winograd batch-last (narrow images)
    ((32, 16, 16, 16), (32, 16, 3, 3), {"stride": 2, "padding": 1}),  # im2col (N, C, H, W), col2im
    ((32, 16, 16, 16), (32, 16, 1, 1), {"stride": 2}),                # a ResNet's 1x1 shortcut
    ((32, 16, 16, 16), (32, 16, 4, 4), {"stride": 2, "padding": 1}),  # im2col batch-last (row GEMMs), col2im
]


@pytest.mark.parametrize("x,w,kwargs", CASES)
def test_the_gradient_products_take_one_hand_off(threads, x, w, kwargs, monkeypatch):
    """The backward's two gradients' products run under one ``parallel_for_all`` (the layout copies around them
    keep their own splits): one hand-off fewer than each gradient split on its own. (With ``policy.inter_op`` the
    batch-last im2col one runs its two gradients side by side instead: ``tests/test_conv_grads_side_by_side.py``.)"""
    from ember.nn._ops import conv

    monkeypatch.setattr(policy, "inter_op", False)
    ember.set_num_threads(2)
    ex, ew = ember.randn(*x, requires_grad=True), ember.randn(*w, requires_grad=True)
    eo = ember.nn.functional.conv2d(ex, ew, **kwargs)
    g = ember.randn(*eo.shape)
    alls = []
    real_all = _parallel.parallel_for_all
    for mod in (conv, conv.conv_nchw, conv.winograd):
        monkeypatch.setattr(mod, "parallel_for_all", lambda *rows: alls.append(rows) or real_all(*rows))
    eo.backward(g)
    assert len(alls) == 1 and len(alls[0]) == 2 and not any(r.whole for r in alls[0])
