"""``autograd.Function.vjp`` is PyTorch's alias of ``backward``: a subclass may define its backward under either
name (backward, double backward and ``torch.func`` transforms use it), defining both is PyTorch's RuntimeError when
backward runs. Compared with PyTorch."""

import numpy as np
import pytest
import torch

import ember


def _tanh(m, *, vjp: bool, both: bool = False):
    def vector_jacobian(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y * y)

    body = {
        "forward": staticmethod(lambda ctx, x: _saving(ctx, x.tanh())),
        ("vjp" if vjp else "backward"): staticmethod(vector_jacobian),
    }
    if both:
        body["backward"] = body["vjp"] = staticmethod(vector_jacobian)
    return type("Tanh", (m.autograd.Function,), body)


def _saving(ctx, y):
    ctx.save_for_backward(y)
    return y


@pytest.mark.parametrize("vjp", [True, False], ids=["vjp", "backward"])
def test_a_function_may_define_its_backward_as_vjp(vjp):
    a = np.random.default_rng(0).standard_normal(5)
    results = []
    for m in (torch, ember):
        fn = _tanh(m, vjp=vjp)
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(fn.apply(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        assert m.autograd.gradcheck(fn.apply, (x,))
        assert m.autograd.gradgradcheck(fn.apply, (x,))
        assert type(fn.apply(x).grad_fn).__name__ == "TanhBackward"
        results.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_defining_both_backward_and_vjp_is_refused_when_backward_runs():
    for m in (torch, ember):
        y = _tanh(m, vjp=True, both=True).apply(m.ones(2, requires_grad=True))  # forward runs
        with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp' for a custom Function is not "
                                               "allowed. You should only implement one of them."):
            y.sum().backward()


def test_the_base_class_vjp_is_its_backward():
    assert ember.autograd.Function.vjp is ember.autograd.Function.backward
    assert torch.autograd.Function.vjp is torch.autograd.Function.backward
