"""pixel_shuffle / pixel_unshuffle of a channels_last_3d 5-d input: PyTorch's CPU kernel lays its result out as the
input's suggested memory format and has no channels_last_3d one, so it raises (after its shape checks), where ember
computed a result."""

import math

import pytest
import torch

import ember


@pytest.mark.parametrize("fn", ["pixel_shuffle", "pixel_unshuffle"])
@pytest.mark.parametrize("shape", [(2, 8, 4, 2, 2), (2, 4, 1, 2, 2), (1, 8, 4, 2, 2), (2, 4, 4, 1, 1)])
@pytest.mark.parametrize("fmt", ["channels_last_3d", "contiguous_format"])
def test_a_channels_last_3d_input_is_pytorchs_error(fn, shape, fmt):
    def run(lib):
        x = lib.arange(math.prod(shape), dtype=lib.float32).reshape(*shape)
        x = x.to(memory_format=getattr(lib, fmt))
        factor = 2 if fn == "pixel_shuffle" or shape[-1] % 2 == 0 else 1
        try:
            y = getattr(lib.nn.functional, fn)(x, factor)
        except RuntimeError as e:
            return str(e)
        return tuple(y.shape), y.stride(), y.flatten().tolist()

    assert run(ember) == run(torch)


def test_the_module_too():
    x = ember.ones(1, 3, 8, 2, 2).to(memory_format=ember.channels_last_3d)
    with pytest.raises(RuntimeError, match="Unsupported memory format. Supports only ChannelsLast, Contiguous"):
        ember.nn.PixelShuffle(2)(x)
