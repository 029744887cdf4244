"""``torch.fx.experimental.proxy_tensor.get_proxy_mode``, which kornia asks before a data-dependent path: None
outside ``make_fx``, as PyTorch's; ember has no ``make_fx`` (no dispatch modes), so it is always None."""

import torch
from torch.fx.experimental.proxy_tensor import get_proxy_mode as torch_get_proxy_mode
from torch.fx.experimental.proxy_tensor import make_fx

import ember
import ember.fx.experimental.proxy_tensor as proxy_tensor


def test_none_outside_tracing_as_pytorchs():
    assert proxy_tensor.get_proxy_mode() is torch_get_proxy_mode() is None
    traced = []
    make_fx(lambda x: traced.append(torch_get_proxy_mode()) or x + 1)(torch.ones(2))
    assert traced[0] is not None  # (what PyTorch's answers inside make_fx, which ember does not have)
    assert ember.fx.experimental.proxy_tensor is proxy_tensor
