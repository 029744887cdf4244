"""Names public training code uses that ember lacked (``tools/api_coverage.py report``), against PyTorch:
``torch._as_tensor_fullprec`` (Dynamo's calling convention: a Python number kept in full precision, on the CPU)
and ``torch.optim.optimizer._get_capturable_supported_devices`` (what optimizers check ``capturable=True`` against)."""

import pytest
import torch
import torch.optim.optimizer as torch_optimizer

import ember
import ember.optim.optimizer as ember_optimizer


@pytest.mark.parametrize("value", [1.5, 3, True, [1, 2], [1.5, 2.0], 2**40, 1e300, -7])
def test_as_tensor_fullprec_is_pytorchs(value):
    got, want = ember._as_tensor_fullprec(value), torch._as_tensor_fullprec(value)
    assert (str(got.dtype).split(".")[1], got.tolist()) == (str(want.dtype).split(".")[1], want.tolist())


def test_as_tensor_fullprec_shares_a_tensor_and_ignores_the_default_device():
    x = ember.ones(2)
    assert ember._as_tensor_fullprec(x) is x
    with ember.device("meta"):
        assert ember._as_tensor_fullprec(2.5).device.type == "cpu"
    with torch.device("meta"):
        assert torch._as_tensor_fullprec(2.5).device.type == "cpu"


@pytest.mark.parametrize("supports_xla", [True, False])
def test_capturable_supported_devices_are_pytorchs(supports_xla):
    assert ember_optimizer._get_capturable_supported_devices(supports_xla) == \
        torch_optimizer._get_capturable_supported_devices(supports_xla)
