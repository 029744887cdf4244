"""Second-order gradients through vmap(grad(f)) of layers whose weight is one parameter shared by every example.

Under ``vmap(grad(loss))`` a Linear's or a convolution's weight is one parameter expanded to the batch, and ember
runs it as a per-example node (func/_per_example.py) whose first-order backward reads the one shared weight (and a
convolution's im2col columns). Under create_graph (MAML's meta-gradient, a gradient penalty) those derived arrays
must not stand in for the inputs: each term of the second derivative through them was lost (a Linear's input
gradient through its weight: the last layer's meta-gradient differed from PyTorch's) or refused (a convolution).
"""

import numpy as np
import pytest
import torch

import ember


def _mlp(m, rng, bias: bool = True):
    net = m.nn.Sequential(m.nn.Linear(2, 8), m.nn.Tanh(), m.nn.Linear(8, 1, bias=bias)).double()
    with m.no_grad():
        for p in net.parameters():
            p.copy_(m.tensor(rng.standard_normal(p.shape) * 0.3))
    return net


def _cnn(m, rng, stride: int, groups: int):
    net = m.nn.Sequential(m.nn.Conv2d(2, 4, 3, padding=1, stride=stride, groups=groups), m.nn.Tanh(),
                          m.nn.Conv2d(4, 2, 3, padding=1, groups=groups)).double()
    with m.no_grad():
        for p in net.parameters():
            p.copy_(m.tensor(rng.standard_normal(p.shape) * 0.3))
    return net


def _meta_grads(m, case: str, rows: int = 5, bias: bool = True):
    """The parameters' gradients of a loss through vmap over 3 tasks of grad (or jacrev) of a functional_call."""
    rng = np.random.default_rng(7)
    net = _mlp(m, rng, bias)
    params = dict(net.named_parameters())
    xs = m.tensor(rng.standard_normal((3, rows, 2)))
    ys = m.tensor(rng.standard_normal((3, rows, 1)))

    def loss_fn(p, x, y):
        return m.nn.functional.mse_loss(m.func.functional_call(net, p, (x,)), y)

    if case == "penalty":  # a gradient penalty of per-task gradients: vmap(grad) inside autograd.grad(create_graph)
        g = m.func.vmap(m.func.grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys)
        gg = m.autograd.grad(sum((v ** 2).sum() for v in g.values()), list(params.values()), create_graph=True)
        third = m.autograd.grad(sum((v ** 2).sum() for v in gg), list(params.values()))
        return [v.detach().numpy() for v in gg] + [v.numpy() for v in third]
    transform = m.func.jacrev if case == "jacrev" else m.func.grad

    def adapt(x, y):  # one MAML inner step
        g = transform(loss_fn)(params, x, y)
        return loss_fn({k: params[k] - 0.1 * g[k] for k in params}, x, y)

    out = m.func.vmap(adapt)(xs, ys).sum()
    return [v.numpy() for v in m.autograd.grad(out, list(params.values()))]


@pytest.mark.parametrize("case, rows, bias", [("grad", 5, True), ("grad", 5, False), ("grad", 1, True),
                                              ("jacrev", 5, True), ("penalty", 5, True)])
def test_linear_meta_gradients_match_pytorch(case, rows, bias):
    for got, want in zip(_meta_grads(ember, case, rows, bias), _meta_grads(torch, case, rows, bias)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


def _conv_meta_grads(m, stride: int, groups: int, example: bool):
    rng = np.random.default_rng(3)
    net = _cnn(m, rng, stride, groups)
    params = dict(net.named_parameters())
    xs = m.tensor(rng.standard_normal((2, 2, 5, 5) if example else (2, 3, 2, 5, 5)))

    def loss_fn(p, x):
        return (m.func.functional_call(net, p, (x,)) ** 2).mean()

    def adapt(x):
        g = m.func.grad(loss_fn)(params, x)
        return loss_fn({k: params[k] - 0.1 * g[k] for k in params}, x)

    out = m.func.vmap(adapt)(xs).sum()
    return [v.numpy() for v in m.autograd.grad(out, list(params.values()))]


@pytest.mark.parametrize("stride, groups, example", [(1, 1, False), (2, 1, False), (1, 2, False), (1, 1, True)])
def test_conv_meta_gradients_match_pytorch(stride, groups, example):
    """A convolution's per-example node under create_graph (it raised HigherOrderError)."""
    for got, want in zip(_conv_meta_grads(ember, stride, groups, example),
                         _conv_meta_grads(torch, stride, groups, example)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


def test_per_example_input_gradient_penalty():
    """A per-example input gradient's penalty, differentiated in a conv's and a Linear's weights and input."""
    def run(m):
        rng = np.random.default_rng(5)
        conv = _cnn(m, rng, 1, 1)
        head = m.nn.Linear(50, 1, bias=False).double()  # (a bias would be unused: its gradient is 1)
        with m.no_grad():
            for p in head.parameters():
                p.copy_(m.tensor(rng.standard_normal(p.shape) * 0.3))
        params = {**{"c" + k: v for k, v in conv.named_parameters()}, **{"h" + k: v for k, v in head.named_parameters()}}
        xs = m.tensor(rng.standard_normal((3, 2, 5, 5)), requires_grad=True)

        def f(p, x):
            c = {k[1:]: v for k, v in p.items() if k[0] == "c"}
            h = {k[1:]: v for k, v in p.items() if k[0] == "h"}
            feat = m.func.functional_call(conv, c, (x.unsqueeze(0),)).tanh().flatten()
            return m.func.functional_call(head, h, (feat,)).sum()

        def per_example(x):
            g = m.func.grad(f)(params, x)
            return sum((v ** 2).sum() for v in g.values())

        out = m.func.vmap(per_example)(xs).sum()
        return [v.numpy() for v in m.autograd.grad(out, [*params.values(), xs])]

    for got, want in zip(run(ember), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)
