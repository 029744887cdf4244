"""An elementwise op of a permuted tensor and a broadcast one on the CPU: PyTorch's TensorIterator keeps the permuted
operand's dimension order (the broadcast operand's zero strides tell nothing), so ``.view`` of the result fails as
PyTorch's. gram-ai/capsule-networks' ``(x * y[:, :, None]).view(x.size(0), -1)`` of a transposed ``x`` stops under
PyTorch and runs under ember, whose result is NumPy's contiguous one."""

import pytest
import torch

import ember


@pytest.mark.xfail(strict=True, reason="ember's CPU elementwise results take NumPy's layout where an operand is "
                                       "broadcast; the output's allocation is in the elementwise hot path")
def test_product_with_a_broadcast_operand_keeps_pytorchs_layout():
    strides = []
    for m in (ember, torch):
        x = m.zeros(10, 8, 16).transpose(0, 1)
        z = x * m.zeros(8, 10)[:, :, None]
        strides.append(z.stride())
    assert strides[0] == strides[1]  # torch: (16, 128, 1); ember: (160, 16, 1)
