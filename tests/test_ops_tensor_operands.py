"""Ops whose PyTorch signature takes only tensors refuse a Python number as PyTorch does (TypeError, the same
message: a function's ``other`` is its position 2, a method's its position 1): maximum, minimum, isclose, dist
(and dist's ``p``, which must be a real number), and the methods of the pointwise ops that take tensors only."""

import numpy as np
import pytest
import torch

import ember


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (comparing the frameworks' errors)
        return type(e).__name__, str(e)
    return "value", np.asarray(r.tolist())


def same(fn):
    got, want = outcome(lambda: fn(ember)), outcome(lambda: fn(torch))
    assert got[0] == want[0]
    if want[0] == "value":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    else:
        assert got[1] == want[1]


CALLS = {
    "maximum": lambda fw, x, v: fw.maximum(x, v),
    "minimum": lambda fw, x, v: fw.minimum(x, v),
    "isclose": lambda fw, x, v: fw.isclose(x, v),
    "dist": lambda fw, x, v: fw.dist(x, v),
    "allclose": lambda fw, x, v: fw.tensor(fw.allclose(x, v)),
    "maximum_first": lambda fw, x, v: fw.maximum(v, x),
    "isclose_first": lambda fw, x, v: fw.isclose(v, x),
    "atan2": lambda fw, x, v: fw.atan2(x, v),
    "arctan2": lambda fw, x, v: fw.arctan2(x, v),  # (its errors name it arctan2)
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("number", [1.5, 1, True])
def test_functions_refuse_a_number_as_pytorch(call, number):
    same(lambda fw: CALLS[call](fw, fw.tensor([1.0, 2.0]), number))


@pytest.mark.parametrize("method", ["maximum", "minimum", "isclose", "dist", "hypot", "hypot_", "atan2", "atan2_",
                                    "arctan2", "arctan2_",
                                    "logaddexp", "logaddexp2", "fmax", "fmin", "nextafter", "nextafter_",
                                    "heaviside", "heaviside_", "ldexp", "ldexp_", "copysign"])
def test_methods_refuse_a_number_as_pytorch(method):
    same(lambda fw: getattr(fw.tensor([1.0, 2.0]), method)(1.0))


@pytest.mark.parametrize("method", ["gcd", "gcd_", "lcm", "lcm_"])
def test_integer_methods_refuse_a_number_as_pytorch(method):
    same(lambda fw: getattr(fw.tensor([4, 6]), method)(2))


@pytest.mark.parametrize("p", ["fro", None, 1 + 0j, 3, 0, float("inf"), True, np.int64(3), "tensor"])
def test_dist_order_as_pytorch(p):
    same(lambda fw: fw.dist(fw.tensor([1.0, 2.0]), fw.tensor([0.5, 4.0]),
                            fw.tensor(3.0) if isinstance(p, str) and p == "tensor" else p))


def test_clamp_with_a_tensor_bound_that_needs_a_gradient():
    """clamp composes maximum/minimum where a bound needs a gradient: the values and gradient are PyTorch's."""
    results = []
    for fw in (ember, torch):
        lo = fw.tensor([0.5, -1.0, 0.0], requires_grad=True)
        y = fw.clamp(fw.tensor([0.0, 2.0, 3.0]), min=lo, max=fw.tensor(1.5))
        y.sum().backward()
        results.append((y.detach().tolist(), lo.grad.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("call", [
    lambda fw, x, t: fw.clamp(x, t, 2.0), lambda fw, x, t: fw.clamp(x, 0, t), lambda fw, x, t: fw.clip(x, t, True),
    lambda fw, x, t: fw.clamp(x, t.requires_grad_(), 1.5), lambda fw, x, t: x.clamp(t, 2.0),
    lambda fw, x, t: x.clip(2.0, t), lambda fw, x, t: x.clone().clamp_(t, 2), lambda fw, x, t: x.clone().clip_(1.0, t),
])
def test_clamp_refuses_a_tensor_bound_with_a_number_one(call):
    # PyTorch's clamp has a Tensor-bounds overload and a Number-bounds one: a tensor with a number matches neither
    outcomes = []
    for fw in (ember, torch):
        with pytest.raises(TypeError) as info:
            call(fw, fw.tensor([0.0, 2.0, 3.0]), fw.tensor([0.5, -1.0, 0.0]))
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_clamp_refuses_a_tensor_bound_with_a_number_one_by_keyword():
    # (PyTorch's message shows keywords as given, ``got (Tensor, max=float, min=Tensor)``; ember's as positions)
    for fw in (ember, torch):
        with pytest.raises(TypeError, match=r"^clamp\(\) received an invalid combination of arguments - got \(Tensor, "):
            fw.clamp(fw.tensor([0.0, 2.0]), min=fw.tensor([0.5, 1.0], requires_grad=True), max=1.5)


def test_tensor_operands_still_answer_as_pytorch():
    same(lambda fw: fw.maximum(fw.tensor([1.0, 2.0]), fw.tensor(1.5)))
    same(lambda fw: fw.minimum(fw.tensor([1, 5]), fw.tensor([3.0, 2.0])))
    same(lambda fw: fw.isclose(fw.tensor([1.0, 2.0]), fw.tensor([1.0, 2.1])))
    same(lambda fw: fw.tensor([1.0, 2.0]).dist(fw.tensor([4.0, 6.0]), 1))
    same(lambda fw: fw.isclose(fw.tensor([1.0, 2.0]), fw.tensor([1.0, 2.0], dtype=fw.float64)))
