"""A recurrent cell's output prints PyTorch's ``grad_fn``: the node of the step's last op (``TanhBackward0`` for
RNNCell, ``ReluBackward0`` with ``nonlinearity="relu"``, ``AddBackward0`` for GRUCell; unbatched, a
``SqueezeBackward1`` over it), with the same values and gradients."""

import numpy as np
import pytest
import torch

import ember

CELLS = {
    "rnn_tanh": lambda nn: nn.RNNCell(3, 2),
    "rnn_relu": lambda nn: nn.RNNCell(3, 2, nonlinearity="relu"),
    "gru": lambda nn: nn.GRUCell(3, 2),
}


def _run(lib, cell: str, batched: bool):
    lib.manual_seed(0)
    module = CELLS[cell](lib.nn)
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32)))
    x = lib.tensor(np.random.default_rng(9).standard_normal((4, 3) if batched else 3).astype(np.float32))
    h = module(x)
    names = [h.grad_fn.name()] + [f.name() for f, _ in h.grad_fn.next_functions if f is not None][:1]
    h.sum().backward()
    return names, repr(h).split("grad_fn=")[1], np.round(module.weight_ih.grad.numpy(), 5).tolist()


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_cell_output_node_named_as_torch(cell, batched):
    got, want = _run(ember, cell, batched), _run(torch, cell, batched)
    assert got[1] == want[1] and got[2] == want[2]
    assert got[0][0] == want[0][0]
    if not batched:  # (the squeeze's next function: the cell's node)
        assert got[0][1] == want[0][1]
