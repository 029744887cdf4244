"""A Python type given as a dtype, as PyTorch reads it: ``float`` is float64 and ``complex`` complex128 whatever the
default dtype, ``int`` int64, ``bool`` bool — in creation functions, conversions and reductions' ``dtype=``."""

import pytest
import torch

import ember

CALLS = {
    "zeros": lambda m, x, t: m.zeros(2, dtype=t),
    "tensor": lambda m, x, t: m.tensor([1, 0], dtype=t),
    "as_tensor": lambda m, x, t: m.as_tensor([1, 0], dtype=t),
    "arange": lambda m, x, t: m.arange(3, dtype=t),
    "full": lambda m, x, t: m.full((2,), 1, dtype=t),
    "new_zeros": lambda m, x, t: x.new_zeros(2, dtype=t),
    "to": lambda m, x, t: x.to(t),
    "to_dtype": lambda m, x, t: x.to(dtype=t),
    "sum": lambda m, x, t: m.sum(x, 0, dtype=t),
    "cumsum": lambda m, x, t: x.cumsum(0, dtype=t),
}


@pytest.mark.parametrize("kind", [float, int, bool, complex], ids=lambda k: k.__name__)
@pytest.mark.parametrize("call", list(CALLS), ids=str)
def test_a_python_type_as_dtype_is_pytorchs(call, kind):
    seen = []
    for m in (ember, torch):
        x = m.ones(2, 3)
        try:
            seen.append(str(CALLS[call](m, x, kind).dtype).split(".")[-1])
        except (RuntimeError, TypeError, NotImplementedError) as err:
            seen.append(f"{type(err).__name__}: {err}")
    assert seen[0] == seen[1]


def test_float_is_float64_whatever_the_default_dtype():
    for m in (ember, torch):
        m.set_default_dtype(m.float64)
        try:
            assert m.zeros(1, dtype=float).dtype == m.float64
            assert m.zeros(1, dtype=complex).dtype == m.complex128
        finally:
            m.set_default_dtype(m.float32)
    assert ember.zeros(1, dtype=float).dtype == ember.float64  # (not the default float32)


@pytest.mark.parametrize("out_dtype", ["float64", "float32"])
def test_a_python_type_as_dtype_with_out_is_pytorchs(out_dtype):
    """``sum(x, 0, dtype=float, out=t)``: float64 as the dtype, which out must have (PyTorch's error otherwise)."""
    seen = []
    for m in (ember, torch):
        t = m.empty(3, dtype=getattr(m, out_dtype))
        try:
            seen.append(str(m.sum(m.ones(2, 3), 0, dtype=float, out=t).dtype).split(".")[-1])
        except RuntimeError as err:
            seen.append(str(err))
    assert seen[0] == seen[1]
