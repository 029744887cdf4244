"""A pointwise op's result and sort's values take PyTorch's strides for an input with a dimension of size 1 (a
channels-last (1, 4, 5, 1) tensor: PyTorch's x + 1 is (20, 1, 4, 4), where NumPy's loop gives a size-1 dimension a
stride of its own, (1, 1, 4, 20)), with the same values and gradients."""

import numpy as np
import pytest
import torch

import ember

SHAPES = [(1, 4, 5, 1), (2, 4, 5, 1), (1, 4, 1, 5), (2, 1, 4, 5), (3, 1, 1, 2), (1, 1, 4, 5)]


def _inputs(lib, shape, how):
    n = int(np.prod(shape))
    x = lib.arange(float(n)).reshape(shape)
    if how == "channels_last":
        return x.contiguous(memory_format=lib.channels_last)
    if how == "empty_channels_last":  # (one channel: (20, 1, 5, 1), which NumPy calls row-major)
        return lib.empty(shape, memory_format=lib.channels_last).copy_(x)
    if how == "reversed":  # (every dimension's order reversed: (1, 1, 4, 20) for (1, 4, 5, 1))
        order = tuple(reversed(range(len(shape))))
        return x.permute(*order).contiguous().permute(*order)
    # (a permuted layout: the brief's (1, 1, 4, 5) viewed from a (1, 4, 5, 1) row-major buffer and the like)
    return lib.arange(float(n)).reshape(shape[0], shape[2], shape[3], shape[1]).permute(0, 3, 1, 2)


OPS = {
    "add_scalar": lambda x: x + 1,
    "mul_scalar": lambda x: x * 2.5,
    "exp": lambda x: x.exp(),
    "abs": lambda x: x.abs(),
    "sigmoid": lambda x: x.sigmoid(),
    "neg": lambda x: -x,
    "add_tensor": lambda x: x + x,
    "add_zero_d": lambda x: x + x.new_tensor(2.0),
    "where_scalar": lambda x: x.where(x > 3, 0.5),
    "sort_values": lambda x: x.sort(1).values,
    "sort_indices": lambda x: x.sort(-1).indices,
    "sort_values_last": lambda x: x.sort(-1).values,
    # a cast keeps its input's strides (PyTorch's empty_like preserves a dense layout's, size-1 dimensions' too);
    # ``number - x`` (rsub) is a binary op beside a number, as ``x + 1``
    "half": lambda x: x.half(),
    "double_add_scalar": lambda x: x.double() + 1,
    "rsub_scalar": lambda x: 1 - x,
    # clone and nan_to_num keep their input's strides (PyTorch's clone preserves a dense layout, nan_to_num writes
    # into empty_like(x))
    "clone": lambda x: x.clone(),
    "clone_then_in_place": lambda x: x.clone().tanh_(),
    "nan_to_num": lambda x: x.nan_to_num(),
    # a number that is no input of the node: a binary op beside a 0-d operand to PyTorch's TensorIterator
    "remainder_scalar": lambda x: x % 0.3,
    "fmod_scalar": lambda x: x.fmod(0.3),
    "deg2rad": lambda x: x.deg2rad(),
    # clamp by one tensor bound: the absent one (None) is no operand, TensorIterator's fast setup stands
    "clamp_tensor_min": lambda x: x.clamp(min=x * 0),
    "clamp_tensor_max": lambda x: x.clamp(max=x * 0 + 5),
    # masked_fill: row-major whatever the input's layout (PyTorch's clones it contiguous, then fills it)
    "masked_fill": lambda x: x.masked_fill(x > 3, 0.5),
    "masked_fill_tensor": lambda x: x.masked_fill(x > 3, x.new_tensor(0.5)),
    # special's Bessel functions (no gradient): a unary op's layout
    "bessel_j0": lambda x: (torch if isinstance(x, torch.Tensor) else ember).special.bessel_j0(x),
    "modified_bessel_k1": lambda x: (torch if isinstance(x, torch.Tensor) else ember).special.modified_bessel_k1(x),
    # number operands that are no input of the node: a one-input op's layout
    "pow_two": lambda x: x.pow(2),
    "pow_three": lambda x: x ** 3,
    "clamp_numbers": lambda x: x.clamp(1, 5),
    # hardtanh (relu6's too) writes into empty_like(x): a dense input's strides, its size-1 dimensions' included
    "hardtanh": lambda x: (torch if isinstance(x, torch.Tensor) else ember).nn.functional.hardtanh(x, 1.0, 5.0),
    "relu6": lambda x: (torch if isinstance(x, torch.Tensor) else ember).nn.functional.relu6(x - 3),
    "hardtanh_integer": lambda x: (torch if isinstance(x, torch.Tensor) else ember).nn.functional.hardtanh(
        x.detach().long(), 1, 5),
}


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("how", ["channels_last", "empty_channels_last", "permuted", "reversed"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", list(OPS))
def test_strides_are_pytorchs(op, shape, how, recorded):
    """Also with an input that requires grad: the op then records its node, and the result takes the same layout
    on that path (``apply``'s relayout of a one-input pointwise result with a size-1 dimension)."""
    x, t = _inputs(ember, shape, how).requires_grad_(recorded), _inputs(torch, shape, how).requires_grad_(recorded)
    assert x.stride() == t.stride()
    out, expected = OPS[op](x), OPS[op](t)
    assert out.stride() == expected.stride()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["exp", "sigmoid", "add_scalar", "sort_values"])
def test_gradients_and_saved_versions_still_hold(op):
    x = _inputs(ember, (2, 4, 5, 1), "channels_last").requires_grad_()
    t = _inputs(torch, (2, 4, 5, 1), "channels_last").requires_grad_()
    out, expected = OPS[op](x), OPS[op](t)
    assert out.stride() == expected.stride()
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)
    if op in ("exp", "sigmoid"):  # (the result, saved for backward, is the tensor's own array: its version counts)
        y = OPS[op](_inputs(ember, (2, 4, 5, 1), "channels_last").requires_grad_())
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("shape, how", [(shape, how) for shape in SHAPES for how in (
    "row_major", "channels_last", "empty_channels_last", "permuted", "reversed")] + [
    ((1, 6, 8), "row_major"), ((6, 1, 8), "row_major"), ((1, 1, 8), "row_major")])
@pytest.mark.parametrize("op", ["x + y", "y + x", "x * y", "x + y[:1]"])
@pytest.mark.parametrize("recorded", [False, True])
def test_broadcast_operand_strides_are_pytorchs(op, shape, how, recorded):
    """A row-major operand broadcast against one with a dimension of size 1 (GPT's ``tok + pos`` of (1, T, C) and
    (T, C)): the result's strides are PyTorch's, whether ``x``'s size-1 dimensions have row-major strides (the
    result then keeps NumPy's) or strides of their own that NumPy still calls row-major (one channel's
    channels-last: PyTorch follows them)."""
    got = []
    for m in (ember, torch):
        x = m.arange(float(np.prod(shape))).reshape(shape) if how == "row_major" else _inputs(m, shape, how)
        x.requires_grad_(recorded)
        y = m.arange(float(np.prod(shape[1:]))).reshape(shape[1:]) / 7
        out = eval(op, {"x": x, "y": y})
        got.append((out.stride(), out.detach().numpy().tolist()))
    assert got[0] == got[1]
