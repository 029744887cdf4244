"""An in-place op whose operand broadcasts beyond ``self``'s shape: PyTorch's RuntimeError ("output with shape
[2] doesn't match the broadcast shape [2, 2]"), recorded or not, instead of NumPy's ValueError."""

import pytest
import torch
from oracle import assert_close, assert_same_error

import ember

METHODS = ["atan2_", "arctan2_", "hypot_", "fmod_", "copysign_", "heaviside_", "clamp_min_", "clamp_max_",
           "nextafter_", "ldexp_", "xlogy_", "gcd_", "lcm_"]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_operand_that_broadcasts_beyond_self(method, grad):
    def call(m):
        integer = method in ("gcd_", "lcm_")
        x = m.tensor([4, 6]) if integer else m.tensor([1.0, 2.0], requires_grad=grad) * 1
        return getattr(x, method)(m.ones(2, 2, dtype=x.dtype))

    if grad and method in ("gcd_", "lcm_"):
        pytest.skip("integer tensors take no gradient")
    assert_same_error(call)


def test_operand_that_broadcasts_within_self_still_writes():
    e, t = ember.ones(2, 2), torch.ones(2, 2)
    e.atan2_(ember.tensor([1.0, 2.0]))
    t.atan2_(torch.tensor([1.0, 2.0]))
    assert_close(e, t)
