"""An activation's input gradient takes the layout PyTorch's backward kernel gives it: its TensorIterator's for the
gradient and the saved input (or result), in that kernel's operand order (``hardtanh_backward``: grad first;
``threshold_backward``, ``leaky_relu_backward``: the input first), so that a broadcast ``y.sum()`` gradient takes
the input's strides, size-1 dimensions' included, and a row-major gradient of a transposed input its own. Compared
with PyTorch: the strides of the gradient handed to a node hook, of ``x.grad`` (AccumulateGrad keeps a gradient
whose layout matches the leaf's, size-1 dimensions aside), and the values."""

import numpy as np
import pytest
import torch

import ember


def _input(m, how):
    if how == "size_one_permuted":  # (1, 3, 4) permuted to (3, 1, 4): strides (4, 12, 1)
        return m.arange(12.).reshape(1, 3, 4).sub(5).div(2).permute(1, 0, 2)
    if how == "one_channel_last":  # (1, 2, 4, 5) with strides (40, 1, 10, 2)
        return m.arange(40.).reshape(1, 4, 5, 2).sub(20).div(4).permute(0, 3, 1, 2)
    if how == "transposed":
        return m.arange(12.).reshape(3, 4).sub(5).div(2).t()
    return m.arange(80.).reshape(2, 4, 5, 2).sub(40).div(8).permute(0, 3, 1, 2)  # channels-last


def _gradient(m, y, how):
    n = float(y.numel())
    if how == "row_major":
        return m.arange(n).reshape(y.shape).sub(3)
    if how == "reversed":  # (every dimension's order reversed)
        return m.arange(n).reshape(tuple(reversed(y.shape))).sub(3).permute(*reversed(range(y.dim())))
    return None  # y.sum().backward(): a broadcast gradient, strides 0


def _f(m):
    return m.nn.functional


OPS = {
    "hardtanh": lambda m, x: _f(m).hardtanh(x),
    "relu6": lambda m, x: _f(m).relu6(x),
    "hardtanh_bounds": lambda m, x: _f(m).hardtanh(x, -0.5, 0.75),
    "relu": lambda m, x: m.relu(x),
    "threshold": lambda m, x: _f(m).threshold(x, 0.5, 2.0),
    "leaky_relu": lambda m, x: _f(m).leaky_relu(x, 0.1),
    "rrelu_eval": lambda m, x: _f(m).rrelu(x, training=False),
    "elu": lambda m, x: _f(m).elu(x),
    "selu": lambda m, x: _f(m).selu(x),
    "celu": lambda m, x: _f(m).celu(x),
    "gelu": lambda m, x: _f(m).gelu(x),
    "gelu_tanh": lambda m, x: _f(m).gelu(x, approximate="tanh"),
    "silu": lambda m, x: _f(m).silu(x),
    "mish": lambda m, x: _f(m).mish(x),
    "softplus": lambda m, x: _f(m).softplus(x),
    "hardsigmoid": lambda m, x: _f(m).hardsigmoid(x),
    "hardswish": lambda m, x: _f(m).hardswish(x),
    "softshrink": lambda m, x: _f(m).softshrink(x),
    "hardshrink": lambda m, x: _f(m).hardshrink(x),
    "softsign": lambda m, x: _f(m).softsign(x),
    "tanhshrink": lambda m, x: _f(m).tanhshrink(x),  # (PyTorch: a sum of two nodes' gradients)
    "logsigmoid": lambda m, x: _f(m).logsigmoid(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "tanh": lambda m, x: m.tanh(x),
}


def _run(m, op, layout, gradient):
    x = _input(m, layout).detach().requires_grad_()
    y = OPS[op](m, x)
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs, seen=seen: seen.append(grad_inputs[0].stride()))
    g = _gradient(m, y, gradient)
    if g is None:
        y.sum().backward()
    else:
        y.backward(g)
    return y, x.grad, seen


@pytest.mark.parametrize("gradient", ["row_major", "reversed", "broadcast"])
@pytest.mark.parametrize("layout", ["size_one_permuted", "one_channel_last", "transposed", "channels_last"])
@pytest.mark.parametrize("op", list(OPS))
def test_gradient_strides_are_pytorchs(op, layout, gradient):
    if op == "tanhshrink" and gradient == "broadcast":
        pytest.skip("PyTorch's x - tanh(x) passes an expanded gradient on unchanged (its SubBackward0); ember's one "
                    "node computes it")
    y, grad, seen = _run(ember, op, layout, gradient)
    ty, tgrad, tseen = _run(torch, op, layout, gradient)
    assert y.stride() == ty.stride()
    assert seen == tseen
    assert grad.stride() == tgrad.stride()
    np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=1e-4, atol=1e-4)  # (float32 kernels, gradients to 77)


@pytest.mark.parametrize("layout", ["size_one_permuted", "one_channel_last", "transposed"])
def test_rrelu_training_result_and_gradient_are_row_major(layout):
    """PyTorch's rrelu allocates its result contiguous, and its training gradient is ``grad * noise`` (the noise
    row-major too)."""
    for m in (ember, torch):
        m.manual_seed(0)
    got = []
    for m in (ember, torch):
        x = _input(m, layout).detach().requires_grad_()
        y = _f(m).rrelu(x, training=True)
        seen = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs, seen=seen: seen.append(grad_inputs[0].stride()))
        y.sum().backward()
        got.append((y.stride(), seen, x.grad.stride()))
    assert got[0] == got[1]


def test_hardtanh_in_place_gradient_strides():
    got = []
    for m in (ember, torch):
        x = _input(m, "size_one_permuted").detach().requires_grad_()
        y = x.clone()  # (whose gradient passes the hardtanh_ node's on as it is)
        _f(m).hardtanh_(y)
        seen = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs, seen=seen: seen.append(grad_inputs[0].stride()))
        y.sum().backward()
        got.append((y.stride(), seen, x.grad.stride(), x.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("layout", ["transposed", "size_one_permuted"])
def test_tanhshrink_input_gradient_of_a_sum_is_pytorchs_layout(layout):
    """tanhshrink's input gradient from ``y.sum()``: PyTorch sums its two nodes' gradients (x's, and tanh's) into a
    row-major array, whatever the input's layout (ember's one node gave it the input's layout)."""
    seen = {}
    for m in (ember, torch):
        leaf = m.arange(12.).reshape(3, 4).sub(5).div(2).requires_grad_()
        x = leaf.t() if layout == "transposed" else leaf.reshape(1, 3, 4).permute(1, 0, 2)
        x.register_hook(lambda g, m=m: seen.update({m: g.stride()}))  # (returns None: the gradient unchanged)
        _f(m).tanhshrink(x).sum().backward()
        seen[m, "leaf"] = leaf.grad.stride()
    assert seen[ember] == seen[torch] and seen[ember, "leaf"] == seen[torch, "leaf"]
