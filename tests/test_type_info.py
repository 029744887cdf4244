"""ember.finfo / ember.iinfo report the limits PyTorch reports."""

import pytest
import torch
from test_data_samplers import raises_like_torch

import ember


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                                  "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert e.dtype == t.dtype == name
    assert repr(e) == repr(t)


def test_finfo_default_dtype():
    assert ember.finfo().eps == torch.finfo().eps
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.finfo().bits == 64
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.bits, e.min, e.max, e.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("make", [lambda m: m.finfo(m.int32), lambda m: m.iinfo(m.float32)])
def test_wrong_kind_raises_like_torch(make):
    raises_like_torch(make)


def test_masking_with_the_lowest_float():
    """The attention-mask idiom: scores.masked_fill(mask, torch.finfo(scores.dtype).min)."""
    for m in (ember, torch):
        s = m.zeros(2, 2).masked_fill(m.tensor([[False, True], [False, False]]), m.finfo(m.float32).min)
        assert s[0, 1].item() == torch.finfo(torch.float32).min
