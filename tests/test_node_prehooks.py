"""``Node.register_prehook``: a hook on a grad_fn before it runs, as PyTorch's: it sees the output gradients
after the tensors' hooks and retained gradients, may replace them, runs in registration order, is removable,
runs under ``autograd.grad`` (after the input's gradient is captured) and under ``create_graph``."""

from __future__ import annotations

import pytest
import torch

import ember
from tests.oracle import assert_close, outcomes


def _program(m, log):
    x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
    y = x * 2
    z = y.exp()
    y.register_hook(lambda g: log.append(("tensor", g.tolist())) or g + 1)
    y.retain_grad()
    y.grad_fn.register_prehook(lambda go: log.append(("pre1", [g.tolist() for g in go], type(go).__name__))
                               or (go[0] * 10,))
    y.grad_fn.register_prehook(lambda go: log.append(("pre2", [g.tolist() for g in go])))  # None: kept
    removed = y.grad_fn.register_prehook(lambda go: (go[0] * 0,))
    removed.remove()
    z.sum().backward()
    return x.grad, y.grad


def test_prehook_order_and_replacement_as_pytorchs():
    logs, outs = [], []
    for m in (ember, torch):
        log = []
        outs.append(_program(m, log))
        logs.append(log)
    assert logs[0] == logs[1], logs
    for e, t in zip(*outs):
        assert_close(e, t)


def test_prehook_on_a_leaf_accumulator_and_under_autograd_grad():
    res = []
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        y = x * 3
        y.grad_fn.register_prehook(lambda go: (go[0] * 0.5,))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: (go[0] * 5,))
        (captured,) = m.autograd.grad(y.sum(), x, retain_graph=True)  # the accumulator does not run there
        y.sum().backward()
        res.append((captured, x.grad))
    for e, t in zip(*res):
        assert_close(e, t)


def test_prehook_on_a_multi_output_node_gets_none_for_missing_gradients():
    seen = []
    for m in (ember, torch):
        a = m.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
        q, r = m.linalg.qr(a)
        got = []
        q.grad_fn.register_prehook(lambda go, got=got: got.append([g is None for g in go]))
        q.sum().backward()
        seen.append(got)
    assert seen[0] == seen[1] == [[False, True]], seen


def test_prehook_under_create_graph_is_differentiable():
    res = []
    for m in (ember, torch):
        x = m.tensor([0.3, 0.7], dtype=m.float64, requires_grad=True)
        y = x * x
        y.grad_fn.register_prehook(lambda go, x=x: (go[0] * x,))
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res.append((g, gg))
    for e, t in zip(*res):
        assert_close(e, t)


@pytest.mark.parametrize("bad", ["count", "type"])
def test_prehook_returning_the_wrong_thing_is_pytorchs_error(bad):
    def fn(m):
        x = m.ones(3, requires_grad=True)
        y = x * 2

        def hook(go):
            return (go[0], go[0]) if bad == "count" else go[0]
        y.grad_fn.register_prehook(hook)
        y.sum().backward()
    (e, _), (t, _) = outcomes(fn)
    assert type(e) is type(t) and str(e) == str(t), (e, t)


# Found by review: a pre-hook returning None for the only gradient, or another shape or dtype.
def test_prehook_taking_the_gradient_away_runs_nothing_below():
    for fw in (torch, ember):
        x = fw.randn(2, requires_grad=True)
        y = x * x
        y.grad_fn.register_prehook(lambda go: (None,))
        y.sum().backward()
        assert x.grad is None


@pytest.mark.parametrize("change, message", [(lambda g: g[:1], "has changed the size of value"),
                                             (lambda g: g.double(), r"has changed the type of value \(was "
                                                                    r"torch.FloatTensor got torch.DoubleTensor\)")])
def test_prehook_changing_shape_or_dtype_is_refused(change, message):
    for fw in (torch, ember):
        x = fw.randn(2, requires_grad=True)
        y = x * x

        def hook(go):
            return (change(go[0]),)

        y.grad_fn.register_prehook(hook)
        with pytest.raises(RuntimeError, match="hook 'hook' " + message):
            y.sum().backward()


def test_a_handle_removes_its_own_registration_once():
    """The same function registered twice: removing one handle twice leaves the other's (PyTorch's); a removed
    handle lets go of its hook."""
    import gc
    import weakref

    grads = []
    for fw in (torch, ember):
        x = fw.ones(2, requires_grad=True)
        y = x * 1

        def times_ten(g):
            return g * 10

        h1 = y.register_hook(times_ten)
        y.register_hook(times_ten)
        h1.remove()
        h1.remove()
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [10.0, 10.0]

    class Hook:
        def __call__(self, g):
            return g

    hook = Hook()
    probe = weakref.ref(hook)
    z = ember.ones(2, requires_grad=True) * 1
    handle = z.register_hook(hook)
    handle.remove()
    del hook
    gc.collect()
    assert probe() is None
