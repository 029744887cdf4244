"""``square`` is PyTorch's pow(x, 2): recorded, its node is PowBackward0 with one edge; values, dtypes and
gradients (first and second order) as PyTorch's for every dtype."""

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64"]


def structure(t):
    fn = t.grad_fn
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (), (0, 3), "t"])
def test_square_records_pow_backward0(dtype, shape):
    base = np.random.default_rng(0).standard_normal((3, 4) if shape == "t" else shape)
    out = []
    for lib in (torch, ember):
        x = lib.tensor(base, dtype=getattr(lib, dtype))
        x = (x.t() if shape == "t" else x).requires_grad_()
        y = x.square()
        (g,) = lib.autograd.grad(y.sum().real if y.is_complex() else y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum().real if g.is_complex() else g.sum(), x)
        out.append((x, y, g, gg))
    (_, ty, tg, tgg), (_, ey, eg, egg) = out
    assert structure(ey) == structure(ty) == ("PowBackward0", ["AccumulateGrad"])
    for t, e in ((ty, ey), (tg, eg), (tgg, egg)):
        assert str(e.dtype)[6:] == str(t.dtype)[6:] and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.detach().to(ember.float64 if not e.is_complex() else e.dtype).numpy(),
                                      t.detach().to(torch.float64 if not t.is_complex() else t.dtype).numpy())


def test_square_of_a_non_leaf():
    out = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        out.append(structure((x * 3).square()))
    assert out[1] == out[0] == ("PowBackward0", ["MulBackward0"])


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "float32"])
def test_square_unrecorded_values(dtype):
    values = [0, 1, 3, 12] if dtype != "bool" else [True, False, True, True]
    t = torch.tensor(values, dtype=getattr(torch, dtype)).square()
    e = ember.tensor(values, dtype=getattr(ember, dtype)).square()
    assert str(e.dtype)[6:] == str(t.dtype)[6:] and e.tolist() == t.tolist() and e.grad_fn is None
