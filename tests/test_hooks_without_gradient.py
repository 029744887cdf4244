"""Hooks of a node reached without a gradient, as PyTorch's engine runs every node it reaches: below a custom
Function whose backward returns None, the nodes still run (no formula), their tensor hooks, node pre- and
post-hooks and a leaf's hooks fire with None, ``.grad`` stays None and saved tensors changed in place still
raise; an output of a multi-output node (``linalg.qr``) that got no gradient calls its hooks with None, and a
hook cannot replace a None gradient by a tensor."""

from __future__ import annotations

import torch

import ember
from tests.oracle import outcomes


def _shape(g):
    return None if g is None else tuple(g.shape)


def _none_function(m):
    class Drop(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    return Drop


def _below_none(m):
    log = []
    x = m.ones(3, requires_grad=True)
    x.register_hook(lambda g: log.append(("leaf", _shape(g))))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post-accumulate", _shape(t.grad))))
    y = x * 3
    z = y.exp()
    y.register_hook(lambda g: log.append(("y", _shape(g))))
    z.grad_fn.register_prehook(lambda go: log.append(("node pre", [_shape(g) for g in go])))
    z.grad_fn.register_hook(lambda gi, go: log.append(("node post", [_shape(g) for g in gi],
                                                        [_shape(g) for g in go])))
    z.retain_grad()
    _none_function(m).apply(z).sum().backward()
    return log, x.grad, z.grad


def test_hooks_below_a_none_gradient_fire_with_none_as_pytorchs():
    e, t = _below_none(ember), _below_none(torch)
    assert e == t, (e, t)
    assert t[0] == [("node pre", [None]), ("node post", [None], [None]), ("y", None), ("leaf", None),
                    ("post-accumulate", None)]


def _qr_hooks(m):
    log = []
    m.manual_seed(0)
    a = m.randn(3, 3, dtype=m.float64, requires_grad=True)
    q, r = m.linalg.qr(a)
    q.register_hook(lambda g: log.append(("q", _shape(g))))
    r.register_hook(lambda g: log.append(("r", _shape(g))))
    r.sum().backward()
    return log


def test_output_without_gradient_of_a_multi_output_node_calls_its_hooks_with_none():
    assert _qr_hooks(ember) == _qr_hooks(torch) == [("q", None), ("r", (3, 3))]


def _replace_none(m):
    a = m.randn(3, 3, dtype=m.float64, requires_grad=True)
    q, r = m.linalg.qr(a)
    q.register_hook(lambda g: m.ones(3, 3, dtype=m.float64) if g is None else None)
    r.sum().backward()


def _raised(fn):
    return [(type(r).__name__, str(r), w) for r, w in outcomes(fn)]


def test_a_hook_cannot_replace_a_none_gradient():
    e, t = _raised(_replace_none)
    assert e == t and t[:2] == ("RuntimeError", "can't replace a None gradient with a non-None value"), (e, t)


def _saved_changed_below_none(m):
    x = m.ones(3, requires_grad=True)
    b = (x * 1).exp()  # saves its result
    out = _none_function(m).apply(b)
    b.add_(1)
    out.sum().backward()


def test_saved_tensor_changed_in_place_raises_below_a_none_gradient():
    e, t = _raised(_saved_changed_below_none)
    assert e[0] == t[0] == "RuntimeError" and e[2] == t[2] == [], (e, t)
    assert "modified by an inplace operation" in e[1] and "modified by an inplace operation" in t[1]


def _grad_of_unneeded(m):
    log = []
    x = m.ones(3, requires_grad=True)
    w = m.ones(3, requires_grad=True)
    y = x * 2
    z = _none_function(m).apply(w * 3)
    w.register_hook(lambda g: log.append(("w", _shape(g))))
    (g,) = m.autograd.grad((y + z).sum(), x)
    return log, g.tolist()


def test_autograd_grad_skips_nodes_it_does_not_need():
    assert _grad_of_unneeded(ember) == _grad_of_unneeded(torch) == ([], [2.0, 2.0, 2.0])
