"""Conv layers' ``_conv_forward(input, weight, bias)``: the convolution with a given weight, as PyTorch's (loralib's
ConvLoRA calls it with ``weight + lora_B @ lora_A``)."""

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("nd, padding_mode", [(1, "zeros"), (2, "zeros"), (2, "reflect"), (3, "circular")])
def test_conv_forward_with_a_changed_weight_matches_pytorch(nd, padding_mode):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + (6,) * nd).astype(np.float32)
    e_layer = getattr(ember.nn, f"Conv{nd}d")(3, 4, 3, padding=1, padding_mode=padding_mode)
    t_layer = getattr(torch.nn, f"Conv{nd}d")(3, 4, 3, padding=1, padding_mode=padding_mode)
    w = rng.standard_normal(tuple(t_layer.weight.shape)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    e_w = ember.tensor(w, requires_grad=True)
    t_w = torch.tensor(w, requires_grad=True)
    e_out = e_layer._conv_forward(ember.tensor(x), e_w * 2, ember.tensor(b))
    t_out = t_layer._conv_forward(torch.tensor(x), t_w * 2, torch.tensor(b))
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    e_out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(e_w.grad.numpy(), t_w.grad.numpy(), rtol=1e-5, atol=1e-4)
    none_bias = e_layer._conv_forward(ember.tensor(x), ember.tensor(w), None)
    np.testing.assert_allclose(none_bias.numpy(), t_layer._conv_forward(torch.tensor(x), torch.tensor(w), None)
                               .detach().numpy(), rtol=1e-5, atol=1e-5)
