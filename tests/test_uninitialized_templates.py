"""An uninitialised parameter (``nn.LazyLinear(3).weight`` before its first forward) as a factory's template
(``zeros_like`` & co.), or made into a new tensor by its methods (``new_*``, ``contiguous``, ``detach_``): PyTorch's
ValueError, as PyTorch refuses every function given one; ``copy_`` into one under ``no_grad`` is allowed, as
PyTorch's (nothing is written: it stays uninitialised)."""
import pytest
import torch

import ember

CALLS = {
    "zeros_like": lambda lib, w: lib.zeros_like(w), "ones_like": lambda lib, w: lib.ones_like(w),
    "empty_like": lambda lib, w: lib.empty_like(w), "full_like": lambda lib, w: lib.full_like(w, 2.0),
    "rand_like": lambda lib, w: lib.rand_like(w), "randn_like": lambda lib, w: lib.randn_like(w),
    "randint_like": lambda lib, w: lib.randint_like(w, 5),
    "new_zeros": lambda lib, w: w.new_zeros(2), "new_ones": lambda lib, w: w.new_ones(2),
    "new_empty": lambda lib, w: w.new_empty(2), "new_full": lambda lib, w: w.new_full((2,), 1.0),
    "new_tensor": lambda lib, w: w.new_tensor([1.0]), "new_empty_strided": lambda lib, w: w.new_empty_strided((2,), (1,)),
    "contiguous": lambda lib, w: w.contiguous(), "detach_": lambda lib, w: w.detach_(),
}


def outcome(lib, call):
    try:
        call(lib, lib.nn.LazyLinear(3).weight)
    except Exception as e:  # (the error is what is compared)
        return type(e), str(e).split(" in <")[0]
    return None


@pytest.mark.parametrize("name", CALLS)
def test_an_uninitialized_parameter_is_refused_as_pytorchs(name):
    want = outcome(torch, CALLS[name])
    assert want is not None and want[0] is ValueError
    assert outcome(ember, CALLS[name]) == want


@pytest.mark.parametrize("shape", [(1,), (), (0,)])
def test_copy_into_an_uninitialized_parameter_under_no_grad_as_pytorchs(shape):
    for lib in (torch, ember):
        w = lib.nn.LazyLinear(3).weight
        with lib.no_grad():
            assert w.copy_(lib.ones(shape)) is w
        assert type(w).__name__ == "UninitializedParameter"
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            _ = w.shape
