"""Every form of clamp (one bound or two, number or tensor bounds, clamp_min/clamp_max, clip, in place) against
PyTorch: the node its result comes from (ClampBackward1, ClampMinBackward0, ClampMaxBackward0 ... by the form, as
PyTorch's overloads), the values and the gradient, with elements below, at and above each bound."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

FORMS = {
    "clamp(min=)": lambda m, x, b: m.clamp(x, min=0.0),
    "clamp(max=)": lambda m, x, b: m.clamp(x, max=0.0),
    "clamp(min, max)": lambda m, x, b: m.clamp(x, 0.0, 1.0),
    "clamp_min": lambda m, x, b: m.clamp_min(x, 0.0),
    "clamp_max": lambda m, x, b: m.clamp_max(x, 0.0),
    "method clamp_min": lambda m, x, b: x.clamp_min(1.0),
    "method clamp_max": lambda m, x, b: x.clamp_max(1.0),
    "clip(min=)": lambda m, x, b: x.clip(min=0.0),
    "clip(max=)": lambda m, x, b: x.clip(max=1.0),
    "clamp(min=tensor)": lambda m, x, b: m.clamp(x, min=b),
    "clamp(max=tensor)": lambda m, x, b: m.clamp(x, max=b),
    "clamp_min(tensor)": lambda m, x, b: x.clamp_min(b),
    "clamp_max(tensor)": lambda m, x, b: x.clamp_max(b),
    "clamp_(min=)": lambda m, x, b: (x * 1).clamp_(min=0.0),
    "clamp_min_": lambda m, x, b: (x * 1).clamp_min_(0.0),
    "clamp_max_": lambda m, x, b: (x * 1).clamp_max_(0.0),
}

VALUES = [-2.0, 0.0, 0.5, 1.0, 3.0, -0.0]


@pytest.mark.parametrize("form", list(FORMS))
def test_each_clamp_form_as_pytorch(form):
    got = []
    for m in (ember, torch):
        x = m.tensor(VALUES, dtype=m.float64, requires_grad=True)
        b = m.tensor([0.0, 0.0, 1.0, 1.0, 2.0, 0.0], dtype=m.float64)
        out = FORMS[form](m, x, b)
        out.backward(m.arange(1.0, 7.0, dtype=m.float64))
        got.append((type(out.grad_fn).__name__, out.tolist(), x.grad.tolist()))
    assert got[0] == got[1]


# Number bounds against signed zeros: PyTorch's kernels keep x where it ties a bound (``clamp(-0.0, min=0.0)`` is
# -0.0, ``clamp(0.0, max=-0.0)`` is 0.0), with one bound or two, in every form. 37 elements: PyTorch's vectorised
# loop and its scalar tail both run.
_TIE_VALUES = [-0.0, 0.0, -1.0, 1.0, -0.5, 0.5, float("nan"), float("inf"), float("-inf")] * 4 + [-0.0]
_TIE_BOUNDS = [None, 0.0, -0.0, 0, 0.5, -0.5, float("nan")]
_TIE_FORMS = {
    "clamp": lambda m, x, lo, hi: m.clamp(x, lo, hi),
    "clip": lambda m, x, lo, hi: m.clip(x, min=lo, max=hi),
    "method clamp": lambda m, x, lo, hi: x.clamp(lo, hi),
    "clamp_": lambda m, x, lo, hi: x.clone().clamp_(lo, hi),
    "clip_": lambda m, x, lo, hi: x.clone().clip_(lo, hi),
    "clamp out=": lambda m, x, lo, hi: m.clamp(x, lo, hi, out=m.empty_like(x)),
    "clamp_min": lambda m, x, lo, hi: m.clamp_min(x, lo if lo is not None else hi),
    "clamp_max": lambda m, x, lo, hi: m.clamp_max(x, hi if hi is not None else lo),
    "clamp_min_": lambda m, x, lo, hi: x.clone().clamp_min_(lo if lo is not None else hi),
    "clamp_max_": lambda m, x, lo, hi: x.clone().clamp_max_(hi if hi is not None else lo),
    "_foreach_clamp_min": lambda m, x, lo, hi: m._foreach_clamp_min([x], lo if lo is not None else hi)[0],
}


def _same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal values, NaN where PyTorch's is, and the sign bit of every number (a NaN's sign bit is left out:
    PyTorch's bfloat16 kernels flip it)."""
    np.testing.assert_array_equal(got, expected)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("form", list(_TIE_FORMS))
def test_number_bounds_keep_x_at_a_tie_as_pytorch(form, dtype):
    for lo in _TIE_BOUNDS:
        for hi in _TIE_BOUNDS:
            if lo is None and hi is None:
                continue
            got = []
            for m in (ember, torch):
                x = m.tensor(_TIE_VALUES, dtype=getattr(m, dtype))
                got.append(_TIE_FORMS[form](m, x, lo, hi).float().numpy())
            _same_bits(*got)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_number_bounds_of_an_integer_tensor_as_pytorch(dtype):
    values = [0, 1, 3, 7] * 9 + [0]
    for lo, hi in [(0, None), (None, 0), (0, 0), (1, 0), (0.0, None), (None, -0.0), (-0.0, 3), (0, 3.5)]:
        got = []
        for m in (ember, torch):
            out = m.clamp(m.tensor(values).to(getattr(m, dtype)), lo, hi)
            got.append((str(out.dtype).split(".")[-1], out.float().numpy()))
        assert got[0][0] == got[1][0]
        _same_bits(got[0][1], got[1][1])


@pytest.mark.parametrize("bounds", [(0.0, None), (None, -0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, 1.0)])
def test_gradient_at_a_zero_tie_as_pytorch(bounds):
    """The gradient where x ties a zero bound: x's (both zeros tie either), selected as PyTorch's."""
    got = []
    for m in (ember, torch):
        x = m.tensor([-0.0, 0.0, -1.0, 1.0, float("nan")], dtype=m.float64, requires_grad=True)
        out = m.clamp(x, *bounds)
        out.backward(m.tensor([-2.0, 3.0, -4.0, 5.0, 6.0], dtype=m.float64))
        got.append((out.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*got):
        _same_bits(ours, theirs)


@pytest.mark.parametrize("bounds", [(0.0, None), (None, -0.0), (-0.0, 1.0), (0.5, None)])
@pytest.mark.parametrize("layout", ["transposed", "channels_last", "sliced"])
def test_number_bounds_keep_the_input_layout_as_pytorch(layout, bounds):
    """clamp's result takes a dense input's strides (PyTorch's TensorIterator): also with a zero bound, whose
    tie-keeping path computes apart from NumPy's clip; a non-dense input gives a contiguous result."""
    values = np.linspace(-2.0, 2.0, 120).reshape(2, 3, 4, 5)
    values[0, 0, 0, :3] = [-0.0, 0.0, np.nan]
    got = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=m.float32)
        x = {"transposed": x.transpose(1, 3), "channels_last": x.contiguous(memory_format=m.channels_last),
             "sliced": x[:, :, ::2]}[layout]
        out = m.clamp(x, *bounds)
        got.append((tuple(out.stride()), out.numpy()))
    assert got[0][0] == got[1][0]
    _same_bits(got[0][1], got[1][1])
