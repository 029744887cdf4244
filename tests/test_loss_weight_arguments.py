"""A loss's optional tensor argument (``weight``, ``pos_weight``) given a number, a list or a NumPy array: PyTorch's
TypeError, which names the ATen operator, the argument and its position (ember may add how to convert an array).
``tests/test_errors_match.py`` has the tensor arguments of other functions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "bce_with_logits weight": lambda m, w: m.nn.functional.binary_cross_entropy_with_logits(
        m.zeros(2, 3), m.zeros(2, 3), weight=w),
    "bce_with_logits pos_weight": lambda m, w: m.nn.functional.binary_cross_entropy_with_logits(
        m.zeros(2, 3), m.zeros(2, 3), pos_weight=w),
    "bce_with_logits both": lambda m, w: m.nn.functional.binary_cross_entropy_with_logits(
        m.zeros(2, 3), m.zeros(2, 3), w, pos_weight=w),
    "cross_entropy weight": lambda m, w: m.nn.functional.cross_entropy(m.zeros(2, 3), m.tensor([0, 1]), weight=w),
    "cross_entropy probabilities": lambda m, w: m.nn.functional.cross_entropy(m.zeros(2, 3), m.zeros(2, 3), w),
    "nll_loss weight": lambda m, w: m.nn.functional.nll_loss(m.zeros(2, 3), m.tensor([0, 1]), weight=w),
    "nll_loss spatial": lambda m, w: m.nn.functional.nll_loss(m.zeros(2, 3, 4), m.zeros(2, 4, dtype=m.long), w),
}

VALUES = {"float": lambda: 1.0, "int": lambda: 2, "list": lambda: [1.0, 2.0, 3.0],
          "ndarray": lambda: np.ones(3, dtype=np.float32)}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("call", list(CALLS))
def test_a_loss_weight_that_is_no_tensor_as_pytorch(call, value):
    with pytest.raises(TypeError) as theirs:
        CALLS[call](torch, VALUES[value]())
    with pytest.raises(TypeError) as mine:
        CALLS[call](ember, VALUES[value]())
    assert str(mine.value).startswith(str(theirs.value)), (str(mine.value), str(theirs.value))
