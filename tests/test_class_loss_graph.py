"""cross_entropy and nll_loss record PyTorch's graph: nll_loss one node whose one edge is the input's (the target
and the class weights are no differentiable inputs), cross_entropy its log_softmax node under that one, and label
smoothing and class-probability targets the ops PyTorch's composition records; values, gradients and second
derivatives as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, node_names

import ember

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((4, 5))
X1 = RNG.standard_normal(5)
X3 = RNG.standard_normal((2, 5, 3))
X4 = RNG.standard_normal((2, 5, 3, 2))
X5 = RNG.standard_normal((2, 5, 2, 2, 2))
T2 = np.array([0, 1, 4, 3])
T3 = RNG.integers(0, 5, (2, 3))
T4 = RNG.integers(0, 5, (2, 3, 2))
T5 = RNG.integers(0, 5, (2, 2, 2, 2))
P2 = RNG.random((4, 5))
W = RNG.random(5) + 0.5

# name -> (function, input, target, keyword arguments); an input of ``X3.T``-like layout is made by "transposed"
CASES = {
    "ce": ("cross_entropy", X2, T2, {}),
    "ce_none": ("cross_entropy", X2, T2, {"reduction": "none"}),
    "ce_weight_ignore": ("cross_entropy", X2, T2, {"weight": W, "ignore_index": 4}),
    "ce_1d": ("cross_entropy", X1, np.array(2), {}),
    "ce_3d_none": ("cross_entropy", X3, T3, {"reduction": "none"}),
    "ce_3d_sum": ("cross_entropy", X3, T3, {"reduction": "sum"}),
    "ce_4d": ("cross_entropy", X4, T4, {}),
    "ce_5d_none": ("cross_entropy", X5, T5, {"reduction": "none"}),
    "ce_smooth": ("cross_entropy", X2, T2, {"label_smoothing": 0.1}),
    "ce_smooth_sum": ("cross_entropy", X2, T2, {"label_smoothing": 0.1, "reduction": "sum"}),
    "ce_smooth_none": ("cross_entropy", X2, T2, {"label_smoothing": 0.1, "reduction": "none"}),
    "ce_smooth_weight_ignore": ("cross_entropy", X2, T2, {"label_smoothing": 0.2, "weight": W, "ignore_index": 1}),
    "ce_smooth_3d": ("cross_entropy", X3, T3, {"label_smoothing": 0.3, "weight": W}),
    "ce_probs": ("cross_entropy", X2, P2, {}),
    "ce_probs_weight": ("cross_entropy", X2, P2, {"weight": W}),
    "ce_probs_smooth_sum": ("cross_entropy", X2, P2, {"label_smoothing": 0.2, "reduction": "sum"}),
    "ce_probs_none": ("cross_entropy", X2, P2, {"reduction": "none"}),
    "ce_probs_1d_weight": ("cross_entropy", X1, P2[0], {"weight": W}),
    "nll": ("nll_loss", X2, T2, {}),
    "nll_weight_none": ("nll_loss", X2, T2, {"weight": W, "reduction": "none"}),
    "nll_1d": ("nll_loss", X1, np.array(3), {}),
    "nll_3d": ("nll_loss", X3, T3, {}),
    "nll_3d_transposed": ("nll_loss", X3, T3, {"transposed": True}),
    "nll_4d_none": ("nll_loss", X4, T4, {"reduction": "none"}),
    "nll_5d": ("nll_loss", X5, T5, {"ignore_index": 2}),
}


def _loss(m, name: str, dtype=np.float64):
    fn, x, t, kw = CASES[name]
    kw = dict(kw)
    leaf = m.tensor(np.ascontiguousarray(np.swapaxes(x, 1, 2)) if kw.pop("transposed", False) else x,
                    dtype=getattr(m, np.dtype(dtype).name), requires_grad=True)
    scores = leaf.transpose(1, 2) if leaf.ndim == 3 and CASES[name][3].get("transposed") else leaf
    if "weight" in kw:
        kw["weight"] = m.tensor(kw["weight"], dtype=leaf.dtype)
    target = m.tensor(t, dtype=leaf.dtype) if t.dtype.kind == "f" else m.tensor(t)
    return getattr(m.nn.functional, fn)(scores, target, **kw), leaf


@pytest.mark.parametrize("name", CASES)
def test_class_loss_graph_as_pytorch(name):
    (got, _), (want, _) = _loss(ember, name), _loss(torch, name)
    assert node_names(got.grad_fn, 6) == node_names(want.grad_fn, 6)


@pytest.mark.parametrize("name", CASES)
def test_class_loss_values_and_gradients_as_pytorch(name):
    (got, ex), (want, tx) = _loss(ember, name), _loss(torch, name)
    assert_close(got, want, atol=1e-12, rtol=1e-10)
    g = RNG.standard_normal(tuple(want.shape))
    got.backward(ember.tensor(g))
    want.backward(torch.tensor(g))
    assert_close(ex.grad, tx.grad, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("name", ["ce", "ce_none", "ce_4d", "ce_smooth_weight_ignore", "ce_probs_weight", "nll_3d"])
def test_class_loss_second_derivatives_as_pytorch(name):
    grads = []
    for m in (ember, torch):
        loss, x = _loss(m, name)
        (gx,) = m.autograd.grad(loss.sum(), x, create_graph=True)
        (ggx,) = m.autograd.grad((gx * m.tensor(X2 if x.shape == X2.shape else np.cos(np.arange(x.numel()))
                                              .reshape(x.shape))).sum(), x, allow_unused=True)
        grads.append((gx, ggx))
    assert_close(grads[0][0], grads[1][0], atol=1e-12, rtol=1e-10)
    if grads[1][1] is None:
        assert grads[0][1] is None or not grads[0][1].abs().sum().item()
    else:
        assert_close(grads[0][1], grads[1][1], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_gradient_through_hooks_and_shared_log_probabilities(dtype):
    """log_softmax's backward takes a shortcut for nll_loss's one-pick-per-row gradient: a tensor hook that
    changes it, a gradient summed with another use of the log-probabilities, and a retained one are all as
    PyTorch's."""
    out = []
    for m in (ember, torch):
        x = m.tensor(X2.astype(dtype), requires_grad=True)
        t = m.tensor(T2)
        logp = m.log_softmax(x, 1)
        logp.retain_grad()
        logp.register_hook(lambda g: g * 3)
        loss = m.nn.functional.nll_loss(logp, t)
        loss.backward(retain_graph=True)
        first = (x.grad.clone(), logp.grad.clone())
        x.grad = None
        (m.nn.functional.nll_loss(logp, t) + logp[:, 0].sum()).backward()
        out.append((*first, x.grad))
    for got, want in zip(*out):
        assert_close(got, want, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cross_entropy_lower_precision_as_pytorch(dtype):
    (got, ex), (want, tx) = _loss(ember, "ce", dtype), _loss(torch, "ce", dtype)
    assert_close(got, want, atol=1e-3, rtol=1e-3)
    got.backward()
    want.backward()
    assert_close(ex.grad, tx.grad, atol=1e-3, rtol=1e-3)
