"""Under create_graph, a gradient's graph names its nodes as PyTorch's: one node per backward formula that PyTorch
writes as an op of its own (TanhBackwardBackward0, ConvolutionBackwardBackward0 ...), with its edges, values and
higher derivatives unchanged (ember/autograd/formula_node.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, node_names

import ember


def F(m):
    return m.nn.functional


def _gradients(m, fn, shapes, needs: int, seed: int = 0):
    """The gradients of ``fn`` with respect to its first ``needs`` inputs under create_graph (a random upstream
    gradient), and the inputs."""
    rng = np.random.default_rng(seed)
    ins = [m.tensor(rng.standard_normal(s), requires_grad=i < needs) for i, s in enumerate(shapes)]
    out = fn(m, *ins)
    go = m.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(out.shape)))
    return m.autograd.grad(out, ins[:needs], go, create_graph=True), ins[:needs]


# (fn, input shapes, how many inputs require grad); each gradient's node and its edges' nodes as PyTorch's
SAME_EDGES = {
    "relu": (lambda m, x: F(m).relu(x), [(3, 4)], 1),
    "leaky_relu": (lambda m, x: F(m).leaky_relu(x, 0.1), [(3, 4)], 1),
    "elu": (lambda m, x: F(m).elu(x), [(3, 4)], 1),
    "celu": (lambda m, x: F(m).celu(x), [(3, 4)], 1),
    "gelu": (lambda m, x: F(m).gelu(x), [(3, 4)], 1),
    "softplus": (lambda m, x: F(m).softplus(x), [(3, 4)], 1),
    "hardtanh": (lambda m, x: F(m).hardtanh(x), [(3, 4)], 1),
    "hardswish": (lambda m, x: F(m).hardswish(x), [(3, 4)], 1),
    "softshrink": (lambda m, x: F(m).softshrink(x), [(3, 4)], 1),
    "hardshrink": (lambda m, x: F(m).hardshrink(x), [(3, 4)], 1),
    "threshold": (lambda m, x: F(m).threshold(x, 0.1, 2.0), [(3, 4)], 1),
    "glu": (lambda m, x: F(m).glu(x), [(3, 4)], 1),
    "tanh": (lambda m, x: m.tanh(x), [(3, 4)], 1),
    "sigmoid": (lambda m, x: m.sigmoid(x), [(3, 4)], 1),
    "log_sigmoid": (lambda m, x: F(m).logsigmoid(x), [(3, 4)], 1),
    "softmax": (lambda m, x: F(m).softmax(x, 1), [(3, 4)], 1),
    "log_softmax": (lambda m, x: F(m).log_softmax(x, 1), [(3, 4)], 1),
    "cross_entropy": (lambda m, x: F(m).cross_entropy(x, m.tensor([0, 2, 1])), [(3, 4)], 1),
    "bce": (lambda m, x: F(m).binary_cross_entropy(m.sigmoid(x), m.full((3, 4), 0.3, dtype=m.float64)),
            [(3, 4)], 1),
    "conv1d": (lambda m, x, w: F(m).conv1d(x, w), [(1, 2, 5), (3, 2, 3)], 2),
    "conv2d": (lambda m, x, w: F(m).conv2d(x, w), [(1, 2, 5, 5), (3, 2, 3, 3)], 2),
    "conv_transpose2d": (lambda m, x, w: F(m).conv_transpose2d(x, w), [(1, 2, 4, 4), (2, 3, 3, 3)], 2),
    "max_pool2d": (lambda m, x: F(m).max_pool2d(x, 2), [(1, 2, 4, 4)], 1),
    "max_pool3d": (lambda m, x: F(m).max_pool3d(x, 2), [(1, 1, 4, 4, 4)], 1),
    "avg_pool2d": (lambda m, x: F(m).avg_pool2d(x, 2), [(1, 2, 4, 4)], 1),
    "avg_pool3d": (lambda m, x: F(m).avg_pool3d(x, 2), [(1, 1, 4, 4, 4)], 1),
    "adaptive_avg_pool2d": (lambda m, x: F(m).adaptive_avg_pool2d(x, 2), [(1, 2, 4, 4)], 1),
    "adaptive_avg_pool3d": (lambda m, x: F(m).adaptive_avg_pool3d(x, 2), [(1, 1, 4, 4, 4)], 1),
    "adaptive_max_pool2d": (lambda m, x: F(m).adaptive_max_pool2d(x, 2), [(1, 2, 4, 4)], 1),
    "reflection_pad": (lambda m, x: F(m).pad(x, (1, 1, 1, 1), mode="reflect"), [(1, 1, 3, 3)], 1),
    "replication_pad": (lambda m, x: F(m).pad(x, (1, 1, 1, 1), mode="replicate"), [(1, 1, 3, 3)], 1),
    "grid_sample": (lambda m, x, g: F(m).grid_sample(x, g, align_corners=False), [(1, 1, 3, 3), (1, 2, 2, 2)], 2),
    "instance_norm": (lambda m, x: F(m).instance_norm(x), [(2, 3, 4)], 1),
}

# PyTorch's node also has edges for arguments ember's formula does not read (a target, mean and rstd): the name only
SAME_NAME = {
    "mse_loss": (lambda m, x, y: F(m).mse_loss(x, y), [(3, 4), (3, 4)], 1),
    "smooth_l1_loss": (lambda m, x, y: F(m).smooth_l1_loss(x, y), [(3, 4), (3, 4)], 1),
    "huber_loss": (lambda m, x, y: F(m).huber_loss(x, y), [(3, 4), (3, 4)], 1),
    "layer_norm": (lambda m, x, w, b: F(m).layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)], 2),
    "batch_norm": (lambda m, x: F(m).batch_norm(x, None, None, training=True), [(3, 4)], 1),
}


@pytest.mark.parametrize("name", list(SAME_EDGES))
def test_gradient_node_and_edges_as_pytorchs(name):
    fn, shapes, needs = SAME_EDGES[name]
    (mine, _), (theirs, _) = (_gradients(m, fn, shapes, needs) for m in (ember, torch))
    for e, t in zip(mine, theirs, strict=True):
        assert node_names(e.grad_fn, 1) == node_names(t.grad_fn, 1)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
        assert_close(e, t, atol=1e-10)


@pytest.mark.parametrize("name", list(SAME_NAME))
def test_gradient_node_named_as_pytorchs(name):
    fn, shapes, needs = SAME_NAME[name]
    (mine, _), (theirs, _) = (_gradients(m, fn, shapes, needs) for m in (ember, torch))
    for e, t in zip(mine, theirs, strict=True):
        assert e.grad_fn.name() == t.grad_fn.name()
        assert_close(e, t, atol=1e-10)


@pytest.mark.parametrize("name", ["tanh", "softmax", "conv2d", "glu", "gelu", "grid_sample", "max_pool2d",
                                  "max_pool3d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                                  "reflection_pad", "replication_pad"])
def test_second_and_third_derivatives_through_the_node(name):
    """The named node's own gradient is its formula's steps' (to the third order), and the gradient of the
    upstream gradient through it too. A pooling's or padding's gradient, linear in an upstream gradient that
    requires grad, still has PyTorch's zero derivative with respect to the input its op reads (it was None)."""
    fn, shapes, needs = SAME_EDGES[name]
    results = []
    for m in (ember, torch):
        rng = np.random.default_rng(5)
        ins = [m.tensor(rng.standard_normal(s), requires_grad=i < needs) for i, s in enumerate(shapes)]
        out = fn(m, *ins)
        go = m.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
        g1 = m.autograd.grad(out, ins[:needs], go, create_graph=True)
        g2 = m.autograd.grad(sum((g * g).sum() for g in g1), [*ins[:needs], go], create_graph=True,
                             allow_unused=True)
        g3 = m.autograd.grad(sum(g.sum() for g in g2 if g is not None), ins[:needs], allow_unused=True)
        results.append([*g1, *g2, *g3])
    for e, t in zip(*results, strict=True):
        assert (e is None) == (t is None)
        if t is not None:
            assert_close(e, t, atol=1e-8, rtol=1e-7)


@pytest.mark.parametrize("loss", ["sum", "linear"])
def test_layer_norm_bias_gradient_is_an_output_of_the_node(loss):
    """layer_norm's bias gradient, the upstream gradient summed (a constant when that does not require grad), is
    an output of NativeLayerNormBackwardBackward0 as PyTorch's: it requires grad, its derivative is zeros."""
    got = []
    for m in (ember, torch):
        rng = np.random.default_rng(0)
        x, w, b = (m.tensor(rng.standard_normal(s), requires_grad=True) for s in [(3, 4), (4,), (4,)])
        y = F(m).layer_norm(x, (4,), w, b)
        out = y.sum() if loss == "sum" else (y * m.tensor(rng.standard_normal((3, 4)))).sum()
        gx, gw, gb = m.autograd.grad(out, (x, w, b), create_graph=True)
        penalty = (gx ** 2).sum() + (gw ** 2).sum() + (gb ** 2).sum()
        got.append((gb.requires_grad, gb.grad_fn.name(), gb.detach(),
                    *m.autograd.grad(penalty, (x, w, b), allow_unused=True, materialize_grads=True)))
    assert got[0][:2] == got[1][:2] == (True, "NativeLayerNormBackwardBackward0")
    for e, t in zip(got[0][2:], got[1][2:], strict=True):
        assert_close(e, t + 0, atol=1e-10)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_leaf_grad_after_backward_create_graph():
    """``x.grad`` after ``backward(create_graph=True)``: PyTorch's copy into the leaf's layout, over the named node."""
    names = []
    for m in (ember, torch):
        x = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        m.tanh(x).sum().backward(create_graph=True)
        names.append(node_names(x.grad.grad_fn, 2))
    assert names[0] == names[1]
    assert ("TanhBackwardBackward0" in dict((n, d) for d, n in names[0]))


def test_freed_after_a_backward_without_retain_graph():
    """The named node frees with its graph: a second backward through it is PyTorch's error."""
    errors = []
    for m in (ember, torch):
        x = m.tensor([0.5, -1.0], requires_grad=True)
        (g,) = m.autograd.grad(m.tanh(x).sum(), x, create_graph=True)
        (g * g).sum().backward()
        with pytest.raises(RuntimeError) as err:
            (g * g).sum().backward()
        errors.append(str(err.value).split(".")[0])
    assert errors[0] == errors[1]


def test_in_place_change_of_what_the_formula_read():
    """The output the formula read, changed in place before the second backward: PyTorch's error."""
    for m in (ember, torch):
        x = m.tensor([0.5, -1.0], requires_grad=True)
        y = m.tanh(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        with m.no_grad():
            y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g.sum().backward()


def test_pooling_gradient_requires_grad_under_create_graph():
    """Average pooling's gradient is linear in the upstream gradient, but PyTorch's formula reads the input: under
    create_graph it requires grad, and its gradient with respect to the input is zeros."""
    for pool in ("avg_pool2d", "adaptive_avg_pool2d"):
        got = []
        for m in (ember, torch):
            x = m.tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
            (g,) = m.autograd.grad(getattr(F(m), pool)(x, 2).sum(), x, create_graph=True)
            got.append((g.requires_grad, m.autograd.grad(g.sum(), x)[0]))
        assert got[0][0] is got[1][0] is True
        assert_close(got[0][1], got[1][1])


def test_forward_over_reverse_through_the_node():
    """A forward-mode tangent carried by the gradient's named node (a Hessian-vector product)."""
    import torch.autograd.forward_ad as tfwd

    import ember.autograd.forward_ad as efwd

    out = []
    for m, fwd in ((ember, efwd), (torch, tfwd)):
        with fwd.dual_level():
            x = fwd.make_dual(m.tensor([0.3, -0.7, 1.1]), m.tensor([1.0, 0.5, -2.0]))
            x.requires_grad_(True)
            (g,) = m.autograd.grad(m.tanh(x).sum(), x, create_graph=True)
            out.append(fwd.unpack_dual(g).tangent)
    assert_close(out[0], out[1], atol=1e-12)


# view ops: the gradient's node under create_graph (a transpose's is a transpose, a select's select_backward ...)
VIEWS = {
    "transpose": lambda m, x: x.transpose(0, 2),
    "swapaxes": lambda m, x: x.swapaxes(0, 1),
    "mT": lambda m, x: x.mT,
    "t": lambda m, x: x[0].t(),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "T": lambda m, x: x[0].T,
    "movedim": lambda m, x: x.movedim(0, 2),
    "select": lambda m, x: x[1],
    "select_dim": lambda m, x: x.select(1, 2),
    "slice": lambda m, x: x[1:],
    "slice_step": lambda m, x: x[:, ::2],
    "narrow": lambda m, x: x.narrow(2, 1, 2),
    "expand": lambda m, x: x[:, :1].expand(2, 5, 4),
    "squeeze_dim": lambda m, x: x[:, :1].squeeze(1),
    "squeeze_all": lambda m, x: x[:1, :, :1].squeeze(),
    "squeeze_dims": lambda m, x: x[:1, :, :1].squeeze((0, 2)),
    "unsqueeze": lambda m, x: x.unsqueeze(1),
    "unsqueeze_last": lambda m, x: x.unsqueeze(-1),
    "view": lambda m, x: x.view(6, 4),
    "reshape": lambda m, x: x.reshape(-1),
    "diagonal": lambda m, x: x.diagonal(0, 1, 2),
    "unfold": lambda m, x: x.unfold(2, 2, 1),
    "unbind": lambda m, x: x.unbind(1)[1],
    "split": lambda m, x: x.split(1, 1)[1],
    "split_sizes": lambda m, x: x.split([1, 3], 2)[1],
    "chunk": lambda m, x: x.chunk(2, 2)[1],
    "select_then_slice": lambda m, x: x[1, 1:],
    "as_strided": lambda m, x: x.as_strided((2, 3), (4, 1), 1),
    "as_strided_overlap": lambda m, x: x.as_strided((3, 3), (1, 1)),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_gradient_node_as_pytorchs(name):
    got = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
        y = VIEWS[name](m, x)
        go = m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
        (g,) = m.autograd.grad(y, x, go, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), go)
        got.append((node_names(g.grad_fn, 1), g, gg))
    assert got[0][0] == got[1][0]
    assert_close(got[0][1], got[1][1])
    assert_close(got[0][2], got[1][2])


def _backward_twice(m, fn, shapes, needs):
    """Two backwards without retain_graph through a gradient's graph: each one's outcome and the gradients."""
    rng = np.random.default_rng(0)
    ins = [m.tensor(rng.standard_normal(s), requires_grad=i < needs) for i, s in enumerate(shapes)]
    out = fn(m, *ins)
    go = m.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
    g1 = m.autograd.grad(out, ins[:needs], go, create_graph=True)
    outcomes = []
    for _ in range(2):
        try:
            sum((g * g).sum() for g in g1).backward()
            outcomes.append("ran")
        except RuntimeError as err:
            outcomes.append(str(err).split(".")[0])
    return outcomes, go.grad


TWICE = {**SAME_EDGES, **SAME_NAME, **{f"view_{k}": (lambda m, x, v=v: v(m, x), [(2, 3, 4)], 1) for k, v in VIEWS.items()},
         "reflection_pad1d": (lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), [(1, 2, 4)], 1),
         "replication_pad3d": (lambda m, x: F(m).pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"), [(1, 1, 2, 2, 2)], 1)}


@pytest.mark.parametrize("name", list(TWICE))
def test_second_backward_without_retain_graph_as_pytorchs(name):
    """A named node whose PyTorch formula saves no tensor (a select's, an average pool's) runs again in a second
    backward after one without retain_graph; one that saved tensors is PyTorch's freed-graph error."""
    (mine, mine_grad), (theirs, their_grad) = (_backward_twice(m, *TWICE[name]) for m in (ember, torch))
    assert mine == theirs
    assert_close(mine_grad, their_grad)


# a gradient's chain under create_graph, node by node as PyTorch's: a number exponent's product is mul.Scalar's
# MulBackward1 (one edge), bmm's gradients are bmm's of a transpose
CHAINS = {
    "pow": (lambda m, x, y: (x ** 3).sum() + (y.abs() ** 2.5).sum(), [(3, 4), (3, 4)]),
    "mm": (lambda m, x, y: (x @ y.T).pow(2).sum(), [(3, 4), (5, 4)]),
    "bmm": (lambda m, x, y: m.bmm(x, y.transpose(1, 2)).pow(2).sum(), [(2, 3, 4), (2, 5, 4)]),
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_gradient_chain_as_pytorchs(name):
    fn, shapes = CHAINS[name]
    got = []
    for m in (ember, torch):
        rng = np.random.default_rng(3)
        ins = [m.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
        grads = m.autograd.grad(fn(m, *ins), ins, create_graph=True)
        second = m.autograd.grad(sum((g * g).sum() for g in grads), ins)
        got.append(([node_names(g.grad_fn, 3) for g in grads], grads, second))
    assert got[0][0] == got[1][0]
    for e, t in zip(got[0][1] + got[0][2], got[1][1] + got[1][2], strict=True):
        assert_close(e, t, atol=1e-10)


def _normalization_third_order(m, x0, fn, shapes):
    """The sum of the second derivatives of a normalization (with respect to its inputs and the upstream gradient),
    and that sum's gradient with respect to the input: a third derivative."""
    rng = np.random.default_rng(5)
    ins = [m.tensor(x0, requires_grad=True)] + [m.tensor(rng.standard_normal(s), requires_grad=True)
                                                for s in shapes[1:]]
    out = fn(m, *ins)
    go = m.tensor(np.random.default_rng(9).standard_normal(tuple(out.shape)), requires_grad=True)
    g1 = m.autograd.grad(out, ins, go, create_graph=True)
    g2 = m.autograd.grad(sum((g * g).sum() for g in g1), [*ins, go], create_graph=True, allow_unused=True)
    total = sum(g.sum() for g in g2 if g is not None)  # (a bias: its gradient is the upstream one's sum, no g2)
    return total.item(), m.autograd.grad(total, ins[0])[0]


@pytest.mark.parametrize("name", ["layer_norm", "batch_norm", "instance_norm"])
def test_normalization_third_derivative_is_exact(name):
    """Through a normalization's NativeXNormBackwardBackward0, ember's third derivative is the derivative of its
    second (central differences agree); PyTorch's double-backward formulas give other values there (docs/api.md),
    so this is checked against the differences, and the second derivatives against PyTorch."""
    fn, shapes, _ = {**SAME_EDGES, **SAME_NAME}[name]
    x0 = np.random.default_rng(4).standard_normal(shapes[0])
    value, third = _normalization_third_order(ember, x0, fn, shapes)
    assert value == pytest.approx(_normalization_third_order(torch, x0, fn, shapes)[0], rel=1e-9)
    eps, numeric = 1e-5, np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (_normalization_third_order(ember, up, fn, shapes)[0]
                        - _normalization_third_order(ember, down, fn, shapes)[0]) / (2 * eps)
    np.testing.assert_allclose(third.numpy(), numeric, atol=1e-5 * max(1.0, np.abs(numeric).max()))
