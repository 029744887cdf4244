"""Where a clamping op's derivative is zero, PyTorch's backward selects zero (``x in range ? g : 0``) rather than
multiplying g by 0: the gradient there is +0.0 whatever g's sign (a product gives -0.0 for a negative g), as
``torch.signbit`` tells. hardtanh and relu6 (and their in-place forms), clamp with number bounds."""

import pytest
import torch

import ember

X = [-7.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0]


@pytest.mark.parametrize("op", [
    lambda m, x: m.nn.functional.hardtanh(x), lambda m, x: m.nn.functional.hardtanh_(x * 1),
    lambda m, x: m.nn.functional.hardtanh(x, -2.0, 0.5), lambda m, x: m.nn.functional.relu6(x),
    lambda m, x: m.nn.functional.relu6(x * 1, inplace=True), lambda m, x: m.nn.ReLU6()(x),
    lambda m, x: x.clamp(-1, 1), lambda m, x: (x * 1).clamp_(-1, 1), lambda m, x: x.clamp(min=0),
    lambda m, x: x.clamp_max(0.5), lambda m, x: x.clamp(max=3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gradient_outside_the_range_is_positive_zero_as_torchs(op, dtype):
    grads = []
    for m in (torch, ember):
        x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
        y = op(m, x)
        y.backward(-m.ones_like(y))
        grads.append((m.signbit(x.grad).tolist(), x.grad.tolist()))
    assert grads[1] == grads[0]
    assert not all(grads[0][0])  # (some +0.0: a product's -0.0 everywhere would fail)
