"""``t.data = other`` swaps a tensor's contents in place, as PyTorch's ``set_data``: any dtype or shape for a tensor
that does not require grad, only floating point or complex ones for one that does (a parameter given an integer
tensor is PyTorch's RuntimeError, which Conv-TasNet's self-test meets), and a tensor only."""

import numpy as np
import pytest
import torch

import ember


def _outcome(fw, make_target, value):
    target = make_target(fw)
    try:
        target.data = value(fw) if callable(value) else value
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)
    return str(target.dtype).split(".")[-1], target.requires_grad, tuple(target.shape), target.tolist()


TARGETS = {
    "parameter": lambda fw: fw.nn.Parameter(fw.zeros(3)),
    "leaf requiring grad": lambda fw: fw.zeros(3, requires_grad=True),
    "non-leaf": lambda fw: fw.zeros(3, requires_grad=True) * 2,
    "plain": lambda fw: fw.zeros(3),
}
VALUES = {
    "int64": lambda fw: fw.arange(3),
    "bool": lambda fw: fw.ones(3, dtype=fw.bool),
    "uint8": lambda fw: fw.ones(2, dtype=fw.uint8),
    "float64 of another shape": lambda fw: fw.ones(2, dtype=fw.float64),
    "float16": lambda fw: fw.ones(3, dtype=fw.float16),
    "complex64": lambda fw: fw.ones(3, dtype=fw.complex64),
    "a number": 3,
    "a NumPy array": np.ones(3),
    "a NumPy scalar": np.float32(1),
    "None": None,
}


@pytest.mark.parametrize("value", VALUES, ids=list(VALUES))
@pytest.mark.parametrize("target", TARGETS, ids=list(TARGETS))
def test_data_assignment_is_pytorchs(target, value):
    expected = _outcome(torch, TARGETS[target], VALUES[value])
    got = _outcome(ember, TARGETS[target], VALUES[value])
    assert got == expected
