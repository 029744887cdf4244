"""A NumPy array where an out-of-place op takes a tensor or a number: PyTorch's argument parser refuses it with a
TypeError before the op runs, so ember must neither compute with it (clamp's bounds, masked_fill's value, logit's
eps) nor fail deeper with another error (an AttributeError of ``array._data``, a RuntimeError of its dtype). The
in-place and ``out=`` forms: tests/test_inplace_numpy_operands.py."""

import numpy as np
import pytest
import torch

import ember

ARRAY = np.array([[0.2, 0.3, 0.4], [0.1, 0.2, 0.3]], dtype=np.float32)
ZERO_D = np.array(0.1)
INDEX = np.array([0, 1])


def _x(m):
    return m.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]])


CALLS = {
    "clamp(x, array)": lambda m, x: m.clamp(x, ARRAY),
    "clamp(x, min=array)": lambda m, x: m.clamp(x, min=ARRAY),
    "clamp(x, max=0-d array)": lambda m, x: m.clamp(x, max=ZERO_D),
    "x.clamp(array)": lambda m, x: x.clamp(ARRAY),
    "x.clip(0, 0-d array)": lambda m, x: x.clip(0.0, ZERO_D),
    "clip(x, array, array)": lambda m, x: m.clip(x, ARRAY, ARRAY),
    "masked_fill(x, array mask, 1)": lambda m, x: m.masked_fill(x, ARRAY > 0.2, 1.0),
    "x.masked_fill(array mask, 1)": lambda m, x: x.masked_fill(ARRAY > 0.2, 1.0),
    "masked_fill(x, mask, 0-d array)": lambda m, x: m.masked_fill(x, x > 0, ZERO_D),
    "max(x, x, array)": lambda m, x: m.max(x, x, ARRAY),
    "min(x, x, 0-d array)": lambda m, x: m.min(x, x, ZERO_D),
    "nan_to_num(x, 0-d array)": lambda m, x: m.nan_to_num(x, ZERO_D),
    "x.nan_to_num(posinf=0-d array)": lambda m, x: x.nan_to_num(posinf=ZERO_D),
    "logit(x, 0-d array)": lambda m, x: m.logit(x, ZERO_D),
    "F.hardshrink(x, 0-d array)": lambda m, x: m.nn.functional.hardshrink(x, ZERO_D),
    "F.leaky_relu(x, 0-d array)": lambda m, x: m.nn.functional.leaky_relu(x, ZERO_D),
    "scatter(x, 0, index, array)": lambda m, x: m.scatter(x, 0, m.tensor([[0, 1, 0]]), ARRAY),
    "scatter(x, 0, array, x)": lambda m, x: m.scatter(x, 0, np.array([[0, 1, 0]]), x),
    "logical_and(array, x)": lambda m, x: m.logical_and(ARRAY, x),
    "logical_or(x, array)": lambda m, x: m.logical_or(x, ARRAY),
    "lerp(x, array, 0.5)": lambda m, x: m.lerp(x, ARRAY, 0.5),
    "take(x, array)": lambda m, x: m.take(x, INDEX),
    "take_along_dim(x, array, 1)": lambda m, x: m.take_along_dim(x, np.array([[0], [1]]), 1),
    "x.put(array, source)": lambda m, x: x.put(INDEX, m.tensor([1.0, 2.0])),
    "x.put(index, array)": lambda m, x: x.put(m.tensor([0, 1]), np.array([1.0, 2.0], dtype=np.float32)),
    "masked_select(x, array)": lambda m, x: m.masked_select(x, ARRAY > 0.2),
    "addcmul(x, array, x)": lambda m, x: m.addcmul(x, ARRAY, x),
    "addcmul(x, x, array)": lambda m, x: m.addcmul(x, x, ARRAY),
    "x.lerp(array, 0.5)": lambda m, x: x.lerp(ARRAY, 0.5),
    "x.lerp(x, array)": lambda m, x: x.lerp(x, ARRAY),
    "x.take(array)": lambda m, x: x.take(INDEX),
    "x.masked_select(array)": lambda m, x: x.masked_select(ARRAY > 0.2),
    "x.addcmul(x, array)": lambda m, x: x.addcmul(x, ARRAY),
    "x.addcdiv(array, x)": lambda m, x: x.addcdiv(ARRAY, x),
    "x.scatter(0, index, empty array)": lambda m, x: x.scatter(0, m.tensor([[0, 1, 0]])[:0], ARRAY[:0]),
    "int x.true_divide_(array)": lambda m, x: m.ones(3, dtype=m.int16).true_divide_(np.ones(3, np.int16)),
    "index_put(x, (array,), v)": lambda m, x: x.index_put((INDEX,), m.tensor(1.0)),
    "index_put_(x, (array,), v)": lambda m, x: x.index_put_((INDEX,), m.tensor(1.0)),
    "index_put_(x, (index, array), v)": lambda m, x: x.index_put_((m.tensor([0]), INDEX[:1]), m.tensor(1.0)),
    "index_put(x, (index, list), v)": lambda m, x: x.index_put((m.tensor([0]), [1]), m.tensor(1.0)),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_an_array_operand_is_refused_as_pytorch_refuses_it(call):
    for m in (torch, ember):
        x = _x(m)
        with pytest.raises(TypeError):
            call(m, x)
        assert x.tolist() == _x(m).tolist()  # (nothing written by the in-place forms)


@pytest.mark.parametrize("call,message", [
    (lambda m, x: m.take(x, INDEX), r"take\(\): argument 'index' \(position 2\) must be Tensor, not numpy\.ndarray"),
    (lambda m, x: m.addcmul(x, x, ARRAY),
     r"addcmul\(\): argument 'tensor2' \(position 3\) must be Tensor, not numpy\.ndarray"),
    (lambda m, x: m.logit(x, ZERO_D), r"logit\(\): argument 'eps' \(position 2\) must be float, not numpy\.ndarray"),
    (lambda m, x: m.nn.functional.hardshrink(x, ZERO_D),
     r"hardshrink\(\): argument 'lambd' \(position 2\) must be Number, not numpy\.ndarray"),
    (lambda m, x: x.put(INDEX, m.tensor([1.0, 2.0])),
     r"put\(\): argument 'index' \(position 1\) must be Tensor, not numpy\.ndarray"),
    (lambda m, x: x.index_put((INDEX,), m.tensor(1.0)),
     r"expected Tensor as element 0 in argument 0, but got numpy\.ndarray"),
])
def test_the_message_is_pytorchs(call, message):
    for m in (torch, ember):
        with pytest.raises(TypeError, match=message):
            call(m, _x(m))


def test_the_same_calls_with_tensors_compute_as_pytorch():
    """(the checks refuse the array only: a tensor or a number in its place computes, as PyTorch's)"""
    for call in (lambda m, x: m.clamp(x, m.tensor(0.0), m.tensor(0.4)), lambda m, x: x.clamp(0.0, 0.4),
                 lambda m, x: m.masked_fill(x, x > 0.2, 1.0), lambda m, x: m.logit(x.abs().clamp(0.1, 0.9), 0.01),
                 lambda m, x: m.nan_to_num(x, 0.0, 1.0, -1.0), lambda m, x: m.max(x, x.flip(1)),
                 lambda m, x: m.take(x, m.tensor([0, 4])), lambda m, x: m.logical_and(x, x > 0),
                 lambda m, x: x.index_put((m.tensor([1]), m.tensor([2])), m.tensor(7.0)),
                 lambda m, x: x.clone().put(m.tensor([0, 1]), m.tensor([1.0, 2.0])),
                 lambda m, x: m.nn.functional.hardshrink(x, 0.25)):
        expected, got = call(torch, _x(torch)), call(ember, _x(ember))
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
