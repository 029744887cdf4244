"""A tensor inside the list given to ``torch.tensor`` (``as_tensor``, ``new_tensor``) with a dtype is stored through
the Python number protocol of that dtype, as PyTorch's: an integer or bool dtype reads it with ``__index__`` (a
floating or complex tensor is its TypeError, also of one element, as is one of more elements), a floating dtype
with ``__float__`` (a complex value with an imaginary part: RuntimeError; more elements: ValueError), a complex
one as one element. ``float(t)`` and ``int(t)`` of a complex tensor follow PyTorch's checked conversion."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (no warning on either side: NumPy's ComplexWarning would be one)
            out = fn()
    except Exception as e:  # noqa: BLE001 (the type and message compared)
        return type(e), str(e)
    return str(out.dtype).split(".")[-1], out.tolist()


CASES = {
    "float_into_int64": lambda m: m.tensor([m.tensor(2.5)], dtype=m.int64),
    "float_into_int32_beside_number": lambda m: m.tensor([m.tensor(2.5), 1], dtype=m.int32),
    "float_into_uint8": lambda m: m.tensor([m.tensor(2.5)], dtype=m.uint8),
    "float_into_bool": lambda m: m.tensor([m.tensor(2.5)], dtype=m.bool),
    "half_into_int64": lambda m: m.tensor([m.tensor(2.5, dtype=m.float16)], dtype=m.int64),
    "whole_float_into_int64": lambda m: m.tensor([m.tensor(2.0)], dtype=m.int64),
    "one_element_float_into_int64": lambda m: m.tensor([m.tensor([2.5])], dtype=m.int64),
    "two_floats_into_int8": lambda m: m.tensor([m.tensor([2.5, 1.5])], dtype=m.int8),
    "two_ints_into_int8": lambda m: m.tensor([m.tensor([2, 3])], dtype=m.int8),
    "empty_into_int8": lambda m: m.tensor([m.tensor([])], dtype=m.int8),
    "empty_into_float32": lambda m: m.tensor([m.tensor([])], dtype=m.float32),
    "empty_inferred": lambda m: m.tensor([m.tensor([])]),
    # nothing stored (the first elements end in an empty list): no tensor read, an empty tensor of the dtype
    "empty_first_row_into_int64": lambda m: m.tensor([[], m.tensor([])], dtype=m.int64),
    "empty_first_row_float_into_int64": lambda m: m.tensor([[], m.tensor(2.5)], dtype=m.int64),
    "float_then_empty_row_into_int64": lambda m: m.tensor([m.tensor(2.5), []], dtype=m.int64),
    "nested_float_into_int64": lambda m: m.tensor([[m.tensor(2.5)]], dtype=m.int64),
    "tuple_float_into_int64": lambda m: m.tensor((m.tensor(2.5),), dtype=m.int64),
    "complex_into_float32": lambda m: m.tensor([m.tensor(2 + 1j)], dtype=m.float32),
    "real_complex_into_float64": lambda m: m.tensor([m.tensor(2 + 0j)], dtype=m.float64),
    "complex_into_int64": lambda m: m.tensor([m.tensor(2 + 0j)], dtype=m.int64),
    "complex_into_bool": lambda m: m.tensor([m.tensor(2 + 1j)], dtype=m.bool),
    "float_into_complex64": lambda m: m.tensor([m.tensor(2.5)], dtype=m.complex64),
    "int_into_float32": lambda m: m.tensor([m.tensor(2)], dtype=m.float32),
    "int_into_bool": lambda m: m.tensor([m.tensor(2)], dtype=m.bool),
    "bool_into_int64": lambda m: m.tensor([m.tensor(True)], dtype=m.int64),
    "int_beside_float_into_int64": lambda m: m.tensor([2.5, m.tensor(3)], dtype=m.int64),
    "as_tensor_float_into_int64": lambda m: m.as_tensor([m.tensor(2.5)], dtype=m.int64),
    "new_tensor_float_into_int64": lambda m: m.zeros(2, dtype=m.int64).new_tensor([m.tensor(2.5)]),
    "new_tensor_int_into_int64": lambda m: m.zeros(2, dtype=m.int64).new_tensor([m.tensor(7)]),
    # NumPy scalars: a float64 is a Python float (truncated into an integer dtype), a float32 has no __index__
    "numpy_float64_into_int64": lambda m: m.tensor([np.float64(2.5)], dtype=m.int64),
    "numpy_float32_into_int64": lambda m: m.tensor([np.float32(2.5)], dtype=m.int64),
    "numpy_float64_into_bool": lambda m: m.tensor([np.float64(2.5)], dtype=m.bool),
    # the tensor itself (no list): a copy converted as a cast
    "zero_d_itself_into_int64": lambda m: m.tensor(m.tensor(2.5).clone(), dtype=m.int64),
    "as_tensor_zero_d_into_int64": lambda m: m.as_tensor(m.tensor(2.5), dtype=m.int64),
}


@pytest.mark.parametrize("case", list(CASES))
def test_as_pytorchs(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (PyTorch's copy-construct hint of tensor(tensor))
        got, expected = _outcome(lambda: CASES[case](ember)), _outcome(lambda: CASES[case](torch))
    assert got == expected


@pytest.mark.parametrize("value", [2 + 1j, 2 + 0j, -1.5 + 0j, complex("nan+1j")])
@pytest.mark.parametrize("convert", [float, int])
def test_float_and_int_of_a_complex_tensor(convert, value):
    assert _number_outcome(convert, ember, value) == _number_outcome(convert, torch, value)


def _number_outcome(convert, m, value):
    try:
        return convert(m.tensor(value))
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
