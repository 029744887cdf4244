"""``Module.to(memory_format=...)``: PyTorch lays out every 4-d (``channels_last``) or 5-d (``channels_last_3d``)
parameter, gradient and buffer so, integer buffers too, in place (the parameters stay the same objects); a
channels-last format of the other rank is its RuntimeError; ``contiguous_format`` lays them back out."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error


def _model(m, conv="Conv2d"):
    m.manual_seed(0)
    model = m.nn.Sequential(getattr(m.nn, conv)(2, 3, 3), m.nn.BatchNorm2d(3) if conv == "Conv2d" else
                            m.nn.BatchNorm3d(3), m.nn.Flatten())
    model[0].weight.grad = m.ones_like(model[0].weight)
    shape = (1, 2, 3, 4) if conv == "Conv2d" else (1, 2, 3, 4, 5)
    model.register_buffer("extra", m.arange(float(np.prod(shape))).reshape(shape))
    model.register_buffer("counts", m.arange(np.prod(shape)).reshape(shape))
    return model


def _layout(model):
    tensors = [*model.named_parameters(), *model.named_buffers()]
    tensors += [(f"{n}.grad", p.grad) for n, p in model.named_parameters() if p.grad is not None]
    return {n: (tuple(t.stride()), str(t.dtype).split(".")[-1], t.detach().numpy().tolist()) for n, t in tensors}


CASES = [("Conv2d", "channels_last", {}), ("Conv3d", "channels_last_3d", {}), ("Conv2d", "channels_last",
                                                                                    {"dtype": "float64"})]


@pytest.mark.parametrize(("conv", "fmt", "extra"), CASES)
def test_the_4d_and_5d_tensors_are_laid_out(conv, fmt, extra):
    layouts, same = {}, {}
    for m in (ember, torch):
        model = _model(m, conv)
        weight = model[0].weight
        kwargs = {k: getattr(m, v) for k, v in extra.items()}
        assert model.to(memory_format=getattr(m, fmt), **kwargs) is model
        same[m] = model[0].weight is weight
        layouts[m] = _layout(model)
        model.to(memory_format=m.contiguous_format)
        layouts[m, "back"] = _layout(model)
        model.to(memory_format=m.preserve_format)
        layouts[m, "kept"] = _layout(model)
    assert layouts[ember] == layouts[torch]
    assert layouts[ember, "back"] == layouts[torch, "back"]
    assert layouts[ember, "kept"] == layouts[torch, "kept"]
    assert same[ember] and same[torch]


@pytest.mark.parametrize(("conv", "fmt"), [("Conv3d", "channels_last"), ("Conv2d", "channels_last_3d")])
def test_a_format_of_the_other_rank_is_refused(conv, fmt):
    assert_same_error(lambda m: m.nn.Sequential(getattr(m.nn, conv)(2, 3, 3)).to(memory_format=getattr(m, fmt)))
