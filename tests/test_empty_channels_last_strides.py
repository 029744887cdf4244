"""An empty tensor laid out channels-last reports PyTorch's strides: its channels-last formula counts a dimension
of size 0 as 0 (the row-major one counts it as 1), through empty, the *_like factories, contiguous(memory_format=)
and to(memory_format=), on the CPU (and the meta device, for empty, zeros_like and to)."""

import pytest
import torch

import ember

SHAPES = [(0, 3, 4, 5), (2, 0, 4, 5), (2, 3, 0, 5), (2, 3, 4, 0), (0, 0, 0, 0), (1, 0, 1, 1)]
MAKERS = {
    "empty": lambda m, s, d: m.empty(*s, memory_format=m.channels_last, device=d),
    "zeros_like": lambda m, s, d: m.zeros_like(m.empty(*s, device=d), memory_format=m.channels_last),
    "empty_like_preserving": lambda m, s, d: m.empty_like(m.empty(*s, memory_format=m.channels_last, device=d)),
    "contiguous": lambda m, s, d: m.empty(*s, device=d).contiguous(memory_format=m.channels_last),
    "to": lambda m, s, d: m.empty(*s, device=d).to(memory_format=m.channels_last),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("shape", SHAPES)
def test_empty_channels_last_strides_are_pytorchs(shape, maker, device):
    if maker == "to" and shape in ((0, 0, 0, 0), (1, 0, 1, 1)):
        pytest.skip("PyTorch's to() returns such a tensor itself, by its suggest_memory_format rule")
    if device == "meta" and maker in ("contiguous", "empty_like_preserving"):
        pytest.skip("a meta tensor's contiguous(memory_format=) and empty_like keep row-major strides (not yet)")
    got, want = MAKERS[maker](ember, shape, device), MAKERS[maker](torch, shape, device)
    assert got.stride() == want.stride()
    if device == "cpu":
        assert got.is_contiguous(memory_format=ember.channels_last) == \
            want.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("shape", [(2, 3, 0, 5, 6), (0, 3, 4, 5, 6), (2, 0, 4, 5, 6)])
def test_empty_channels_last_3d_strides_are_pytorchs(shape):
    for make in (lambda m: m.empty(*shape, memory_format=m.channels_last_3d),
                 lambda m: m.empty(*shape).contiguous(memory_format=m.channels_last_3d)):
        assert make(ember).stride() == make(torch).stride()
