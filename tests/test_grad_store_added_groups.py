"""A parameter group added after the optimizer was built (``add_param_group``) gets a gradient store of its own,
as the constructor's groups do: backward writes its gradients end to end into one flat array, in the group's
order; a parameter already in a store keeps it; and the steps are PyTorch's."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd.grad_store import flat_grads


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_group_added_later_gets_a_store_and_steps_as_pytorch(name):
    results = []
    for m in (ember, torch):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b, c = m.tensor([3.0], requires_grad=True), m.tensor([[0.5, -1.0]], requires_grad=True)
        opt = getattr(m.optim, name)([a], lr=0.1)
        opt.add_param_group({"params": [c, b], "lr": 0.05})
        if m is ember:
            assert c._grad_slot is not None and b._grad_slot is not None, "the added group has no store"
            store = c._grad_slot[0]
            assert [c._grad_slot, b._grad_slot] == [(store, 0), (store, 1)]
            assert a._grad_slot[0] is not store
        for _ in range(3):
            opt.zero_grad()
            ((a ** 2).sum() + (b ** 3).sum() + (c * a).sum()).backward()
            if m is ember:
                assert flat_grads([c, b]) is store.flat  # (written into the store, end to end)
            opt.step()
        results.append([t.detach().numpy().copy() for t in (a, b, c)])
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-6)
