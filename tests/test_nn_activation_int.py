"""Activations and clamps on integer and bool tensors, against PyTorch: hardtanh, relu6 and threshold keep the
integer dtype (their limits converted to it; PyTorch's errors for bool, and for negative limits on an unsigned
type), relu and clamp follow their own rules, and every activation whose PyTorch kernel has no integer version
raises its NotImplementedError (ember used to compute them in float32)."""

from __future__ import annotations

import pytest
import torch

import ember

OPS = {
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "hardtanh(-2, 2)": lambda m, x: m.nn.functional.hardtanh(x, -2, 2),
    "hardtanh(-0.5, 0.5)": lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.5),
    "hardtanh inplace": lambda m, x: m.nn.functional.hardtanh(x.clone(), inplace=True),
    "Hardtanh": lambda m, x: m.nn.Hardtanh(-3, 2)(x),
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "ReLU6 inplace": lambda m, x: m.nn.ReLU6(inplace=True)(x.clone()),
    "relu": lambda m, x: m.nn.functional.relu(x),
    "relu_": lambda m, x: x.clone().relu_(),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 1, 20),
    "threshold(0.5, 0.5)": lambda m, x: m.nn.functional.threshold(x, 0.5, 0.5),
    "threshold inplace": lambda m, x: m.nn.functional.threshold(x.clone(), 1, 20, inplace=True),
    "clamp": lambda m, x: m.clamp(x, -1, 1),
    "clamp float": lambda m, x: m.clamp(x, -0.5, 0.5),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x),
    "elu": lambda m, x: m.nn.functional.elu(x),
    "selu": lambda m, x: m.nn.functional.selu(x),
    "celu": lambda m, x: m.nn.functional.celu(x),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "mish": lambda m, x: m.nn.functional.mish(x),
    "softplus": lambda m, x: m.nn.functional.softplus(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x),
    "hardshrink": lambda m, x: m.nn.functional.hardshrink(x),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x),
    "rrelu": lambda m, x: m.nn.functional.rrelu(x),
    "glu": lambda m, x: m.nn.functional.glu(x),
    "prelu": lambda m, x: m.nn.functional.prelu(x, m.tensor([0.25])),
    "softsign": lambda m, x: m.nn.functional.softsign(x),
    "tanhshrink": lambda m, x: m.nn.functional.tanhshrink(x),
}


def _outcome(m, op, dtype):
    x = m.tensor([-3, 0, 1, 5, 7, -1]).to(getattr(m, dtype))
    try:
        y = OPS[op](m, x)
    except (RuntimeError, NotImplementedError) as err:
        return type(err).__name__, str(err).split(". ")[0]
    values = [round(v, 5) for v in y.double().tolist()]
    return str(y.dtype).split(".")[1], values


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", list(OPS))
def test_activation_of_integers_as_pytorch(op, dtype):
    assert _outcome(ember, op, dtype) == _outcome(torch, op, dtype)


def test_integer_hardtanh_takes_no_gradient_and_keeps_the_tensor_in_place():
    for m in (torch, ember):
        x = m.tensor([-3, 0, 2, 9])
        out = m.nn.functional.hardtanh(x, -2, 2, inplace=True)
        assert out is x and x.tolist() == [-2, 0, 2, 2] and out.grad_fn is None


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_hardtanh_numpy_scalar_bounds_keep_the_dtype(dtype):
    # (PyTorch reads an np.float64 bound as a Python number; NumPy's scalar promoted a float32 result to float64)
    import numpy as np

    seen = []
    for m in (torch, ember):
        x = m.tensor([-2.0, -0.25, 0.25, 3.0]).to(getattr(m, dtype))
        out = m.nn.functional.hardtanh(x, np.float64(-0.5), np.float64(0.5))
        seen.append((str(out.dtype).split(".")[-1], out.tolist()))
    assert seen[1] == seen[0]
