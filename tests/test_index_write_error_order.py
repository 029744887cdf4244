"""PyTorch checks an index write's source dtype (and shape) before the indices' range, which its kernel checks
last: ``x.index_put_((idx,), v)`` / ``x[idx] = v`` / ``index_add_`` / ``index_copy_`` with a float64 source into a
float32 tensor and an index past the end raise the dtype error (ember raised the IndexError first)."""

import pytest
import torch

import ember

CASES = {
    "index_put_": lambda lib, x, i, v: x.index_put_((i,), v),
    "index_put_ accumulate": lambda lib, x, i, v: x.index_put_((i,), v, accumulate=True),
    "index_put": lambda lib, x, i, v: x.index_put((i,), v),
    "setitem": lambda lib, x, i, v: x.__setitem__(i, v),
    "index_add_": lambda lib, x, i, v: x.index_add_(0, i, v),
    "index_copy_": lambda lib, x, i, v: x.index_copy_(0, i, v),
    "index_put_ 2-d": lambda lib, x, i, v: x.view(1, 3).index_put_((lib.tensor([0]), i), v),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("where", [5, -4])
def test_dtype_refused_before_the_index_range(case, where):
    errors = []
    for lib in (torch, ember):
        x, i, v = lib.zeros(3), lib.tensor([where]), lib.tensor([1.0], dtype=lib.float64)
        with pytest.raises((RuntimeError, IndexError)) as e:
            CASES[case](lib, x, i, v)
        errors.append((e.type, str(e.value).split("\n")[0]))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("case", ["index_add_", "index_copy_", "setitem"])
def test_the_range_is_still_checked(case):
    for lib in (torch, ember):
        with pytest.raises(IndexError, match="out of bounds|out of range"):
            CASES[case](lib, lib.zeros(3), lib.tensor([5]), lib.tensor([1.0]))
