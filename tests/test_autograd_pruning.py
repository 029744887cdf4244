"""autograd.grad and backward(inputs=...) run only what reaches the inputs, as PyTorch's engine does.

A node whose inputs do not all lead to a requested input runs with ``needs_input_grad`` off for the others (a
gradient penalty's input gradient takes no weight gradients); a node that reaches no requested input does not run
(its hooks do not fire: PyTorch's rule). Values, second-order gradients and hook calls are checked against
PyTorch; the flags are restored for a later backward through a retained graph.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.nn._ops.conv import ConvNd


def _critic(fw, seed: int = 0):
    """A small conv critic with LeakyReLU (float64), the same weights in both frameworks."""
    rng = np.random.default_rng(seed)
    nn = fw.nn
    net = nn.Sequential(nn.Conv2d(2, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                        nn.Conv2d(4, 6, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(6 * 4 * 4, 1))
    with fw.no_grad():
        for p in net.parameters():
            p.copy_(fw.tensor(rng.standard_normal(tuple(p.shape))))
    return net.double()


def _inputs(fw, seed: int = 1):
    rng = np.random.default_rng(seed)
    return fw.tensor(rng.standard_normal((3, 2, 8, 8)), requires_grad=True)


@pytest.fixture
def conv_flags(monkeypatch):
    """The needs_input_grad every ConvNd backward ran with."""
    seen = []
    backward = ConvNd.backward

    def spy(self, g):
        seen.append(tuple(self.needs_input_grad))
        return backward(self, g)

    monkeypatch.setattr(ConvNd, "backward", spy)
    return seen


@pytest.mark.parametrize("create_graph", [False, True])
def test_input_gradient_takes_no_weight_gradients(conv_flags, create_graph):
    net, x = _critic(ember), _inputs(ember)
    tnet, tx = _critic(torch), _inputs(torch)
    (g,) = ember.autograd.grad(net(x).sum(), x, create_graph=create_graph)
    (tg,) = torch.autograd.grad(tnet(tx).sum(), tx, create_graph=create_graph)
    assert_close(g, tg)
    assert conv_flags == [(True, False, False)] * 2  # x's gradient only: no weight or bias gradient
    assert all(p.grad is None for p in net.parameters())


def test_gradient_penalty_second_order_matches_torch():
    """The WGAN-GP penalty: its input gradient (pruned) recorded, then differentiated into every weight."""
    grads = []
    for fw in (ember, torch):
        net, x = _critic(fw), _inputs(fw)
        (g,) = fw.autograd.grad(net(x), x, fw.ones_like(net(x)), create_graph=True)
        penalty = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        (penalty + net(x.detach()).mean()).backward()
        grads.append([p.grad for p in net.parameters()])
    for a, b in zip(*grads):
        assert_close(a, b)


def test_backward_inputs_accumulates_only_the_inputs(conv_flags):
    net, x = _critic(ember), _inputs(ember)
    tnet, tx = _critic(torch), _inputs(torch)
    w, tw = net[2].weight, tnet[2].weight
    net(x).sum().backward(inputs=[w])
    tnet(tx).sum().backward(inputs=[tw])
    assert_close(w.grad, tw.grad)
    assert x.grad is None and all(p.grad is None for p in net.parameters() if p is not w)
    assert conv_flags == [(False, True, False)]  # the first conv leads to no input: it does not run


def test_hooks_of_branches_that_reach_no_input_do_not_fire():
    calls = {}
    for fw in (ember, torch):
        rng = np.random.default_rng(3)
        x = fw.tensor(rng.standard_normal(4), requires_grad=True)
        w = fw.tensor(rng.standard_normal(4), requires_grad=True)
        a, b = x * 2, w * 3  # b reaches w only
        fired: list[str] = []
        a.register_hook(lambda g, fired=fired: fired.append("a"))
        b.register_hook(lambda g, fired=fired: fired.append("b"))
        (gx,) = fw.autograd.grad((a * b).sum(), x)
        calls[fw.__name__] = (fired, gx.detach().numpy())
    assert calls["ember"][0] == calls["torch"][0] == ["a"]
    np.testing.assert_allclose(calls["ember"][1], calls["torch"][1])


def test_flags_are_restored_for_a_later_backward_through_the_retained_graph(conv_flags):
    net, x = _critic(ember), _inputs(ember)
    tnet, tx = _critic(torch), _inputs(torch)
    out, tout = net(x).sum(), tnet(tx).sum()
    (g,) = ember.autograd.grad(out, x, retain_graph=True)
    (tg,) = torch.autograd.grad(tout, tx, retain_graph=True)
    out.backward()
    tout.backward()
    assert_close(g, tg)
    assert conv_flags[2:] == [(True, True, True)] * 2
    for p, tp in zip(net.parameters(), tnet.parameters()):
        assert_close(p.grad, tp.grad)


def test_custom_function_outputs_for_unneeded_inputs_are_dropped():
    """A Function returns gradients for all its inputs; those that reach no requested input go nowhere."""
    class Mul(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    (ga,) = ember.autograd.grad(Mul.apply(a, b * 1).sum(), a)
    np.testing.assert_array_equal(ga.numpy(), [3.0, 4.0])
    assert b.grad is None


def test_an_unrolled_loop_walks_only_the_newest_step(monkeypatch):
    """A gradient taken at every step of an unrolled loop that keeps its graph (``create_graph``, learning a learning
    rate through SGD steps) walks the nodes above the input, not the whole history under it (PyTorch's
    ``topological_nr`` cut): the walk's size stays the same from step to step, where it grew with every step (the
    loop's time quadratic in its length). Values against PyTorch, the hypergradient through all steps included."""
    from ember.autograd import engine

    walked = []
    count = engine._count_dependencies

    def counted(*args):
        deps = count(*args)
        walked.append(len(deps))
        return deps

    monkeypatch.setattr(engine, "_count_dependencies", counted)
    rng = np.random.default_rng(0)
    x, w0 = rng.standard_normal((8, 5)), rng.standard_normal(5)
    results = {}
    for fw in (ember, torch):
        lr = fw.tensor(0.1, dtype=fw.float64, requires_grad=True)
        w = fw.tensor(w0, requires_grad=True) * 1
        xt, losses = fw.tensor(x), []
        for _ in range(12):
            loss = fw.tanh(xt @ w).square().mean()
            (g,) = fw.autograd.grad(loss, w, create_graph=True)
            w = w - lr * g
            losses.append(loss)
        (hyper,) = fw.autograd.grad(fw.stack(losses).sum(), lr)
        results[fw.__name__] = [t.detach().numpy() for t in (*losses, hyper)]
    steps = walked[:12]
    assert steps[3:] == [steps[3]] * 9 and steps[3] < 12, steps
    assert walked[12] > 12 * steps[3]  # (the hypergradient walks the whole graph)
    for a, e in zip(results["ember"], results["torch"]):
        np.testing.assert_allclose(a, e, rtol=1e-12)


def test_inputs_at_different_depths_and_hooks_under_them():
    """Two inputs, one under the other: both gradients, the node hooks between them fire, those under the deeper
    input do not (nothing there is walked), as PyTorch's."""
    calls = {}
    for fw in (ember, torch):
        fired = []
        x = fw.tensor([1.0, 2.0, 3.0], dtype=fw.float64, requires_grad=True)
        deep = fw.exp(x * 2)
        mid = fw.sin(deep) * deep
        top = (mid.square() + deep).sum()
        for name, t in (("x2", deep.grad_fn.next_functions[0][0]), ("deep", deep.grad_fn), ("mid", mid.grad_fn)):
            t.register_prehook(lambda g, name=name, fired=fired: fired.append(name))
        grads = fw.autograd.grad(top, [mid, deep])
        calls[fw.__name__] = (fired, [g.numpy() for g in grads])
    assert calls["ember"][0] == calls["torch"][0]
    for a, e in zip(calls["ember"][1], calls["torch"][1]):
        np.testing.assert_allclose(a, e, rtol=1e-12)
