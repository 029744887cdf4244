"""torch.put / Tensor.put / Tensor.put_ against PyTorch: values (negative indices, any index shape, accumulate with
repeats), gradients of input and source (first and second order, in place through a clone), and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

CASES = {
    "negative index": lambda m, x: x.put(m.tensor([1, -1]), m.tensor([5.0, 6.0])),
    "2-d index": lambda m, x: x.put(m.tensor([[1, -1]]), m.tensor([5.0, 6.0])),
    "2-d source": lambda m, x: x.put(m.tensor([0]), m.tensor([[1.0]])),
    "accumulate repeats": lambda m, x: x.put(m.tensor([1, 1, -6]), m.tensor([5.0, 6.0, 2.0]), accumulate=True),
    "torch.put": lambda m, x: m.put(x, m.tensor([0, 4]), m.tensor([5.0, 1.0])),
    "put_": lambda m, x: x.clone().put_(m.tensor([0]), m.tensor([5.0])),
    "put_ accumulate": lambda m, x: x.clone().put_(m.tensor([0, 0]), m.tensor([5.0, 1.0]), accumulate=True),
    "empty index": lambda m, x: x.put(m.tensor([], dtype=m.int64), m.tensor([])),
    "0-d input": lambda m, x: m.tensor(3.0).put(m.tensor([0]), m.tensor([1.0])),
    "integers": lambda m, x: m.zeros(3, dtype=m.int64).put(m.tensor([0, 0]), m.tensor([4, 1]), accumulate=True),
    "index past the end": lambda m, x: x.put(m.tensor([6]), m.tensor([5.0])),
    "index before the start": lambda m, x: x.put(m.tensor([-7]), m.tensor([5.0])),
    "source dtype": lambda m, x: x.put(m.tensor([1, 2]), m.tensor([5.0, 6.0], dtype=m.float64)),
    "int32 index": lambda m, x: x.put(m.tensor([1, 2], dtype=m.int32), m.tensor([5.0, 6.0])),
    "float index": lambda m, x: x.put(m.tensor([1.0, 2.0]), m.tensor([5.0, 6.0])),
    "source size": lambda m, x: x.put(m.tensor([1, 2]), m.tensor([5.0, 6.0, 7.0])),
    "empty input": lambda m, x: m.zeros(0).put(m.tensor([0]), m.tensor([1.0])),
}


def _outcome(m, case):
    x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    try:
        y = CASES[case](m, x)
    except (RuntimeError, IndexError) as err:
        return type(err).__name__, str(err)
    return str(y.dtype).split(".")[1], y.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_put_as_pytorch(case):
    assert _outcome(ember, case) == _outcome(torch, case)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_put_gradients_as_pytorch(accumulate, inplace):
    results = []
    for m in (torch, ember):
        a = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        s = m.tensor([7.0, 8.0, -1.0], dtype=m.float64, requires_grad=True)
        index = m.tensor([1, -1, 1])
        y = a.clone().put_(index, s, accumulate=accumulate) if inplace else a.put(index, s, accumulate=accumulate)
        name = y.grad_fn.name()
        ga, gs = m.autograd.grad((y ** 3).sum(), (a, s), create_graph=True)
        (ga.sum() + (gs * gs).sum()).backward()
        results.append((name, ga.detach().numpy(), gs.detach().numpy(), a.grad.numpy(), s.grad.numpy()))
    assert results[0][0] == results[1][0] == "PutBackward0"
    for ours, theirs in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
