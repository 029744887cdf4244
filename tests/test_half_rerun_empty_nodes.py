"""An empty half-precision input through an op whose formula reruns forward in float32 under create_graph
(``_rounded_back`` in ``ember/autograd/recorded.py``): the gradient's node is the formula's last op, as for a
non-empty input and in float32, and for group_norm PyTorch's (ViewBackward0). An empty result that is a view of an
empty base shares no memory with it by NumPy's reckoning (``may_share_memory`` of zero bytes): ``_round_in_place``
takes its dtype without looking at memory (there are no values to round), so no ToCopyBackward0 follows it."""

import pytest
import torch

import ember

OPS = {"group_norm": lambda F, x: F.group_norm(x, 2), "layer_norm": lambda F, x: F.layer_norm(x, (4,))}


def _node(m, op, dtype, rows):
    x = m.ones(rows, 4, dtype=getattr(m, dtype)).requires_grad_()
    (g,) = m.autograd.grad(OPS[op](m.nn.functional, x).sum(), x, create_graph=True)
    return g.grad_fn.name(), str(g.dtype).split(".")[1], tuple(g.shape)


def _expected(op, dtype, rows):
    """PyTorch's for group_norm; for layer_norm (whose node ember names by its formula's last op, not PyTorch's
    NativeLayerNormBackwardBackward0) ember's own in float32, the dtype aside."""
    if op == "group_norm":
        return _node(torch, op, dtype, rows)
    name, _, shape = _node(ember, op, "float32", rows)
    return name, dtype, shape


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_non_empty_inputs_gradient_node_is_the_formulas(op, dtype):
    assert _node(ember, op, dtype, 3) == _expected(op, dtype, 3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_an_empty_inputs_gradient_node_is_the_formulas(op, dtype):
    assert _node(ember, op, dtype, 0) == _expected(op, dtype, 0)
