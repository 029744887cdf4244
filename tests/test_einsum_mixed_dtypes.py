"""einsum of operands of several dtypes, and of integers, as PyTorch's pairwise contraction gives them: a product
promotes, a summed pair (a bmm) needs one dtype (its error naming the left then the right), a letter summed on one
operand alone makes an integer int64; values and gradients in the result's dtype."""

import itertools

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, outcomes

NAMES = ["float32", "float64", "int64", "int32", "float16", "bfloat16"]
EQUATIONS = ["ij,jk,kl->il", "i,i,i->", "i,j,i->j", "i,j,j->i", "ij,j,i->", "ij,jk->ik", "i,i->i", "i,j->ij",
             "bi,bi->b", "ii,i->i", "ij,k->k", "i,j->"]


def _operands(m, equation, dtypes, size=2):
    lhs = equation.split("->")[0].split(",")
    return [m.arange(1, size ** len(s) + 1).reshape((size,) * len(s)).to(getattr(m, d)) if size else
            m.zeros((0,) * len(s), dtype=getattr(m, d)) for s, d in zip(lhs, dtypes)]


def _same(equation, dtypes, size=2):
    def call(m):
        return m.einsum(equation, *_operands(m, equation, dtypes, size))
    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
        return
    assert not isinstance(got, Exception), got
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] and tuple(got.shape) == tuple(want.shape)
    assert_close(got.double(), want.double().numpy(), rtol=1e-2)


@pytest.mark.parametrize("equation", EQUATIONS)
def test_mixed_dtypes_as_pytorch(equation):
    n = equation.count(",") + 1
    for dtypes in itertools.product(NAMES[:4] if n == 3 else NAMES, repeat=n):
        _same(equation, dtypes)


@pytest.mark.parametrize("equation", ["i,i,i->", "ij,jk->ik", "ij,jk,kl->il", "i,i->i"])
def test_empty_operands_give_pytorchs_dtype(equation):
    n = equation.count(",") + 1
    for dtypes in itertools.product(["float32", "float64", "float16"], repeat=n):
        _same(equation, dtypes, size=0)


@pytest.mark.parametrize("equation,dtype", [("ij->i", "int32"), ("ii->", "int32"), ("ii->i", "int32"),
                                            ("ij,k->k", "int32"), ("ij->i", "bool"), ("ij,j->i", "int32"),
                                            ("ij,jk->ik", "bool"), ("i,i->i", "bool"), ("ij->", "float16")])
def test_integer_and_bool_sums_as_pytorch(equation, dtype):
    _same(equation, [dtype] * (equation.count(",") + 1))


def test_gradients_reach_each_operand_in_its_own_dtype():
    a = np.arange(1.0, 5.0).reshape(2, 2)
    outs = []
    for m in (ember, torch):
        x = m.tensor(a, dtype=m.float32, requires_grad=True)
        y = m.tensor(a[0], dtype=m.float64, requires_grad=True)
        out = m.einsum("ij,j->ij", x, y)
        out.sum().backward()
        outs.append((out, x.grad, y.grad))
    for got, want in zip(*outs):
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert_close(got.detach(), want.detach().numpy())
