"""torch.library.custom_op: operators defined in Python, their gradients and torch.ops namespaces, as PyTorch."""

import numpy as np
import pytest
import torch

import ember


def _define(m, ns):
    @m.library.custom_op(f"{ns}::scaled_mul", mutates_args=())
    def scaled_mul(x: m.Tensor, w: m.Tensor, scale: float) -> m.Tensor:
        return x * w * scale

    def setup_context(ctx, inputs, output):
        x, w, scale = inputs
        ctx.save_for_backward(x, w)
        ctx.scale = scale

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w * ctx.scale, grad * x * ctx.scale, None

    m.library.register_autograd(f"{ns}::scaled_mul", backward, setup_context=setup_context)
    m.library.register_fake(f"{ns}::scaled_mul", lambda x, w, scale: m.empty_like(x))
    return scaled_mul


def test_custom_op_values_and_gradients_as_pytorch():
    op_e, op_t = _define(ember, "embertest"), _define(torch, "embertest")
    x, w = np.random.default_rng(0).normal(size=(2, 3)), np.random.default_rng(1).normal(size=(2, 3))
    grads = []
    for m, op in ((ember, op_e), (torch, op_t)):
        xs, ws = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        out = op(xs, ws, 3.0)
        (out * out).sum().backward()
        grads.append((out.detach().numpy(), xs.grad.numpy(), ws.grad.numpy()))
        assert out.grad_fn.name() == "GeneratedBackwardFor_embertest_scaled_mul_defaultBackward"
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ember.ops.embertest.scaled_mul is op_e  # torch.ops.<namespace>.<name>
    np.testing.assert_array_equal(ember.ops.embertest.scaled_mul(ember.ones(2), ember.ones(2), 2.0).numpy(), [2, 2])


def test_custom_op_without_autograd_raises_on_backward_as_pytorch():
    for m in (ember, torch):
        op = m.library.custom_op("embertest::double_it", lambda x: x * 2, mutates_args=(),
                                 schema="(Tensor x) -> Tensor")
        out = op(m.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError, match="no autograd formula was registered"):
            out.sum().backward()
        with pytest.raises(ValueError):  # PyTorch: "not enough values to unpack"
            m.library.custom_op("no_namespace", lambda x: x, mutates_args=(), schema="(Tensor x) -> Tensor")
