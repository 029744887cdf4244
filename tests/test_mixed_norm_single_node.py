"""A bfloat16 / float16 batch through float32 normalisation parameters: PyTorch's mixed-dtype kernel returns the
batch's dtype from its one node (NativeLayerNormBackward0, no cast's ToCopyBackward0 after it), and the gradients
are in each input's dtype."""

import pytest
import torch

import ember

NORMS = {
    "layer_norm": lambda m, x, w, b: m.nn.functional.layer_norm(x, (3,), w[:3], b[:3]),
    "batch_norm": lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
    "batch_norm_eval": lambda m, x, w, b: m.nn.functional.batch_norm(x, m.zeros(4), m.ones(4), w, b),
    "group_norm": lambda m, x, w, b: m.nn.functional.group_norm(x, 2, w, b),
}


def _run(m, name, dtype):
    x = m.tensor([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, 1.0, -2.0], [0.0, 0.5, 1.0]],
                  [[-0.5, 1.0, 0.0], [2.5, -0.25, 0.75], [1.0, -1.0, 2.0], [0.5, 0.5, -1.0]]],
                 dtype=getattr(m, dtype), requires_grad=True)
    w = m.tensor([1.5, 0.5, -1.0, 2.0], requires_grad=True)
    b = m.tensor([0.1, -0.2, 0.3, 0.0], requires_grad=True)
    y = NORMS[name](m, x * 1, w, b)
    node = y.grad_fn
    graph = (str(y.dtype).split(".")[-1], node.name(),
             [None if f is None else f.name() for f, _ in node.next_functions])
    (y.float() * m.arange(24.0).reshape(2, 4, 3)).sum().backward()
    grads = [(str(t.grad.dtype).split(".")[-1], t.grad.float().flatten().tolist()) for t in (x, w, b)]
    return graph, y.float().flatten().tolist(), grads


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(NORMS))
def test_mixed_precision_norm_is_one_node_in_the_input_dtype(name, dtype):
    (e_graph, e_out, e_grads), (t_graph, t_out, t_grads) = _run(ember, name, dtype), _run(torch, name, dtype)
    assert e_graph == t_graph
    tol = 2e-2 if dtype == "bfloat16" else 2e-3
    assert e_out == pytest.approx(t_out, abs=tol, rel=tol)
    for (e_dtype, e_grad), (t_dtype, t_grad) in zip(e_grads, t_grads):
        assert e_dtype == t_dtype
        assert e_grad == pytest.approx(t_grad, abs=4 * tol, rel=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(NORMS))
def test_mixed_precision_norm_gradients_under_create_graph_keep_each_input_dtype(name, dtype):
    """The same gradients recorded (create_graph=True): the batch's in its dtype, the parameters' in float32, as
    PyTorch's (and as without create_graph), and differentiable again."""
    def grads(m):
        x = m.tensor([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, 1.0, -2.0], [0.0, 0.5, 1.0]],
                      [[-0.5, 1.0, 0.0], [2.5, -0.25, 0.75], [1.0, -1.0, 2.0], [0.5, 0.5, -1.0]]],
                     dtype=getattr(m, dtype), requires_grad=True)
        w = m.tensor([1.5, 0.5, -1.0, 2.0], requires_grad=True)
        b = m.tensor([0.1, -0.2, 0.3, 0.0], requires_grad=True)
        y = NORMS[name](m, x, w, b)
        gx, gw = m.autograd.grad((y.float() ** 2 * m.arange(24.0).reshape(2, 4, 3)).sum(), (x, w), create_graph=True)
        (again,) = m.autograd.grad((gx.float() ** 2).sum() + gw.sum(), (w,))
        return [(str(g.dtype).split(".")[-1], g.float().flatten().tolist()) for g in (gx, gw, again)]

    tol = 5e-2 if dtype == "bfloat16" else 5e-3
    for (e_dtype, e_grad), (t_dtype, t_grad) in zip(grads(ember), grads(torch)):
        assert e_dtype == t_dtype
        assert e_grad == pytest.approx(t_grad, abs=20 * tol, rel=tol)
