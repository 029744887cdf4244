"""``max(dim)``/``min(dim)``'s node saves its indices as PyTorch's: readable as ``_saved_indices`` while the graph
lives (after a backward that retained it too), PyTorch's RuntimeError once a backward freed it, and a second
backward through it is that error; a pack hook sees the indices."""

import pytest
import torch

import ember


def _outcome(fn):
    try:
        out = fn()
    except RuntimeError as e:
        return "RuntimeError", str(e).split(" (")[0].split(".")[0]
    return out


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("op", ["max", "min"])
def test_saved_indices_released_with_the_graph(op, keepdim):
    got = []
    for m in (ember, torch):
        x = m.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
        y = getattr(x, op)(1, keepdim=keepdim).values
        fn = y.grad_fn
        record = [fn._saved_indices.tolist()]
        y.sum().backward(retain_graph=True)
        record.append(fn._saved_indices.tolist())
        y.sum().backward()
        record.append(_outcome(lambda fn=fn: fn._saved_indices))
        record.append(_outcome(lambda y=y: y.sum().backward()))
        record.append(x.grad.tolist())
        got.append(record)
    assert got[0] == got[1]
    assert got[0][2][0] == "RuntimeError" and got[0][3][0] == "RuntimeError"


def test_pack_hook_sees_the_indices():
    got = []
    for m in (ember, torch):
        packed = []
        x = m.arange(24.0).reshape(4, 6).requires_grad_()
        with m.autograd.graph.saved_tensors_hooks(lambda t, p=packed: p.append((tuple(t.shape), str(t.dtype)[-5:])) or t,
                                                  lambda t: t):
            y = x.max(1).values
        y.sum().backward()
        got.append((packed, x.grad.tolist()))
    assert got[0] == got[1]
