"""Reverse-mode Jacobians through convolutions and transposed convolutions from one batched backward walk
(``ember/func/_batched_vjp.py``: the formulas' convolutions under vmap's batching rule), against PyTorch on the same
float64 inputs, with counts of the backward walks (one, where a loop over the rows would run one per output
element); and transposed convolutions under vmap."""

import pytest
import torch

import ember
from tests.autodiff_oracle import arrays, assert_same, both
from tests.test_func_jacrev_batched import paths  # noqa: F401  (the fixture)

# (name, functional op, input shape, weight shape, keyword arguments)
CONVS = [
    ("conv1d", "conv1d", (2, 4, 7), (4, 2, 3), dict(stride=2, padding=1, groups=2)),
    ("conv2d", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), dict(padding=1)),
    ("conv2d dilated", "conv2d", (1, 2, 6, 5), (3, 2, 2, 3), dict(stride=(2, 1), dilation=(2, 1))),
    ("conv2d unbatched", "conv2d", (2, 5, 5), (3, 2, 3, 3), dict(padding="same")),
    ("conv3d", "conv3d", (1, 2, 4, 4, 3), (2, 2, 2, 2, 2), dict(stride=1, padding=(1, 0, 1))),
    ("conv_transpose1d", "conv_transpose1d", (2, 4, 5), (4, 3, 3), dict(stride=2, padding=1, output_padding=1,
                                                                          groups=2)),
    ("conv_transpose2d", "conv_transpose2d", (2, 3, 3, 4), (3, 2, 3, 3), dict(stride=2, padding=1)),
    ("conv_transpose2d dcgan", "conv_transpose2d", (1, 2, 3, 3), (2, 3, 4, 4), dict(stride=2, padding=1)),
    ("conv_transpose2d dilated", "conv_transpose2d", (1, 2, 3, 3), (2, 2, 2, 2), dict(dilation=2,
                                                                                        output_padding=(0, 1),
                                                                                        stride=(1, 2))),
]


def _f(m, op, kw):
    return lambda x, w, b: getattr(m.nn.functional, op)(x, w, b, **kw).tanh()


@pytest.mark.parametrize("name, op, x_shape, w_shape, kw", CONVS, ids=[c[0] for c in CONVS])
def test_jacrev_through_a_convolution_is_one_backward_walk(paths, name, op, x_shape, w_shape, kw):  # noqa: F811
    bias = (w_shape[1] * kw.get("groups", 1),) if "transpose" in op else (w_shape[0],)
    theirs, mine = both(arrays(x_shape, w_shape, bias))
    expected = torch.func.jacrev(_f(torch, op, kw), argnums=(0, 1, 2))(*theirs)
    assert_same(ember.func.jacrev(_f(ember, op, kw), argnums=(0, 1, 2))(*mine), expected)
    assert paths == {"backward": 1, "batched": [True]}  # a loop over the rows would walk once per output element


LAYERS = [("Conv1d", (2, 3, 6)), ("Conv2d", (2, 3, 5, 5)), ("Conv3d", (1, 3, 3, 4, 3)),
          ("ConvTranspose1d", (2, 3, 4)), ("ConvTranspose2d", (1, 3, 3, 3))]


def _layer(m, kind):
    m.manual_seed(0)
    kw = dict(stride=2, output_padding=1) if "Transpose" in kind else dict(padding=1)
    return getattr(m.nn, kind)(3, 2, 3, **kw).double()


@pytest.mark.parametrize("kind, shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_vectorized_jacobian_and_is_grads_batched(paths, kind, shape):  # noqa: F811
    def call(m, xs):
        layer = _layer(m, kind)
        with (torch.no_grad() if m is torch else ember.no_grad()):
            for p, a in zip(layer.parameters(), arrays(*(tuple(p.shape) for p in layer.parameters()), seed=3)):
                p.copy_(m.tensor(a))
        x = xs[0].requires_grad_()
        jac = m.autograd.functional.jacobian(lambda v: layer(v).sin(), x, vectorize=True)
        y = layer(x).sin()
        seeds = m.tensor(arrays((4, *y.shape), seed=1)[0])
        batched = m.autograd.grad(y, (x, layer.weight, layer.bias), seeds, is_grads_batched=True)
        return jac, batched

    _run = call(ember, both(arrays(shape))[1]), call(torch, both(arrays(shape))[0])
    assert_same(*_run, atol=1e-10)
    assert paths["batched"] == [True, True] and paths["backward"] == 2


def _net(m, w1, w2):
    F = m.nn.functional

    def f(x):
        h = F.conv2d(x, w1, padding=1).tanh()
        h = F.conv_transpose2d(h, w2, stride=2, padding=1).sin()
        return (h * h).sum()
    return f


def test_hessian_of_a_conv_net_wrt_its_input(paths):  # noqa: F811
    theirs, mine = both(arrays((1, 2, 4, 4), (3, 2, 3, 3), (3, 2, 3, 3)))
    expected = torch.func.hessian(_net(torch, *theirs[1:]))(theirs[0])
    assert_same(ember.autograd.functional.hessian(_net(ember, *mine[1:]), mine[0], vectorize=True), expected)
    # one walk for the gradient (create_graph), one batched walk over its 32 rows
    assert paths == {"backward": 2, "batched": [True]}
    assert_same(ember.func.hessian(_net(ember, *mine[1:]))(mine[0]), expected)
    assert_same(ember.func.jacrev(ember.func.jacrev(_net(ember, *mine[1:])))(mine[0]), expected)
    assert len(paths["batched"]) > 1 and all(paths["batched"])


@pytest.mark.parametrize("name, op, x_shape, w_shape, kw", CONVS[5:], ids=[c[0] for c in CONVS[5:]])
@pytest.mark.parametrize("batched", ["input", "weight", "both"])
def test_transposed_convolution_under_vmap(name, op, x_shape, w_shape, kw, batched):
    """One call on the whole batch (no per-example loop: its warning would fail the test), PyTorch's values."""
    bias = (w_shape[1] * kw.get("groups", 1),)
    x_dims, w_dims = (None if batched == "weight" else 0), (None if batched == "input" else 0)
    shapes = ((3, *x_shape) if x_dims == 0 else x_shape, (3, *w_shape) if w_dims == 0 else w_shape, (3, *bias))
    theirs, mine = both(arrays(*shapes))

    def call(m, xs):
        return m.func.vmap(lambda x, w, b: getattr(m.nn.functional, op)(x, w, b, **kw),
                           in_dims=(x_dims, w_dims, 0))(*xs)

    assert_same(call(ember, mine), call(torch, theirs))


def test_is_grads_batched_through_convolutions_stays_differentiable(paths):  # noqa: F811
    def call(m, xs):
        x, w1, w2 = (t.requires_grad_() for t in xs)
        F = m.nn.functional
        y = F.conv_transpose1d(F.conv1d(x, w1, padding=1).tanh(), w2, stride=2)
        seeds = m.tensor(arrays((3, *y.shape), seed=2)[0])
        gx, gw1 = m.autograd.grad(y, (x, w1), seeds, is_grads_batched=True, create_graph=True)
        return gx, gw1, m.autograd.grad((gx * gx).sum() + (gw1 * gw1).sum(), (w1, w2))

    theirs, mine = both(arrays((2, 3, 5), (4, 3, 3), (4, 2, 3)))
    assert_same(call(ember, mine), call(torch, theirs))
    assert paths["batched"] == [True]


def test_an_ensemble_of_transposed_convolution_layers_under_vmap():
    """functional_call over stacked parameters: one grouped transposed convolution (no per-example loop)."""
    def call(m):
        layers = [_layer(m, "ConvTranspose2d") for _ in range(3)]
        for i, layer in enumerate(layers):
            with (torch.no_grad() if m is torch else ember.no_grad()):
                for p, a in zip(layer.parameters(), arrays(*(tuple(p.shape) for p in layer.parameters()), seed=i)):
                    p.copy_(m.tensor(a))
        params = {k: m.stack([dict(layer.named_parameters())[k].detach() for layer in layers])
                  for k in dict(layers[0].named_parameters())}
        x = m.tensor(arrays((2, 3, 3, 3), seed=7)[0])
        return m.func.vmap(lambda p: m.func.functional_call(layers[0], p, (x,)))(params)

    assert_same(call(ember), call(torch))
