"""The reductions that take ``dtype=`` (sum, prod, nansum, cumsum, cumprod), asked for each dtype, of an input that
requires grad while recording, of one that does not, of one that does under no_grad and under inference mode, of
an integer input and of a complex one, against PyTorch: its error where it refuses (an integer or bool result of a tensor that
requires grad while recording would have a history PyTorch's autograd refuses; a floating or complex one is fine),
else the result's dtype, requires_grad and values, and the gradient where there is one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

OPS = {
    "sum": lambda m, x, dt: m.sum(x, dtype=dt),
    "sum(dim)": lambda m, x, dt: x.sum(1, dtype=dt),
    "prod": lambda m, x, dt: m.prod(x, dtype=dt),
    "prod(dim)": lambda m, x, dt: x.prod(0, dtype=dt),
    "nansum": lambda m, x, dt: m.nansum(x, dtype=dt),
    "cumsum": lambda m, x, dt: m.cumsum(x, 1, dtype=dt),
    "cumprod": lambda m, x, dt: m.cumprod(x, 0, dtype=dt),
}
DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
STATES = ["requires grad", "no grad needed", "under no_grad", "under inference_mode", "integer input", "complex input"]

DATA = [[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]]


def _outcome(m, op, dtype, state):
    if state == "integer input":
        x = m.tensor([[1, -2, 0], [3, 0, -1]])
    elif state == "complex input":
        x = m.tensor(DATA) * (1 + 0.5j)
    else:
        x = m.tensor(DATA, requires_grad=state != "no grad needed")
    dt = getattr(m, dtype)
    try:
        if state == "under no_grad":
            with m.no_grad():
                out = OPS[op](m, x, dt)
        elif state == "under inference_mode":
            with m.inference_mode():
                out = OPS[op](m, x, dt)
        else:
            out = OPS[op](m, x, dt)
    except Exception as err:  # noqa: BLE001 - compared with torch's
        return f"{type(err).__name__}: {err}"
    grad = None
    if out.requires_grad and not out.is_complex():  # (PyTorch's backward of a complex sum of a real input fails)
        out.float().sum().backward()
        grad = x.grad.tolist()
    values = out.to(m.complex128 if out.is_complex() else m.float64).tolist()
    return str(out.dtype).split(".")[-1], out.requires_grad, np.asarray(values), grad


def _same(got, want) -> bool:
    """PyTorch's error (ember's message may add a hint after it), or its dtype, requires_grad, values, gradient."""
    if isinstance(want, str) or isinstance(got, str):
        return isinstance(want, str) and isinstance(got, str) and got.startswith(want)
    return got[:2] == want[:2] and np.allclose(got[2], want[2], rtol=1e-2, atol=1e-3) and \
        (got[3] is None) == (want[3] is None) and (got[3] is None or np.allclose(got[3], want[3], rtol=1e-2, atol=1e-3))


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("op", list(OPS))
def test_reductions_with_dtype_refuse_or_compute_as_pytorch(op, state):
    wrong = []
    # (a complex input with a real dtype=: ember warns that the imaginary parts are discarded, PyTorch only for uint8)
    for dtype in ["complex64"] if state == "complex input" else DTYPES:
        got, want = (_outcome(m, op, dtype, state) for m in (ember, torch))
        if not _same(got, want):
            wrong.append((dtype, got, want))
    assert not wrong, wrong
