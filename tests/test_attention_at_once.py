"""Attention's forward and backward each as one split over ember's threads (``policy.attention_at_once``:
``_forward_at_once``, ``_backward_at_once`` in ``nn/_ops/attention.py``): the bits of the stacked products one at a
time, PyTorch's values and gradients, one hand-off each, and the cases that keep the products one at a time."""

import threading

import numpy as np
import pytest
import torch

import ember
from ember._kernels.policy import policy
from ember.nn._ops import attention as attention_op

pytestmark = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")

SPLIT = {"min_parallel_elements": 1 << 10}  # (these small inputs split at two threads)


def _run(fw, arrays, g, **kwargs):
    """SDPA of (B, T, H, D) projections viewed as (B, H, T, D), as a transformer block calls it: output and the
    three gradients."""
    ts = [fw.tensor(a, requires_grad=True) for a in arrays]
    y = fw.nn.functional.scaled_dot_product_attention(*(t.transpose(1, 2) for t in ts), **kwargs)
    y.backward(fw.tensor(g))
    return [y.detach().numpy().copy()] + [t.grad.numpy().copy() for t in ts]


def _inputs(b, t, h, d, seed=0, s=None):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, t, h, d)).astype(np.float32)
    k, v = (rng.standard_normal((b, s or t, h, d)).astype(np.float32) for _ in range(2))
    return [q, k, v], rng.standard_normal((b, h, t, d)).astype(np.float32)


def _spied(monkeypatch):
    """The threads that ran each at-once split's chunks, per call."""
    calls = {"forward": [], "backward": []}
    parallel_for = attention_op.parallel_for

    def spy(kind):
        def split(fn, rows, elements, *args):
            seen = set()
            calls[kind].append(seen)

            def run(lo, hi):
                seen.add(threading.get_ident())
                fn(lo, hi)
            parallel_for(run, rows, elements, *args)
        return split

    for kind in calls:
        real = getattr(attention_op, f"_{kind}_at_once")

        def wrapped(*args, real=real, kind=kind):
            monkeypatch.setattr(attention_op, "parallel_for", spy(kind))
            try:
                return real(*args)
            finally:
                monkeypatch.setattr(attention_op, "parallel_for", parallel_for)
        monkeypatch.setattr(attention_op, f"_{kind}_at_once", wrapped)
    return calls


@pytest.mark.parametrize("kwargs, shape", [({"is_causal": True}, (6, 16, 3, 8, None)), ({}, (5, 12, 2, 16, None)),
                                           ({"scale": 0.3}, (4, 9, 2, 8, 11)),
                                           ({"is_causal": True, "scale": 2.0}, (3, 7, 4, 4, None))])
def test_at_once_gives_the_bits_of_the_products_one_at_a_time_and_torchs_values(kwargs, shape, threads,
                                                                                 monkeypatch):
    b, t, h, d, s = shape
    arrays, g = _inputs(b, t, h, d, s=s)
    ember.set_num_threads(2)
    calls = _spied(monkeypatch)
    with policy.override(**SPLIT, attention_at_once=False):
        want = _run(ember, arrays, g, **kwargs)
    assert calls == {"forward": [], "backward": []}
    with policy.override(**SPLIT, attention_at_once=True):
        got = _run(ember, arrays, g, **kwargs)
    # one split forward, one backward, each on two threads
    assert [len(seen) for seen in calls["forward"]] == [2] and [len(seen) for seen in calls["backward"]] == [2]
    expected = _run(torch, arrays, g, **kwargs)
    for name, a, w, e in zip(("output", "q grad", "k grad", "v grad"), got, want, expected):
        np.testing.assert_array_equal(a, w, err_msg=name)
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=2e-5, err_msg=name)


def test_one_thread_masks_dropout_and_shared_heads(threads, monkeypatch):
    """At one thread nothing splits; a mask keeps the forward's products one at a time (its backward, which reads
    only the probabilities, splits), dropout both; shared key / value heads (grouped-query attention) split the
    forward on the repeated heads and keep the backward's products, whose head groups are summed."""
    arrays, g = _inputs(4, 8, 2, 8)
    calls = _spied(monkeypatch)

    def taken():
        seen = {kind: len(c) for kind, c in calls.items()}
        for c in calls.values():
            c.clear()
        return seen

    ember.set_num_threads(1)
    with policy.override(**SPLIT):
        _run(ember, arrays, g, is_causal=True)
    assert taken() == {"forward": 0, "backward": 0}
    ember.set_num_threads(2)
    mask = np.tril(np.ones((8, 8), bool))
    with policy.override(**SPLIT):
        got = _run(ember, arrays, g, attn_mask=ember.tensor(mask))
        assert taken() == {"forward": 0, "backward": 1}
        want = _run(torch, arrays, g, attn_mask=torch.tensor(mask))
        ember.manual_seed(0)
        _run(ember, arrays, g, dropout_p=0.5)
        assert taken() == {"forward": 0, "backward": 0}
        # grouped-query attention: two query heads share each key / value head
        q = np.concatenate([arrays[0], arrays[0][:, :, ::-1]], axis=2)
        gq = np.concatenate([g, g[:, ::-1]], axis=1)
        got_gqa = _run(ember, [q, arrays[1], arrays[2]], gq, enable_gqa=True)
        assert taken() == {"forward": 1, "backward": 0}
        want_gqa = _run(torch, [q, arrays[1], arrays[2]], gq, enable_gqa=True)
    for a, e in zip(got + got_gqa, want + want_gqa):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=2e-5)


def test_only_some_gradients_needed_take_the_products_one_at_a_time(threads, monkeypatch):
    """The backward's split computes all three gradients: where one is not needed, the products one at a time."""
    arrays, g = _inputs(4, 8, 2, 8)
    calls = _spied(monkeypatch)
    ember.set_num_threads(2)
    with policy.override(**SPLIT):
        q, k, v = (ember.tensor(a, requires_grad=i != 2) for i, a in enumerate(arrays))
        y = ember.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                             v.transpose(1, 2), is_causal=True)
        y.backward(ember.tensor(g))
    assert len(calls["forward"]) == 1 and calls["backward"] == []
    qt, kt, vt = (torch.tensor(a, requires_grad=i != 2) for i, a in enumerate(arrays))
    torch.nn.functional.scaled_dot_product_attention(qt.transpose(1, 2), kt.transpose(1, 2), vt.transpose(1, 2),
                                                     is_causal=True).backward(torch.tensor(g))
    np.testing.assert_allclose(q.grad.numpy(), qt.grad.numpy(), rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(k.grad.numpy(), kt.grad.numpy(), rtol=1e-4, atol=2e-5)
