"""The layout of sort, argsort, msort, topk, flip, fliplr, flipud (laid out as PyTorch's ``empty_like`` of the
input: a transposed, permuted or channels-last input gives a result with its strides) and of tril / triu (row-major
whatever the input), against PyTorch's strides and values."""

import numpy as np
import pytest
import torch

import ember

X = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
INPUTS = {
    "contiguous": lambda m: m.tensor(X),
    "channels_last": lambda m: m.tensor(X).contiguous(memory_format=m.channels_last),
    "transposed": lambda m: m.tensor(X).transpose(2, 3),
    "transposed matrix": lambda m: m.tensor(X[0, 0]).t(),
    "transposed slice": lambda m: m.tensor(X[0, 0]).t()[::2],
    "slice": lambda m: m.tensor(X)[:, :, ::2],
    "permuted": lambda m: m.tensor(X).permute(3, 1, 0, 2),
    "int64 permuted": lambda m: m.tensor((X * 10).astype(np.int64)).permute(3, 1, 0, 2),
}
OPS = {
    "argsort": lambda m, x: m.argsort(x, dim=-1),
    "argsort dim 1 descending": lambda m, x: m.argsort(x, dim=1, descending=True),
    "sort values": lambda m, x: m.sort(x, dim=-1)[0],
    "sort indices": lambda m, x: m.sort(x, dim=0, stable=True)[1],
    "msort": lambda m, x: m.msort(x),
    "Tensor.sort": lambda m, x: x.sort(dim=1)[0],
    "fliplr": lambda m, x: m.fliplr(x),
    "flipud": lambda m, x: m.flipud(x),
    "flip": lambda m, x: m.flip(x, [1]),
    "Tensor.flip": lambda m, x: x.flip(0, -1),
    "tril": lambda m, x: m.tril(x),
    "triu": lambda m, x: m.triu(x, 1),
    "Tensor.tril": lambda m, x: x.tril(-1),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("inp", list(INPUTS))
def test_strides_and_values_are_pytorchs(inp, op):
    got = []
    for m in (ember, torch):
        y = OPS[op](m, INPUTS[inp](m))
        got.append((y.stride(), y.numpy().tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("op", ["sort values", "flip", "tril"])
def test_gradients_through_a_channels_last_input(op):
    got = []
    for m in (ember, torch):
        x = m.tensor(X).contiguous(memory_format=m.channels_last).requires_grad_()
        y = OPS[op](m, x)
        (y * m.arange(y.numel()).reshape(y.shape)).sum().backward()
        got.append(x.grad.numpy().tolist())
    assert got[0] == got[1]
