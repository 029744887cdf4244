"""``torch.autograd.graph.get_gradient_edge``/``GradientEdge``/``increment_version`` against PyTorch: the edge of a
result and of a leaf, ``autograd.grad`` with an edge among its inputs (alone or with tensors), PyTorch's error for a
tensor that does not require grad, and version bumps that make backward through a saved tensor PyTorch's error."""

import math

import numpy
import pytest
import torch

import ember


def _edges(lib):
    g = lib.autograd.graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    edge = g.get_gradient_edge(y)
    leaf_edge = g.get_gradient_edge(x)
    z = (y * 3).sum()
    alone = lib.autograd.grad(z, edge, retain_graph=True)
    mixed = lib.autograd.grad(z, [edge, x])
    with pytest.raises(RuntimeError) as err:
        g.get_gradient_edge(lib.ones(2))
    return (edge.node.name(), edge.output_nr, edge.node is y.grad_fn, leaf_edge.node.name(), leaf_edge.output_nr,
            g.GradientEdge._fields, [t.tolist() for t in alone], [t.tolist() for t in mixed], str(err.value))


def test_gradient_edge_as_torch():
    assert _edges(ember) == _edges(torch)


def _versions(lib):
    g = lib.autograd.graph
    t = lib.ones(2)
    g.increment_version(t)
    g.increment_version([t, t])
    x = lib.ones(2, requires_grad=True)
    y = x.exp()
    g.increment_version(y)
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    return t._version, str(err.value).split(". Hint")[0]


def test_increment_version_as_torch():
    assert _versions(ember) == _versions(torch)


def _edge_corners(lib):
    """An edge among ``grad``'s inputs under ``is_grads_batched`` (the rows' gradients stacked), PyTorch's
    RuntimeError for an unused edge under ``materialize_grads`` (no input tensor to shape its zeros after), and an
    inference tensor's version left alone (it has no counter to bump)."""
    g = lib.autograd.graph
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 3
    out = (h * h).sum()
    batched = lib.autograd.grad(out, g.get_gradient_edge(h), lib.tensor([1.0, 2.0]), is_grads_batched=True,
                                retain_graph=True)
    unused = g.get_gradient_edge(lib.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as err:
        lib.autograd.grad(out, [x, unused], materialize_grads=True)
    with lib.inference_mode():
        t = lib.ones(2)
    g.increment_version(t)
    g.increment_version([t, x])
    return [b.tolist() for b in batched], str(err.value), x._version


def test_gradient_edge_corners_as_torch():
    assert _edge_corners(ember) == _edge_corners(torch)


def _backward_to_edges(lib):
    """``backward(inputs=...)`` with gradient edges, as PyTorch's: a leaf's edge accumulates into the leaf's
    ``.grad``; a result's edge stops the walk there (the leaves behind it get nothing) and keeps its gradient
    nowhere (no tensor to retain it)."""
    g = lib.autograd.graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    h = x * w
    loss = (h * h).sum() + w.sum()
    loss.backward(inputs=g.get_gradient_edge(x), retain_graph=True)
    leaf = (x.grad.tolist(), w.grad)
    x.grad = None
    loss.backward(inputs=[g.get_gradient_edge(h), w])
    return leaf, x.grad, h.retains_grad, w.grad.tolist()


def test_backward_takes_gradient_edges_as_torch():
    assert _backward_to_edges(ember) == _backward_to_edges(torch)


def _edge_outputs(lib):
    """A GradientEdge among the *outputs* of grad and backward: the gradient enters the graph at that edge."""
    g = lib.autograd.graph

    def made():
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        return x, g.get_gradient_edge(y)

    weights = lib.tensor([1.0, 10.0])
    x, edge = made()
    listed = lib.autograd.grad((edge,), (x,), grad_outputs=(weights,))
    x, edge = made()
    alone = lib.autograd.grad(edge, x, grad_outputs=weights)
    x, edge = made()
    lib.autograd.backward((edge,), grad_tensors=(weights,))
    accumulated = x.grad
    x, edge = made()
    (first,) = lib.autograd.grad(edge, x, grad_outputs=weights, create_graph=True)
    second = lib.autograd.grad(first.sum(), x)
    x, edge = made()
    with pytest.raises(RuntimeError) as implicit:  # a two-element output: no implicit gradient
        lib.autograd.grad(edge, x)
    scalar = lib.tensor(3.0, requires_grad=True)
    of_leaf = lib.autograd.grad(g.get_gradient_edge(scalar), scalar)
    x, edge = made()
    batched = lib.autograd.grad(edge, x, grad_outputs=lib.eye(2), is_grads_batched=True)
    return ([t.tolist() for t in listed], [t.tolist() for t in alone], accumulated.tolist(), first.requires_grad,
            [t.tolist() for t in second], str(implicit.value)[:50], [t.tolist() for t in of_leaf],
            [t.tolist() for t in batched])


def test_gradient_edge_among_outputs_as_torch():
    assert _edge_outputs(ember) == _edge_outputs(torch)


def _scalar_output_edges(lib):
    """``autograd.grad`` from the edge of a one-element result (the tensor itself gone) with no ``grad_outputs``:
    ones of the output's shape and dtype, as PyTorch's; the shape check and the complex error read that output."""
    gge = lib.autograd.graph.get_gradient_edge
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    xd = x.double()
    makers = [lambda: (x * 2).sum(), lambda: (x * 2)[:1], lambda: x.max(),
              lambda: (xd * xd).sum().reshape(1, 1), lambda: lib.stack([x, x]).sum(0)[1:2],
              lambda: lib.linalg.eigh(lib.eye(2) * x[0])[0][1]]
    grads = []
    for make in makers:
        edge = gge(make())
        grads.append(lib.autograd.grad(edge, x)[0].tolist())
    errors = []
    for edge, given in [(gge((x * 2).sum()), lib.ones(2)), (gge(x * 2), None),
                        (gge((lib.tensor([1j], requires_grad=True) * 2).sum()), None)]:
        with pytest.raises(RuntimeError) as err:
            lib.autograd.grad(edge, x, grad_outputs=given, allow_unused=True)
        errors.append(str(err.value).replace("torch.", "").replace("ember.", "").split(":")[0])
    return grads, errors


def test_scalar_output_edge_needs_no_grad_outputs_as_torch():
    assert _scalar_output_edges(ember) == _scalar_output_edges(torch)


_FAST_PATH_OPS = {  # the elementwise fast paths (graph.apply_same, graph.apply_one) and a reduction beside them
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y,
    "add_one_needs": lambda x, y: x.detach() + y, "mul_other_needs": lambda x, y: x * y.detach(),
    "exp": lambda x, y: x.exp(), "tanh": lambda x, y: x.tanh(), "relu": lambda x, y: x.relu(),
    "neg": lambda x, y: -x, "square": lambda x, y: x.square(), "clone": lambda x, y: x.t().contiguous(),
    "sum": lambda x, y: x.sum(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (1, 1), (2, 3)])
@pytest.mark.parametrize("op", sorted(_FAST_PATH_OPS))
def test_fast_path_node_output_metadata(op, shape, dtype):
    """What each fast path's node keeps of its output (its dtype alone where the shape is its inputs') reads as the
    output's own shape and dtype, with the output gone, and ``autograd.grad`` from the edge of a one-element one
    gives PyTorch's gradient without ``grad_outputs``."""
    grads = []
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        x = lib.arange(1, 1 + math.prod(shape), dtype=dt).reshape(shape).requires_grad_()
        y = (lib.arange(1, 1 + math.prod(shape), dtype=dt).reshape(shape) * 0.5 + 1).requires_grad_()
        out = _FAST_PATH_OPS[op](x, y)
        expected = (tuple(out.shape), out._data.dtype if lib is ember else out.dtype)
        edge = lib.autograd.graph.get_gradient_edge(out)
        del out
        if lib is ember:
            meta = edge.node.output_metadata(edge.output_nr)
            assert (tuple(meta[0]), meta[1]) == expected
            assert edge.node.output_metadata(1) is None
        if math.prod(expected[0]) == 1:
            grads.append([g.tolist() for g in lib.autograd.grad(edge, (x, y), allow_unused=True,
                                                                 materialize_grads=True)])
    if grads:
        assert numpy.allclose(sum(grads[0], []), sum(grads[1], []), rtol=1e-6, atol=0)
