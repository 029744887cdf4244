"""A number that the kernel cannot hold is PyTorch's error, not NumPy's cast (which drops a complex number's imaginary
part with a warning, or overflows to inf): addcmul's and addcdiv's value and lerp's weight converted to the kernel's
opmath type (float for half precision: 1e40 is refused), a complex number written in place into a real tensor
(add_, sub_, mul_, div_, pow_), and a complex fill value for a real dtype (one whose imaginary part is 0 is its real
part); with PyTorch's exception type and message."""

import warnings

import pytest
import torch

import ember

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


def _outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's ComplexWarning: the value silently changed)
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
            return type(e).__name__, str(e)
    return "ok", str(out.dtype).rpartition(".")[2], repr(out.tolist())  # (repr: NaN equals NaN)


def _same(fn):
    assert _outcome(ember, fn) == _outcome(torch, fn)


def _x(lib, dtype):
    return lib.ones(2, dtype=getattr(lib, dtype))


def _inexact(lib, dtype):
    x = _x(lib, dtype)
    return x if x.is_floating_point() or x.is_complex() else x.float()


@pytest.mark.parametrize("value", [1j, 1 + 0j, 1e40, 1e300, float("inf"), 2.5, 1000, 10**6, 2**40, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_addcmul_addcdiv_value_and_lerp_weight(dtype, value):
    _same(lambda lib: lib.addcmul(_x(lib, dtype), _x(lib, dtype), _x(lib, dtype), value=value))
    _same(lambda lib: lib.addcdiv(_inexact(lib, dtype), _inexact(lib, dtype), _inexact(lib, dtype), value=value))
    _same(lambda lib: lib.lerp(_x(lib, dtype), _x(lib, dtype), value))


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_", "pow_"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("number", [1j, 2 + 0j])
def test_a_complex_number_into_a_real_tensor_in_place(op, dtype, number):
    _same(lambda lib: getattr(_x(lib, dtype), op)(number))


@pytest.mark.parametrize("value", [1j, 0j, 2 + 0j, 1e40])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int8", "bool", "complex64"])
@pytest.mark.parametrize("how", ["fill_", "full", "masked_fill", "new_full", "full_like"])
def test_a_complex_fill_value_for_a_real_dtype(how, dtype, value):
    def fill(lib):
        x = _x(lib, dtype)
        if how == "fill_":
            return x.fill_(value)
        if how == "full":
            return lib.full((2,), value, dtype=x.dtype)
        if how == "masked_fill":
            return x.masked_fill(lib.tensor([True, False]), value)
        if how == "new_full":
            return x.new_full((2,), value)
        return lib.full_like(x, value)
    _same(fill)
