"""A convolution layer built with a kernel size, stride, padding or dilation of another length than its dimensions
(``nn.Conv1d(1, 1, kernel_size=(3, 3))``) is built as PyTorch builds it (the weight takes the kernel size given)
and refused at its first forward with PyTorch's RuntimeError; the functionals refuse such arguments, and a weight of
another rank than the function's, in PyTorch's order and words."""

import pytest
import torch

import ember

LAYERS = {
    "conv1d_kernel_2d": lambda m: m.nn.Conv1d(1, 1, kernel_size=(3, 3)),
    "conv1d_stride": lambda m: m.nn.Conv1d(1, 1, 3, stride=(1, 1)),
    "conv1d_padding": lambda m: m.nn.Conv1d(1, 1, 3, padding=(1, 1)),
    "conv1d_dilation": lambda m: m.nn.Conv1d(1, 1, 3, dilation=(1, 2)),
    "conv1d_same": lambda m: m.nn.Conv1d(1, 1, (3, 3), padding="same"),
    "conv1d_reflect": lambda m: m.nn.Conv1d(1, 1, (3, 3), padding_mode="reflect"),
    "conv2d_kernel_3d": lambda m: m.nn.Conv2d(1, 1, (3, 3, 3)),
    "conv_transpose1d_kernel_2d": lambda m: m.nn.ConvTranspose1d(1, 1, (3, 3)),
    "conv_transpose1d_output_padding": lambda m: m.nn.ConvTranspose1d(1, 1, 3, stride=2, output_padding=(0, 0)),
}


def _outcome(m, name):
    layer = LAYERS[name](m)
    x = m.ones(1, 1, 8) if "1d" in name else m.ones(1, 1, 8, 8)
    with pytest.raises(RuntimeError) as info:
        layer(x)
    return tuple(layer.weight.shape), layer.kernel_size, str(info.value)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_built_then_refused_at_forward_as_pytorchs(name):
    assert _outcome(ember, name) == _outcome(torch, name)


@pytest.mark.parametrize("call", [
    lambda m, F: F.conv1d(m.ones(1, 1, 8), m.ones(1, 1, 3, 3)),
    lambda m, F: F.conv1d(m.ones(1, 1, 8), m.ones(1, 1, 3, 3), padding="valid"),
    lambda m, F: F.conv1d(m.ones(1, 1, 8), m.ones(1, 1, 3, 3), stride=(1, 1, 1)),  # (the weight's rank decides)
    lambda m, F: F.conv1d(m.ones(1, 1, 8), m.ones(1, 1, 3), stride=(1, 1)),
    lambda m, F: F.conv2d(m.ones(1, 1, 8, 8), m.ones(1, 1, 3, 3), padding=(1, 1, 1)),
    lambda m, F: F.conv_transpose1d(m.ones(1, 1, 8), m.ones(1, 1, 3), stride=(2, 2)),
])
def test_functional_refusals_as_pytorchs(call):
    messages = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            call(m, m.nn.functional)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
