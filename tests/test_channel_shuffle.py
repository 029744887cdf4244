"""``F.channel_shuffle`` (PyTorch's is ``torch.channel_shuffle`` itself) and ``nn.ChannelShuffle`` against PyTorch,
and the layout of the result: channels-last in, channels-last out, as PyTorch's CPU kernel gives it. (The values,
gradients and errors of ``torch.channel_shuffle``: tests/test_nn_toplevel.py.)"""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def test_the_functional_is_the_top_level_operator_as_in_pytorch():
    assert (ember.nn.functional.channel_shuffle is ember.channel_shuffle) == \
        (torch.nn.functional.channel_shuffle is torch.channel_shuffle)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_the_module_as_pytorchs(dtype):
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 2)).astype(np.float32)
    got = []
    for m in (ember, torch):
        mod = m.nn.ChannelShuffle(3)
        t = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        out = mod(t)
        (out * m.arange(out.numel()).reshape(out.shape).to(out.dtype)).sum().backward()
        got.append((out, t.grad, repr(mod), mod.groups, type(out.grad_fn).__name__))
    assert_close(got[0][0].float(), got[1][0].float())
    assert_close(got[0][1].float(), got[1][1].float())
    assert got[0][2:] == got[1][2:]


@pytest.mark.parametrize("shape, fmt, transpose", [((2, 6, 2, 3), "channels_last", False),
                                                   ((1, 4, 2, 2, 2), "channels_last_3d", False),
                                                   ((2, 6, 2, 3), None, True), ((2, 6, 2, 3), None, False)])
def test_the_result_is_laid_out_as_pytorchs(shape, fmt, transpose):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = []
    for m in (ember, torch):
        t = m.tensor(x)
        if fmt:
            t = t.contiguous(memory_format=getattr(m, fmt))
        if transpose:
            t = t.transpose(2, 3)
        t.requires_grad_()
        out = m.nn.functional.channel_shuffle(t, 2)
        out.backward(m.ones_like(out))
        got.append((out.stride(), out.detach().numpy().tolist(), t.grad.stride()))
    assert got[0] == got[1]
