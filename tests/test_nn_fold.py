"""F.unfold / F.fold (im2col / col2im) and nn.Unfold / nn.Fold against torch: values, gradients, errors."""

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import check

import ember
import ember.nn as nn

# (input shape, kernel_size, dilation, padding, stride): overlapping, touching, gapped, dilated, padded, unbatched
CASES = [((2, 3, 5, 6), 2, 1, 0, 1), ((2, 3, 5, 6), (2, 3), 1, 1, (1, 2)), ((1, 2, 7, 7), 3, 2, 1, 2),
         ((2, 1, 4, 4), 2, 1, 0, 2), ((2, 2, 6, 5), (3, 1), (1, 2), (2, 0), 3), ((3, 4, 5), 2, 1, 1, 1),
         ((0, 2, 4, 4), 2, 1, 0, 1), ((1, 1, 3, 3), 3, 1, 0, 1), ((2, 2, 8, 9), (1, 1), 1, 0, (2, 3))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,k,d,p,s", CASES)
def test_unfold_matches_torch(shape, k, d, p, s, dtype):
    check(lambda m, x: m.nn.functional.unfold(x, k, dilation=d, padding=p, stride=s), [shape], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,k,d,p,s", CASES)
def test_fold_matches_torch(shape, k, d, p, s, dtype):
    cols = tuple(torch.nn.functional.unfold(torch.zeros(shape), k, dilation=d, padding=p, stride=s).shape)
    check(lambda m, x: m.nn.functional.fold(x, shape[-2:], k, dilation=d, padding=p, stride=s), [cols], dtype=dtype)


def test_fold_of_unfold_counts_the_blocks_covering_each_pixel():
    x = ember.ones(1, 1, 4, 5)
    counts = ember.nn.functional.fold(ember.nn.functional.unfold(x, 2), (4, 5), 2)
    np.testing.assert_array_equal(counts.numpy()[0, 0], [[1, 2, 2, 2, 1], [2, 4, 4, 4, 2], [2, 4, 4, 4, 2],
                                                          [1, 2, 2, 2, 1]])


@pytest.mark.parametrize("ctor,shape", [
    (lambda m: m.Unfold(2), (2, 3, 4, 5)), (lambda m: m.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)), (1, 2, 6, 7)),
    (lambda m: m.Fold((4, 5), 2), (2, 12, 12)), (lambda m: m.Fold(6, 3, padding=1, stride=2), (18, 9)),
])
def test_fold_layers_match_torch(ctor, shape):
    em, tm = ctor(nn), ctor(torch.nn)
    compare_module(em, tm, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("call,err,match", [
    (lambda F, t: F.unfold(t(2, 3, 4, 5, 6), 2), RuntimeError, "Expected 3D or 4D"),
    (lambda F, t: F.unfold(t(1, 3, 4, 5), 6), RuntimeError, "calculated shape of the array of sliding blocks"),
    (lambda F, t: F.unfold(t(1, 3, 4, 5), 2, stride=0), RuntimeError, "stride should be greater than zero"),
    (lambda F, t: F.unfold(t(1, 3, 4, 5), 0), RuntimeError, "kernel size should be greater than zero"),
    (lambda F, t: F.unfold(t(1, 3, 4, 5), 2, padding=-1), RuntimeError, "padding should be non-negative"),
    (lambda F, t: F.unfold(t(1, 3, 4, 5), (2, 3, 4)), RuntimeError, "expected kernel_size equals to 2"),
    (lambda F, t: F.fold(t(1, 12, 11), (4, 5), 2), RuntimeError, r"3 \* 4 = 12, but got input.size\(2\)=11"),
    (lambda F, t: F.fold(t(1, 13, 12), (4, 5), 2), RuntimeError, "divisible by the product of kernel_size"),
    (lambda F, t: F.fold(t(1, 1, 12, 12), (4, 5), 2), RuntimeError, "Expected 2D or 3D"),
    (lambda F, t: F.fold(t(1, 12, 12), (4, 5, 6), 2), RuntimeError, "expected output_size equals to 2"),
])
def test_fold_errors_as_torch(call, err, match):
    for fw in (torch, ember):
        with pytest.raises(err, match=match):
            call(fw.nn.functional, fw.zeros)
