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


OUT_OPS = {
    "add": lambda m, x, o: m.add(x, x, out=o),
    "exp": lambda m, x, o: m.exp(x, out=o),
    "neg": lambda m, x, o: m.neg(x, out=o),
    "clamp": lambda m, x, o: m.clamp(x, 0, out=o),
    "pow": lambda m, x, o: m.pow(x, 2, out=o),
    "cumsum": lambda m, x, o: m.cumsum(x, 0, out=o),
    "maximum": lambda m, x, o: m.maximum(x, x, out=o),
    "sort": lambda m, x, o: m.sort(x, 0, out=(o, m.empty(0, dtype=m.long)))[0],
    "tril": lambda m, x, o: m.tril(x, out=o),
    "triu": lambda m, x, o: m.triu(x, -1, out=o),
    "add into float64": lambda m, x, o: m.add(x, 1, out=o.double()),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("out", ["empty", "another shape"])
@pytest.mark.parametrize("op", list(OUT_OPS))
@pytest.mark.parametrize("inp", ["channels_last", "transposed", "transposed matrix", "permuted", "slice"])
def test_an_out_that_is_resized_is_laid_out_as_computed(inp, op, out):
    got = []
    for m in (ember, torch):
        o = m.empty(0) if out == "empty" else m.empty(3, 3)
        y = OUT_OPS[op](m, INPUTS[inp](m), o)
        got.append((y.stride(), y.dtype == m.float64, y.numpy()))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-6)


def test_tril_and_triu_take_out_as_pytorchs():
    from oracle import assert_same_error

    x = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    assert_same_error(lambda m: m.tril(m.tensor(x), out=m.empty(3, 3, dtype=m.float64)))
    assert_same_error(lambda m: m.triu(m.tensor(x, requires_grad=True), out=m.empty(0)))
    got = []
    for m in (ember, torch):
        y = m.tensor(x)
        m.triu(y, 1, out=y)  # (in place through out=, as PyTorch allows)
        got.append(y.tolist())
    assert got[0] == got[1]


ODD_SIZE_ONE = {  # operands NumPy calls C-contiguous whose size-1 dimensions step oddly
    "size-1 middle": lambda m: m.tensor(X[0, 0, :2, :3].copy()).as_strided((2, 1, 3), (3, 7, 1)),
    "size-1 outer": lambda m: m.tensor(X[0, 0, :2, :3].copy()).as_strided((1, 2, 3), (100, 3, 1)),
    "a row transposed twice": lambda m: m.tensor(X[0, 0, :, :1].copy()).t(),
}


@pytest.mark.parametrize("op", ["clone", "flip", "argsort"])
@pytest.mark.parametrize("inp", list(ODD_SIZE_ONE))
def test_a_size_one_dimensions_stride_is_kept_as_pytorchs_empty_like_keeps_it(inp, op):
    fns = {"clone": lambda m, x: x.clone(), "flip": lambda m, x: m.flip(x, [-1]),
           "argsort": lambda m, x: m.argsort(x, -1)}
    got = []
    for m in (ember, torch):
        y = fns[op](m, ODD_SIZE_ONE[inp](m))
        got.append((y.stride(), y.numpy().tolist()))
    assert got[0] == got[1]
