"""A NumPy array where an in-place method or an ``out=`` form takes a tensor or a number: PyTorch's argument parser
refuses it (TypeError), as ember's out-of-place ops do, and nothing is written. (``x += array``: ember's TypeError
of ``x + array``, docs/api.md; PyTorch computes both in NumPy.)"""

import numpy as np
import pytest
import torch

import ember

ARRAY = np.array([2.0, 3.0, 0.5], dtype=np.float32)
ZERO_D = np.array(2.0)
INDEX = {torch: torch.tensor([0]), ember: ember.tensor([0])}

IN_PLACE = [
    lambda m, x: x.add_(ARRAY), lambda m, x: x.add_(ZERO_D), lambda m, x: x.sub_(ARRAY, alpha=2),
    lambda m, x: x.mul_(ARRAY), lambda m, x: x.div_(ARRAY), lambda m, x: x.div_(ARRAY, rounding_mode="floor"),
    lambda m, x: x.true_divide_(ARRAY), lambda m, x: x.floor_divide_(ARRAY), lambda m, x: x.remainder_(ARRAY),
    lambda m, x: x.pow_(ARRAY), lambda m, x: x.copy_(ARRAY), lambda m, x: x.fill_(ZERO_D),
    lambda m, x: x.clamp_(ARRAY), lambda m, x: x.clamp_(max=ARRAY), lambda m, x: x.clamp_min_(ARRAY),
    lambda m, x: x.clip_(ZERO_D), lambda m, x: x.eq_(ARRAY), lambda m, x: x.lt_(ZERO_D),
    lambda m, x: x.lerp_(ARRAY, 0.5), lambda m, x: x.lerp_(x.clone(), ARRAY), lambda m, x: x.addcmul_(ARRAY, x),
    lambda m, x: x.addcdiv_(x, ARRAY), lambda m, x: x.masked_fill_(x > 0, ZERO_D),
    lambda m, x: x.scatter_(0, INDEX[m], ARRAY[:1]), lambda m, x: x.scatter_add_(0, INDEX[m], ARRAY[:1]),
    lambda m, x: x.index_add_(0, INDEX[m], ARRAY[:1]), lambda m, x: x.index_copy_(0, INDEX[m], ARRAY[:1]),
    lambda m, x: x.index_fill_(0, INDEX[m], ZERO_D), lambda m, x: x.index_put_((INDEX[m],), ARRAY[:1]),
    lambda m, x: x.put_(INDEX[m], ARRAY[:1]), lambda m, x: x.masked_scatter_(x > 0, ARRAY),
    lambda m, x: x.set_(ARRAY), lambda m, x: x.xlogy_(ARRAY), lambda m, x: x.fmod_(ARRAY),
]

OUT = [
    lambda m, x, o: m.add(x, ARRAY, out=o), lambda m, x, o: m.clamp(x, ARRAY, out=o),
    lambda m, x, o: m.clamp(x, max=ZERO_D, out=o), lambda m, x, o: m.lerp(x, ARRAY, 0.5, out=o),
    lambda m, x, o: m.addcmul(x, ARRAY, x, out=o), lambda m, x, o: m.maximum(x, ARRAY, out=o),
    lambda m, x, o: m.where(x > 0, x, ARRAY, out=o),
]


@pytest.mark.parametrize("call", IN_PLACE)
def test_in_place_methods_refuse_a_numpy_array(call):
    for m in (torch, ember):
        x = m.tensor([1.0, -2.0, 4.0])
        with pytest.raises(TypeError):
            call(m, x)
        assert x.tolist() == [1.0, -2.0, 4.0]  # nothing written
        assert x._version == 0


@pytest.mark.parametrize("call", OUT)
def test_out_forms_refuse_a_numpy_array(call):
    for m in (torch, ember):
        x, out = m.tensor([1.0, -2.0, 4.0]), m.zeros(3)
        with pytest.raises(TypeError):
            call(m, x, out)
        assert out.tolist() == [0.0, 0.0, 0.0]


def test_the_message_names_the_argument_and_says_to_convert():
    with pytest.raises(TypeError, match=r"add_\(\): argument 'other' \(position 1\) must be Tensor, not "
                                        r"numpy\.ndarray.*from_numpy"):
        ember.ones(3).add_(ARRAY)
    with pytest.raises(TypeError, match=r"clamp\(\): argument 'min' \(position 2\) must be Tensor, not numpy"):
        ember.clamp(ember.ones(3), ARRAY, out=ember.empty(3))
    with pytest.raises(TypeError, match=r"clamp_\(\): argument 'max' must be Tensor, not numpy"):
        ember.ones(3).clamp_(max=ARRAY)


@pytest.mark.parametrize("op", ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                                "__ipow__"])
def test_augmented_assignment_of_an_array_is_the_binary_operators_refusal(op):
    x = ember.tensor([1.0, 2.0, 4.0])
    assert getattr(x, op)(ARRAY) is NotImplemented  # (Python then calls x + array: its TypeError)
    y = x
    with pytest.raises(TypeError, match="convert it"):
        y += ARRAY
    assert y is x and x.tolist() == [1.0, 2.0, 4.0]


def test_numbers_tensors_and_numpy_scalars_still_pass():
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0, 4.0])
        x.add_(np.float32(1.0)).mul_(m.tensor([1.0, 2.0, 3.0])).clamp_(np.float64(0.0), 9.0).copy_(x * 2)
        x += 1
        assert x.tolist() == [5.0, 13.0, 19.0]


@pytest.mark.parametrize("call", [lambda m, x: x.bitwise_right_shift(np.ones(3, np.int64)),
                                  lambda m, x: m.bitwise_left_shift(x, np.ones(3, np.int64)),
                                  lambda m, x: x.bitwise_left_shift_(np.ones(3, np.int64))])
def test_shifts_refuse_a_numpy_array(call):
    """(The shifts' methods and functions returned NotImplemented for an array, silently: it is PyTorch's
    TypeError.)"""
    for m in (torch, ember):
        with pytest.raises(TypeError):
            call(m, m.ones(3, dtype=m.int64))


@pytest.mark.parametrize("call", [
    lambda m, x: x.index_add(0, np.array([0]), x[:1]), lambda m, x: x.index_copy(0, np.array([0]), x[:1]),
    lambda m, x: x.index_fill(0, np.array([0]), 1.0), lambda m, x: x.scatter_add(0, np.array([0]), x[:1]),
    lambda m, x: x.gather(0, np.array([0])), lambda m, x: m.index_select(x, 0, np.array([0])),
])
def test_an_index_given_as_a_numpy_array_is_pytorchs_type_error(call):
    """(ember's index checks raised their dtype errors, IndexError or RuntimeError, for an array.)"""
    for m in (torch, ember):
        with pytest.raises(TypeError):
            call(m, m.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("method, kwargs", [("add_", {}), ("add_", {"alpha": 2}), ("sub_", {"alpha": 2}),
                                            ("mul_", {}), ("div_", {}), ("div_", {"rounding_mode": "floor"}),
                                            ("div_", {"rounding_mode": "trunc"}), ("floor_divide_", {}),
                                            ("pow_", {}), ("remainder_", {})])
def test_the_refusal_of_an_array_names_the_method_called(method, kwargs):
    """PyTorch's refusal names the in-place method (``floor_divide_()``, ``div_()``), whichever way ember computes
    it (a rounded division was refused as ``<lambda>_()``)."""
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            getattr(m.ones(2), method)(ARRAY[:2], **kwargs)
        assert str(caught.value).startswith(f"{method}()"), str(caught.value)
