"""``torch._assert_async``: kornia checks its class labels with it (``torch._assert_async(low >= 0, "...")``)."""

import pytest
import torch

import ember


def _ember(value):
    return ember.tensor(value.numpy()) if isinstance(value, torch.Tensor) else value


@pytest.mark.parametrize("args", [
    (torch.tensor(True),), (torch.tensor(True), "m"), (torch.tensor(1.0),), (torch.tensor(2),),
    (torch.tensor([True]), "m"), (torch.tensor(float("nan")),),
    (torch.tensor(False), "Class values must be non-negative."), (torch.tensor(False),), (torch.tensor(0.0),),
    (torch.tensor([True, True]),), (torch.tensor([]),), (True,), (torch.tensor([0]),),
], ids=str)
def test_as_pytorchs(args):
    results = []
    for lib, convert in ((torch, lambda v: v), (ember, _ember)):
        try:
            results.append(repr(lib._assert_async(*map(convert, args))))
        except (RuntimeError, TypeError) as e:
            results.append(f"{type(e).__name__}: {e}")
    assert results[1] == results[0]
