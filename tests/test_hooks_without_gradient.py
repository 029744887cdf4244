"""Hooks of a node reached without a gradient, as PyTorch's engine runs every node it reaches: below a custom
Function whose backward returns None, the nodes still run (no formula), their tensor hooks, node pre- and
post-hooks and a leaf's hooks fire with None, ``.grad`` stays None and saved tensors changed in place still
raise; an output of a multi-output node (``linalg.qr``) that got no gradient calls its hooks with None, and a
hook cannot replace a None gradient by a tensor. split, chunk and unbind record one node for all their pieces, as
PyTorch does, so an unused piece is such an output."""

from __future__ import annotations

import pytest
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


# split / chunk / unbind: one node for all the pieces, as PyTorch's (SplitBackward0, SplitWithSizesBackward0,
# UnbindBackward0), so an unused piece's hooks fire with None, its retained .grad stays None, and the input's
# gradient has zeros where the unused pieces were
PIECES = {
    "split": lambda t: t.split(2, 1), "split_sizes": lambda t: t.split([1, 3], 1), "chunk": lambda t: t.chunk(2, 1),
    "unbind": lambda t: t.unbind(0), "unbind_1": lambda t: t.unbind(1), "unbind to 0-d": lambda t: t[0].unbind(),
}


@pytest.mark.parametrize("op", list(PIECES))
def test_pieces_share_one_node_and_unused_pieces_call_their_hooks_with_none(op):
    got = []
    for m in (torch, ember):
        x = m.arange(12.0).reshape(3, 4).requires_grad_()
        pieces = PIECES[op](x * 1)
        node = pieces[0].grad_fn
        seen = [node.name(), all(p.grad_fn is node for p in pieces),
                [f.name() for f, _ in node.next_functions]]
        calls = []
        for i, p in enumerate(pieces):
            p.register_hook(lambda g, i=i, calls=calls: calls.append((i, _shape(g))))
        pieces[0].retain_grad()
        (pieces[-1] * 3).sum().backward()
        got.append((seen, calls, pieces[0].grad, x.grad.tolist()))
    assert got[1] == got[0]


def test_pieces_second_order_as_pytorchs():
    got = []
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=m.float64, requires_grad=True)
        a, b, c = (x ** 3).split([2, 2, 1])
        (g,) = m.autograd.grad((a * b).sum() + c.sum() ** 2, x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        got.append((g.tolist(), gg.tolist()))
    assert got[1] == got[0]


@pytest.mark.parametrize("op", ["split", "chunk", "unbind"])
def test_pieces_of_a_parameter_share_one_node(op):
    """A Parameter's pieces (``in_proj_weight.chunk(3)``) are one node's outputs too, as PyTorch's."""
    got = []
    for m in (torch, ember):
        w = m.nn.Parameter(m.arange(12.0).reshape(4, 3))
        pieces = PIECES[op](w)
        node = pieces[0].grad_fn
        seen = []
        pieces[0].register_hook(lambda g, seen=seen: seen.append(_shape(g)))
        pieces[-1].sum().backward()
        got.append((node.name(), all(p.grad_fn is node for p in pieces), seen, w.grad.tolist()))
    assert got[0] == got[1]
