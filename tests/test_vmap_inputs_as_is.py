"""vmap wraps an input batched along dim 0 as it is (no view), as PyTorch's: a function returning its input returns
the input itself, an in-place op on it is an in-place op on a leaf, and out_dims' error still comes at the call."""

import pytest
import torch

import ember


@pytest.mark.parametrize("fw", [torch, ember], ids=["torch", "ember"])
def test_identity_returns_the_input_itself(fw):
    x = fw.randn(4, 3, requires_grad=True)
    assert fw.func.vmap(lambda a: a)(x) is x
    assert fw.func.vmap(lambda a: a, out_dims=1)(x) is not x  # (moved: a view)
    y = fw.func.vmap(lambda a: a, out_dims=1)(x)
    assert y.grad_fn is not None and type(y.grad_fn).__name__ == "PermuteBackward0"


def test_in_place_on_a_leaf_that_requires_grad():
    def f(a):
        a.add_(1)
        return a

    def message(fw):
        with pytest.raises(RuntimeError) as info:
            fw.func.vmap(f)(fw.ones(2, 3, requires_grad=True))
        return str(info.value)

    assert message(ember).startswith(message(torch))  # "a leaf Variable that requires grad is being used ..."
    for fw in (torch, ember):
        z = fw.ones(2, 3)
        assert fw.func.vmap(f)(z) is z
        assert (z == 2).all()


def test_bad_out_dims_raise_when_called():
    for fw in (torch, ember):
        mapped = fw.func.vmap(lambda a: a, out_dims="x")  # no error yet
        with pytest.raises(ValueError, match="`out_dims` must be an int, None or a python collection of ints"):
            mapped(fw.ones(2))
