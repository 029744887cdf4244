"""F.pad's reflect / replicate / circular modes (negative amounts crop) and the padding layers, against torch."""

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import check

import ember
import ember.nn as nn

SHAPES_PADS = [((2, 3, 5), (1, 2)), ((3, 5), (2, 1)), ((2, 3, 4, 5), (1, 2, 3, 0)), ((3, 4, 5), (1, 1, 1, 1)),
               ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 1)), ((2, 3, 4), (3, 3)),
               ((2, 3, 4), (0, 0)), ((2, 3, 4, 5), (1, 1, 1, 1, 1, 1)), ((2, 3, 4, 5), (3, 1, 0, 2)),
               ((2, 3, 4), (-1, 2)), ((2, 2, 3, 4), (-1, -1, 2, 0)), ((2, 3, 6), (-2, -3))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("shape,pad", SHAPES_PADS)
def test_pad_matches_torch(shape, pad, mode, dtype):
    if mode == "circular" and min(pad) < 0 < max(pad):
        pytest.skip("PyTorch's circular padding reads uninitialised memory for mixed-sign amounts")
    check(lambda m, x: m.nn.functional.pad(x, pad, mode=mode), [shape], dtype=dtype)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_every_small_amount_of_a_short_dim(mode):
    """Every (left, right) in -5..5 of lengths 1..5: the same values where PyTorch pads, the same error type."""
    for n in range(1, 6):
        for lo in range(-5, 6):
            for hi in range(-5, 6):
                if mode == "circular" and min(lo, hi) < 0 < max(lo, hi):
                    continue
                x = np.arange(float(n)).reshape(1, 1, n)
                try:
                    want = torch.nn.functional.pad(torch.tensor(x), (lo, hi), mode=mode).numpy()
                except RuntimeError:
                    with pytest.raises(RuntimeError):
                        ember.nn.functional.pad(ember.tensor(x), (lo, hi), mode=mode)
                    continue
                np.testing.assert_array_equal(ember.nn.functional.pad(ember.tensor(x), (lo, hi), mode=mode).numpy(),
                                              want, err_msg=f"n={n} pad=({lo}, {hi})")


@pytest.mark.parametrize("ctor,shape", [
    (lambda m: m.ConstantPad1d((1, 2), 3.5), (2, 3, 4)), (lambda m: m.ConstantPad2d(2, -1.0), (2, 3, 4, 5)),
    (lambda m: m.ConstantPad3d((1, 0, 2, 1, 0, 1), 0.5), (1, 2, 3, 4, 5)), (lambda m: m.ZeroPad1d(2), (3, 4)),
    (lambda m: m.ZeroPad2d((1, 0, -1, 2)), (2, 3, 4, 5)), (lambda m: m.ZeroPad3d(1), (2, 2, 3, 4)),
    (lambda m: m.ReflectionPad1d(3), (2, 3, 4)), (lambda m: m.ReflectionPad2d((1, 2, 0, 3)), (2, 3, 4, 5)),
    (lambda m: m.ReflectionPad3d(1), (1, 2, 3, 4, 5)), (lambda m: m.ReplicationPad1d((4, 1)), (3, 4)),
    (lambda m: m.ReplicationPad2d(2), (2, 3, 4, 5)), (lambda m: m.ReplicationPad3d((1, 2, 0, 0, 3, 1)), (2, 3, 4, 5)),
    (lambda m: m.CircularPad1d(2), (2, 3, 4)), (lambda m: m.CircularPad2d((1, 2, 3, 0)), (3, 4, 5)),
    (lambda m: m.CircularPad3d(1), (1, 2, 3, 4, 5)),
])
def test_padding_layers_match_torch(ctor, shape):
    em, tm = ctor(nn), ctor(torch.nn)
    compare_module(em, tm, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    assert repr(em) == repr(tm) and em.padding == tm.padding


def test_zero_pad_is_a_constant_pad():
    assert isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d) and nn.ZeroPad2d(1).value == 0.0


@pytest.mark.parametrize("call,err", [
    (lambda nn, x: nn.CircularPad1d(1)(x), ValueError),  # a 4-D input: CircularPad1d takes 2-D or 3-D
    (lambda nn, x: nn.ReflectionPad2d(4)(x), RuntimeError),  # as large as the dim
    (lambda nn, x: nn.CircularPad2d(5)(x), RuntimeError),  # wraps around more than once
    (lambda nn, x: nn.ReplicationPad2d((-3, -2, 0, 0))(x), RuntimeError),  # crops the dim away
    (lambda nn, x: nn.functional.pad(x, (1, 1), mode="reflect"), NotImplementedError),  # 1 dim of a 4-D input
])
def test_padding_errors_as_torch(call, err):
    for fw in (torch, ember):
        with pytest.raises(err):
            call(fw.nn, fw.zeros(2, 3, 4, 4))
