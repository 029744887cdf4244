"""The class losses of an input with no classes (C = 0) and targets to match: PyTorch's error for each rank. An
(N, 0, d) or (N, 0, d1, d2, d3) input is viewed as (N, 0, 1, -1) for PyTorch's 2-D kernel, which cannot infer
the -1 with no classes (its "size mismatch"); (N, 0) and (N, 0, H, W) find the target out of bounds."""

from __future__ import annotations

import pytest
import torch

import ember


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shape", [(2, 0, 3), (2, 0, 1, 1, 3), (2, 0, 3, 1), (2, 0), (1, 0, 4)])
def test_no_classes_is_pytorchs_error(shape, fn):
    errors = []
    for m in (torch, ember):
        x = m.zeros(*shape, requires_grad=True)
        t = m.zeros(shape[0], *shape[2:], dtype=m.long)
        with pytest.raises(Exception) as err:
            getattr(m.nn.functional, fn)(x, t)
        errors.append((type(err.value), str(err.value)))
    (t_type, t_msg), (e_type, e_msg) = errors
    assert e_type is t_type
    # (ember's out-of-bounds message adds the range of valid indices)
    assert e_msg == t_msg if t_type is RuntimeError else e_msg.startswith(t_msg[:-1])
