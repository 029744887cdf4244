"""A parameter whose size-1 dimensions step oddly (``Parameter(zeros(5, 1).t())``: strides (1, 1)) gets its
gradient laid out as PyTorch's AccumulateGrad keeps it, row-major (5, 1), with an optimizer's gradient store as
without one; a genuinely transposed or permuted parameter keeps its own strides, as before."""

import pytest
import torch

import ember


def _strides(m, make, with_optimizer):
    p = m.nn.Parameter(make(m))
    opt = m.optim.SGD([p], lr=0.1) if with_optimizer else None
    seen = []
    for _ in range(2):
        (p * m.arange(float(p.numel())).reshape(p.shape)).sum().backward()
        seen.append((p.grad.stride(), p.grad.tolist()))
        if opt is not None:
            opt.step()
            opt.zero_grad()
        else:
            p.grad = None
    return p.stride(), seen


MAKERS = {"(5, 1).t()": lambda m: m.zeros(5, 1).t(), "(1, 5).t()": lambda m: m.zeros(1, 5).t(),
          "(3, 1, 4) permuted": lambda m: m.zeros(3, 1, 4).permute(1, 0, 2),
          "(2, 3).t()": lambda m: m.zeros(2, 3).t(), "(3, 1, 4) sliced": lambda m: m.zeros(3, 2, 4)[:, :1]}


@pytest.mark.parametrize("with_optimizer", [True, False])
@pytest.mark.parametrize("make", list(MAKERS))
def test_gradient_strides_as_pytorchs(make, with_optimizer):
    assert _strides(ember, MAKERS[make], with_optimizer) == _strides(torch, MAKERS[make], with_optimizer)


def test_the_store_still_knows_such_a_gradient_as_its_slot():
    p = ember.nn.Parameter(ember.zeros(5, 1).t())
    q = ember.nn.Parameter(ember.ones(3))
    ember.optim.SGD([p, q], lr=0.1)
    ((p * ember.arange(5.0)).sum() + q.sum()).backward()
    store, i = p._grad_slot
    assert p.grad.stride() == (5, 1) and store.holds(i, p.grad) and store.region(0, 2) is not None
