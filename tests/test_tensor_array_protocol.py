"""NumPy reading a tensor (``numpy.asarray(t)``, NumPy functions given tensors, ``np.mean`` of a list of losses)
goes through ``Tensor.__array__``, which is ``numpy()``'s array: a tensor that requires grad is PyTorch's RuntimeError
telling to detach, rather than an array that silently leaves the graph (an RL loop's ``env.step(actor(obs))`` or
``np.mean(losses)``); a detached tensor's values come through unchanged."""

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "asarray": lambda t: np.asarray(t),
    "mean_of_list": lambda t: np.mean([t.sum(), t.sum() * 2]),
    "concatenate": lambda t: np.concatenate([t, t]),
    "stack_list": lambda t: np.stack([t, t]),
}


def outcome(m, call, requires_grad):
    x = m.tensor([[0.25, -1.0], [2.0, 0.5]], requires_grad=requires_grad)
    y = x * 1.5  # (a non-leaf that requires grad, as a policy's output)
    try:
        return "ok", np.asarray(call(y if requires_grad else y.detach()), dtype=np.float64).tolist()
    except RuntimeError as e:
        return "RuntimeError", str(e)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("requires_grad", [True, False])
def test_numpy_reading_a_tensor_matches_pytorch(name, requires_grad):
    expected = outcome(torch, CALLS[name], requires_grad)
    assert outcome(ember, CALLS[name], requires_grad) == expected
    assert (expected[0] == "RuntimeError") == requires_grad


def test_leaf_that_requires_grad_is_refused_and_detached_one_shares_memory():
    p = ember.nn.Parameter(ember.zeros(3))
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        np.asarray(p)
    with ember.no_grad():  # (grad mode does not matter: the tensor itself requires grad, as in PyTorch)
        with pytest.raises(RuntimeError, match="requires grad"):
            np.asarray(p)
    a = np.asarray(p.detach())
    a[0] = 4.0
    assert p.tolist() == [4.0, 0.0, 0.0]
