"""Unary floating ops (sin, exp, sqrt, sigmoid, erf, ...) of bool and integer tensors against PyTorch: the result's
dtype (the default float dtype, float32, for every integer and bool input, whatever NumPy's own rule would give:
float16 for bool and int8), the in-place form's refusal, and ``out=`` of another float dtype (computed in float32
then cast, as PyTorch's); a gradient is impossible there (no integer tensor requires grad, no forward-AD primal)."""

import numpy as np
import pytest
import torch

import ember

OPS = ["sin", "cos", "tan", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sigmoid",
       "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "lgamma",
       "digamma", "reciprocal", "sinc", "logit", "i0", "special.expit", "special.ndtr", "special.log_ndtr",
       "special.i0e", "special.i1", "special.erfcx", "nn.functional.softplus", "nn.functional.silu",
       "nn.functional.gelu", "nn.functional.elu", "nn.functional.logsigmoid", "angle", "deg2rad", "rad2deg", "frac",
       "trunc", "floor", "ceil", "round", "sign", "sgn", "neg", "abs", "square", "nan_to_num", "positive", "signbit",
       "nn.functional.relu", "nn.functional.hardswish", "nn.functional.mish"]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]


def _op(lib, name):
    fn = lib
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


def _outcome(fn):
    try:
        out = fn()
    except (RuntimeError, TypeError, NotImplementedError) as err:
        return type(err), str(err)
    return str(out.dtype).rpartition(".")[2]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", OPS)
def test_result_dtype_as_torch(name, dtype):
    got, want = (_outcome(lambda lib=lib: _op(lib, name)(lib.tensor([0, 1, 1], dtype=getattr(lib, dtype))))
                 for lib in (ember, torch))
    assert got == want


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64"])
@pytest.mark.parametrize("name", ["sin_", "exp_", "sqrt_", "sigmoid_", "log_", "erf_", "reciprocal_", "abs_", "neg_",
                                  "floor_", "sign_", "frac_"])
def test_in_place_on_integers_as_torch(name, dtype):
    got, want = (_outcome(lambda lib=lib: getattr(lib.tensor([0, 1, 1], dtype=getattr(lib, dtype)), name)())
                 for lib in (ember, torch))
    assert got == want


@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "sigmoid"])
def test_out_of_another_dtype_as_torch(name, dtype):
    """``out=`` int64: PyTorch's cast error; ``out=`` float64: the float32 result, cast (as PyTorch's, not a float64
    computation: within float32's rounding of PyTorch's values)."""
    def run(lib, out_dtype):
        out = lib.empty(3, dtype=getattr(lib, out_dtype))
        return _outcome(lambda: _op(lib, name)(lib.tensor([0, 1, 1], dtype=getattr(lib, dtype)), out=out)), out

    assert run(ember, "int64")[0] == run(torch, "int64")[0]
    (got, got_out), (want, want_out) = run(ember, "float64"), run(torch, "float64")
    assert got == want == "float64"
    assert got_out.numpy().astype(np.float32).astype(np.float64).tolist() == got_out.tolist()  # (float32 values)
    np.testing.assert_allclose(got_out.numpy(), want_out.numpy(), rtol=2e-7)
