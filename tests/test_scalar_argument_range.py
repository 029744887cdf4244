"""Python numbers given where PyTorch takes a Scalar, read as PyTorch reads them: an int past int64/uint64 is its
argument parser's OverflowError wherever it is given (``lerp``'s weight, ``alpha``, an activation's parameter,
``addcmul``'s value, ``arange``'s bounds), an int converted to an integer kernel's dtype is checked (its
RuntimeError), ``torch.tensor`` of Python numbers checks them against an integer dtype, and a one-element half
precision tensor is filled unchecked (1e5 into float16 is inf)."""

import warnings

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error, outcomes

BIG = 2**64  # past uint64: "int too big to convert"
NEGATIVE = -(2**63) - 1  # below int64: "can't convert negative int to unsigned"
UINT64 = 2**63  # a uint64 Scalar: past an int64 kernel's range


def _f(m):
    return m.ones(2)


def _i(m):
    return m.ones(2, dtype=m.int64)


CALLS = {
    "lerp": lambda m, v: m.lerp(_f(m), _f(m), v),
    "lerp_": lambda m, v: _f(m).lerp_(_f(m), v),
    "add_alpha": lambda m, v: m.add(_f(m), _f(m), alpha=v),
    "sub_alpha": lambda m, v: m.sub(_f(m), _f(m), alpha=v),
    "add__alpha": lambda m, v: _f(m).add_(_f(m), alpha=v),
    "addcmul": lambda m, v: m.addcmul(_f(m), _f(m), _f(m), value=v),
    "addcmul_": lambda m, v: _f(m).addcmul_(_f(m), _f(m), value=v),
    "addcdiv_": lambda m, v: _f(m).addcdiv_(_f(m), _f(m), value=v),
    "threshold": lambda m, v: m.nn.functional.threshold(_f(m), v, 0.0),
    "threshold_value": lambda m, v: m.nn.functional.threshold(_f(m), 0.5, v),
    "hardtanh": lambda m, v: m.nn.functional.hardtanh(_f(m), -1.0, v) if v > 0 else
    m.nn.functional.hardtanh(_f(m), v, 1.0),
    "leaky_relu": lambda m, v: m.nn.functional.leaky_relu(_f(m), v),
    "elu": lambda m, v: m.nn.functional.elu(_f(m), v),
    "softplus": lambda m, v: m.nn.functional.softplus(_f(m), v),
    "celu": lambda m, v: m.nn.functional.celu(_f(m), v),
    "softshrink": lambda m, v: m.nn.functional.softshrink(_f(m), v),
    "hardshrink": lambda m, v: m.nn.functional.hardshrink(_f(m), v),
    "index_add": lambda m, v: _f(m).index_add(0, m.tensor([0]), _f(m)[:1], alpha=v),
    "addmm": lambda m, v: m.addmm(m.ones(2, 2), m.ones(2, 2), m.ones(2, 2), beta=v),
    "baddbmm": lambda m, v: m.baddbmm(m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2), alpha=v),
    "arange": lambda m, v: m.arange(0, v) if v > 0 else m.arange(v, 0),
    "setitem": lambda m, v: _f(m).__setitem__(0, v),
    "tensor": lambda m, v: m.tensor(v),
    "tensor_list": lambda m, v: m.tensor([1, v]),
}


@pytest.mark.parametrize("value", [BIG, NEGATIVE], ids=["past_uint64", "below_int64"])
@pytest.mark.parametrize("call", CALLS)
def test_an_int_past_what_pytorch_reads_is_its_error(call, value):
    assert_same_error(lambda m: CALLS[call](m, value))


INTEGER_CALLS = {
    "addcmul_int64": lambda m, v: m.addcmul(_i(m), _i(m), _i(m), value=v),
    "addcmul__int64": lambda m, v: _i(m).addcmul_(_i(m), _i(m), value=v),
    "threshold_int64": lambda m, v: m.nn.functional.threshold(_i(m), v, 2),
    "hardtanh_int64": lambda m, v: m.nn.functional.hardtanh(_i(m), -1, v),
    "arange": lambda m, v: m.arange(v),
    "arange_end": lambda m, v: m.arange(v - 1, v),
    "setitem_float": lambda m, v: _f(m).__setitem__(0, v),
    "tensor": lambda m, v: m.tensor(v),
    "tensor_list": lambda m, v: m.tensor([v, v]),
}


@pytest.mark.parametrize("call", INTEGER_CALLS)
def test_a_uint64_scalar_for_an_int64_kernel_is_its_error(call):
    assert_same_error(lambda m: INTEGER_CALLS[call](m, UINT64))


@pytest.mark.parametrize("dtype,value", [("int8", 300), ("int8", -129), ("uint8", -256), ("int64", UINT64 - 1)])
def test_addcmul_value_is_converted_to_an_integer_result_as_pytorch(dtype, value):
    def call(m):
        t = m.ones(2, dtype=getattr(m, dtype))
        return m.addcmul(t, t, t, value=value)
    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert_same_error(call)
    else:
        assert got.dtype.name == str(want.dtype).split(".")[1] and got.tolist() == want.tolist()


@pytest.mark.parametrize("value", [2.5, -2.7, True])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_addcmul_truncates_a_float_value_for_integers(value, inplace, dtype):
    def call(m):
        t = m.ones(2, dtype=getattr(m, dtype))
        return t.clone().addcmul_(t, t, value=value) if inplace else m.addcmul(t, t, t, value=value)
    got, want = call(ember), call(torch)
    assert got.dtype is getattr(ember, dtype) and got.tolist() == want.tolist()


def test_addcmul_and_addcdiv_refuse_what_pytorch_has_no_kernel_for():
    assert_same_error(lambda m: m.addcmul(m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool),
                                          m.ones(2, dtype=m.bool)))
    assert_same_error(lambda m: m.addcdiv(m.ones(2), m.ones(2, dtype=m.int64), m.ones(2, dtype=m.bool)))
    assert_same_error(lambda m: m.addcdiv(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64),
                                          m.ones(2, dtype=m.int64)))
    assert_same_error(lambda m: m.addcmul(m.ones(2), m.ones(2), m.ones(2), value=1 + 2j))
    assert_same_error(lambda m: m.addcmul(m.ones(2, dtype=m.int8), m.ones(2, dtype=m.int8),
                                          m.ones(2, dtype=m.int8), value=1e30))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("value", [300, -1, -255, -256, 70000, -40000, 2**40, -(2**63), 2.5, -0.5, 255.9, 1e10,
                                   1e20, float("nan"), float("inf"), True])
def test_tensor_of_python_numbers_checks_an_integer_dtype_as_pytorch(dtype, value):
    def call(m):
        return m.tensor([value, 1], dtype=getattr(m, dtype))
    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert_same_error(call)
    else:
        assert got.tolist() == want.tolist()


def test_tensor_reads_an_int_past_int64_as_a_double_for_a_floating_dtype():
    for make in (lambda m: m.tensor(BIG, dtype=m.float32), lambda m: m.tensor([1.5, BIG]),
                 lambda m: m.tensor([UINT64, 1.5]), lambda m: m.tensor([UINT64], dtype=m.float64)):
        got, want = make(ember), make(torch)
        assert got.dtype.name == str(want.dtype).split(".")[1]
        assert_close(got, want.numpy())


ONE_ELEMENT_FILLS = {
    "full": lambda m, shape, d, v: m.full(shape, v, dtype=d),
    "full_like": lambda m, shape, d, v: m.full_like(m.zeros(shape, dtype=d), v),
    "new_full": lambda m, shape, d, v: m.zeros(3, dtype=d).new_full(shape, v),
    "fill_": lambda m, shape, d, v: m.zeros(shape, dtype=d).fill_(v),
    "fill": lambda m, shape, d, v: m.fill(m.zeros(shape, dtype=d), v),
    "constant_": lambda m, shape, d, v: m.nn.init.constant_(m.zeros(shape, dtype=d), v),
}


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (3,)])
@pytest.mark.parametrize("dtype,value", [("float16", 1e5), ("float16", -1e5), ("float16", 65519.0),
                                         ("float16", 65520.0), ("float16", 100000), ("bfloat16", 1e39),
                                         ("float32", 1e39), ("int8", 300)])
@pytest.mark.parametrize("fill", ONE_ELEMENT_FILLS)
def test_a_one_element_half_tensor_is_filled_unchecked_as_pytorch(fill, dtype, value, shape):
    def call(m):
        return ONE_ELEMENT_FILLS[fill](m, shape, getattr(m, dtype), value)
    (got, got_warnings), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert_same_error(call)
    else:
        assert got_warnings == []
        assert got.shape == tuple(want.shape)
        assert np.array_equal(got.float().numpy(), want.float().numpy())


def test_a_one_element_view_is_filled_unchecked_too():
    for make in (lambda m: m.zeros(4, dtype=m.float16)[::4].fill_(1e5),
                 lambda m: m.zeros(2, dtype=m.float16)[0].fill_(-1e5)):
        assert np.array_equal(make(ember).float().numpy(), make(torch).float().numpy())


def test_fill_with_a_tensor_past_the_half_range_gives_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ember.zeros(3, dtype=ember.float16).fill_(ember.tensor(1e5))
    assert np.isinf(out.float().numpy()).all()


def test_init_constant_checks_the_value_as_fill_():
    assert_same_error(lambda m: m.nn.init.constant_(m.zeros(3, dtype=m.float16), 1e5))
    assert_same_error(lambda m: m.nn.init.constant_(m.zeros(3, dtype=m.int8), 300))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("value", [300, -1, -256, 100, float("nan"), -0.5])
def test_a_long_list_is_checked_as_a_short_one(dtype, value):
    def call(m):
        return m.tensor([1] * 40 + [value], dtype=getattr(m, dtype))
    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert_same_error(call)
    else:
        assert got.tolist() == want.tolist()
