"""Arguments PyTorch reads in its own way: a NumPy scalar ``alpha`` (an integer one an int, any other, np.bool_
too, a float), a number exponent a half-precision or integer tensor cannot hold (PyTorch's overflow error),
``keepdim`` given to ``sum``/``mean`` without a dim (False too: TypeError)."""

import numpy as np
import pytest
from oracle import assert_close, outcomes


def _same(run):
    (got, _), (want, _) = outcomes(run)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), (got, want)
    else:
        assert not isinstance(got, Exception), got
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert_close(got.double(), want.double())


ALPHAS = [np.int64(2), np.int32(2), np.uint8(2), np.float64(2.5), np.float32(2.0), np.float16(2.0), np.bool_(True),
          2, 0, -1]


@pytest.mark.parametrize("alpha", ALPHAS, ids=[type(a).__name__ for a in ALPHAS])
@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float16", "bool"])
def test_numpy_scalar_alpha(op, dtype, alpha):
    def run(m):
        dt = getattr(m, dtype)
        x = m.tensor([1, 0, 1], dtype=dt)
        y = m.tensor([1, 1, 0], dtype=dt)
        return getattr(x, op)(y, alpha=alpha)

    _same(run)


EXPONENTS = [1e5, -1e5, 65504.0, 65505.0, 70000, 1e4, float("inf"), float("nan"), 0.5, 3, 2**40, 300, 1e40]


@pytest.mark.parametrize("exponent", EXPONENTS, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "int32"])
@pytest.mark.parametrize("form", ["pow", "pow_", "operator"])
def test_number_exponent_beyond_the_dtype(form, dtype, exponent):
    def run(m):
        x = m.ones(3, dtype=getattr(m, dtype))
        if form == "pow_":
            return x.pow_(exponent)
        return x ** exponent if form == "operator" else m.pow(x, exponent)

    _same(run)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("call", ["method", "function", "function_dtype", "method_dtype"])
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_keepdim_without_dim(name, call, keepdim):
    def run(m):
        x = m.ones(2, 3)
        kw = {"keepdim": keepdim, **({"dtype": m.float64} if call.endswith("dtype") else {})}
        return getattr(x, name)(**kw) if call.startswith("method") else getattr(m, name)(x, **kw)

    _same(run)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_keepdim_with_dim_still_reduces(name):
    def run(m):
        x = m.arange(6.0).view(2, 3)
        return getattr(x, name)(1, False) + getattr(m, name)(x, dim=0, keepdim=True).sum()

    _same(run)


@pytest.mark.parametrize("sizes", [(-1,), (2, -3), (-5,), (3, -1, 2)], ids=str)
def test_resize_to_negative_sizes(sizes):
    def run(m):
        return m.ones(3).resize_(*sizes)

    (got, _), (want, _) = outcomes(run)
    assert isinstance(want, RuntimeError) and type(got) is type(want) and str(got) == str(want)
