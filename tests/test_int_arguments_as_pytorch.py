"""The int arguments of split, chunk, roll, kthvalue, topk and resize_ as PyTorch's argument parser reads them
(``_size.parsed_int``): a Python or NumPy integer and an integer 0-d tensor are ints; a bool, a float and a NumPy
array are its TypeError, never read as 0/1 or truncated. (resize_'s sizes after the first take a
bool as 0 or 1, as PyTorch's list of ints does; a 0-d integer array is an int to PyTorch's kthvalue, topk and
resize_, not to its split and chunk; a NumPy integer is none to its split.)"""

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "split": lambda m, x, v: m.split(x, v),
    "x.split": lambda m, x, v: x.split(v, 1),
    "chunk": lambda m, x, v: m.chunk(x, v),
    "roll": lambda m, x, v: m.roll(x, v, 1),
    "roll, no dims": lambda m, x, v: x.roll(v),
    "kthvalue": lambda m, x, v: m.kthvalue(x, v),
    "x.kthvalue": lambda m, x, v: x.kthvalue(v, 0),
    "topk": lambda m, x, v: m.topk(x, v),
    "resize_": lambda m, x, v: x.clone().resize_(v),
    "resize_, second size": lambda m, x, v: x.clone().resize_(2, v),
}
VALUES = {
    "int": lambda m: 2, "numpy int": lambda m: np.int64(2), "0-d int tensor": lambda m: m.tensor(2),
    "bool": lambda m: True, "numpy bool": lambda m: np.bool_(True), "float": lambda m: 2.0,
    "0-d array": lambda m: np.array(2), "array": lambda m: np.array([2]),
}


def _outcome(m, call, value):
    x = m.arange(12.0).reshape(3, 4)
    try:
        result = call(m, x, value(m))
    except (TypeError, RuntimeError, ValueError, IndexError, AttributeError) as e:  # (by the class a program
        # catches: ember's subclasses of TypeError and RuntimeError are those)
        return next(kind.__name__ for kind in (TypeError, RuntimeError, ValueError, IndexError, AttributeError)
                    if isinstance(e, kind))
    parts = result if isinstance(result, (tuple, list)) else (result,)
    return [p.tolist() for p in parts]


@pytest.mark.parametrize("value", VALUES, ids=VALUES.keys())
@pytest.mark.parametrize("call", CALLS, ids=CALLS.keys())
def test_an_int_argument_of_each_kind_as_pytorch(call, value):
    assert _outcome(ember, CALLS[call], VALUES[value]) == _outcome(torch, CALLS[call], VALUES[value])
