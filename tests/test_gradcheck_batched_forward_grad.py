"""gradcheck's ``check_batched_forward_grad``: vmap of forward mode over two random tangents against the two
Jacobian-vector products one at a time, as PyTorch's, with its requirement and its failure messages."""

import pytest
import torch

import ember
from ember.autograd.gradcheck import GradcheckError
from ember.func._batched import BatchedTensor

FUNCTIONS = {
    "matmul_tanh": lambda m, a, b: (a @ b).tanh(),
    "reduce_exp": lambda m, a, b: (a.sum(0) * b[:, 0]).exp(),
    "softmax": lambda m, a, b: m.nn.functional.softmax(a @ b, -1),
    "several_outputs": lambda m, a, b: (a.sin(), b.cos(), a.sum()),
    "index_add_without_batching_rule": lambda m, a, b: a.index_add(0, m.tensor([0, 2]), b.t()),
    "layer_norm": lambda m, a, b: m.nn.functional.layer_norm(a, (4,), b.flatten()[:4]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_batched_forward_grad_check_passes_as_pytorchs(name):
    results = []
    for m in (ember, torch):
        m.manual_seed(0)
        a = m.randn(3, 4, dtype=m.float64, requires_grad=True)
        b = m.randn(4, 2, dtype=m.float64, requires_grad=True)
        results.append(m.autograd.gradcheck(lambda x, y, m=m: FUNCTIONS[name](m, x, y), (a, b),
                                             check_forward_ad=True, check_batched_forward_grad=True))
    assert results == [True, True]


def test_batched_forward_grad_check_requires_forward_ad():
    messages = []
    for m in (ember, torch):
        x = m.ones(2, dtype=m.float64, requires_grad=True)
        with pytest.raises(AssertionError) as info:
            m.autograd.gradcheck(lambda t: t * 2, (x,), check_batched_forward_grad=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _differs_when_batched(t):
    """2 t, but 3 t on vmap's batched examples: forward mode's derivative does not batch."""
    return t * (3 if any(isinstance(a, BatchedTensor) for a in (t, ember.autograd.forward_ad.unpack_dual(t).tangent))
                else 2)


def test_batched_forward_grad_mismatch_is_pytorchs_failure():
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        ember.autograd.gradcheck(_differs_when_batched, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    assert str(info.value).startswith("For output 0 and input 0:\n\n\ngradcheck failed while testing batched gradient "
                                      "computation with forward-mode AD.")
    assert "\n\nGot:\n" in str(info.value) and "\n\nExpected:\n" in str(info.value)
    assert ember.autograd.gradcheck(_differs_when_batched, (x,), check_forward_ad=True,
                                    check_batched_forward_grad=True, raise_exception=False) is False
