"""Factory functions' arguments as PyTorch reads them: no size at all is a TypeError (``zeros(())`` is the 0-d
tensor), a NumPy scalar fill value is read as PyTorch's argument parser reads a Scalar, and any int in the uint64
range fills a bool tensor."""

import warnings

import numpy as np
import pytest

from tests.oracle import assert_close, assert_same_outcome, outcomes

FACTORIES = ["zeros", "ones", "empty", "rand", "randn"]


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("kwargs", [{}, {"dtype": "float32"}])
def test_no_size_is_a_type_error(name, kwargs):
    def call(m):
        return getattr(m, name)(**{k: getattr(m, v) for k, v in kwargs.items()})

    (got, _), (want, _) = outcomes(call)
    assert isinstance(want, TypeError) and isinstance(got, TypeError)
    assert f"{name}()" in str(got)


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("size", [(), []])
def test_empty_size_is_zero_dimensional(name, size):
    (got, _), (want, _) = outcomes(lambda m: getattr(m, name)(size))
    assert tuple(got.shape) == tuple(want.shape) == ()
    (got, _), (want, _) = outcomes(lambda m: getattr(m, name)(size=size))
    assert tuple(got.shape) == tuple(want.shape) == ()


NUMPY_SCALARS = [np.bool_(True), np.bool_(False), np.int8(-3), np.int32(2), np.int64(7), np.uint8(3),
                 np.float16(2.5), np.float32(1.5), np.float64(-0.25), np.complex64(1 + 2j), np.complex128(1j)]


@pytest.mark.parametrize("value", NUMPY_SCALARS, ids=repr)
@pytest.mark.parametrize("factory", ["full", "scalar_tensor"])
def test_numpy_scalar_fill_value(factory, value):
    def call(m):
        with warnings.catch_warnings():  # (float() of a complex64 warns, in both)
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return m.full((2,), value) if factory == "full" else m.scalar_tensor(value)

    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert type(got) is type(want)
        return
    assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
    assert_close(got, want)


@pytest.mark.parametrize("value", [2**63, 2**64 - 1, 2**64, -2**63 - 1, -5, 0])
def test_bool_full_from_any_uint64(value):
    assert_same_outcome(lambda m: m.full((1,), value, dtype=m.bool))


@pytest.mark.parametrize("args", [lambda m: (np.bool_(True), 3), lambda m: (0, 3, np.bool_(True)),
                                  lambda m: (np.complex64(3),), lambda m: (m.tensor(3.0),),
                                  lambda m: (m.tensor(True), 3)], ids=["bool start", "bool step", "complex64",
                                                                       "0-d tensor", "0-d bool tensor"])
def test_arange_reads_numpy_scalars_and_0d_tensors_as_pytorchs_scalar(args):
    # (a NumPy bool or complex64 is read through float(), a float: float32, as PyTorch's; ember gave int64)
    def call(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return m.arange(*args(m))

    (got, _), (want, _) = outcomes(call)
    assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
    assert_close(got, want)


@pytest.mark.parametrize("value", [lambda m: m.tensor([3.0]), lambda m: m.tensor(3.0, requires_grad=True)],
                         ids=["1-d", "requires grad"])
@pytest.mark.parametrize("factory", ["arange", "scalar_tensor"])
def test_a_tensor_that_is_no_number_is_refused_as_pytorchs(factory, value):
    (got, _), (want, _) = outcomes(lambda m: getattr(m, factory)(value(m)))
    assert isinstance(want, TypeError) and isinstance(got, TypeError)
    assert "must be Number, not Tensor" in str(got)
