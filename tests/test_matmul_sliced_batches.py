"""matmul of 4-D stacks whose batch dims are a slice of a larger stack (``x[:, :3]``, ``x[:, ::2]``, ``x[1:]``):
whether PyTorch's batched product can view the batch dims as one decides whether it copies the operand, and so
whether changing the operand in place before backward is an error. Each layout with a last dim equal to, smaller
or larger than the sliced batch dim's step (a check that read the wrong dim's size agreed with the right one on the
square shapes of other tests), each operand changed or not: values, gradients or PyTorch's error."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

LAYOUTS = {
    "x[:, :3], last dim 10": ((2, 10, 4, 10), lambda x: x[:, :3]),
    "x[:, :3], last dim 5": ((2, 10, 4, 5), lambda x: x[:, :3]),
    "x[:, ::2], last dim 4": ((2, 6, 4, 4), lambda x: x[:, ::2]),
    "x[1:], last dim 3": ((3, 3, 4, 3), lambda x: x[1:]),
    "contiguous, last dim 5": ((2, 3, 4, 5), lambda x: x),
    "x[:, 1:], last dim 2": ((2, 3, 4, 2), lambda x: x[:, 1:]),
}


def _run(m, layout, changed):
    shape, take = LAYOUTS[layout]
    base = m.tensor(np.arange(float(np.prod(shape))).reshape(shape) / 100, requires_grad=True)
    a = take(base * 1.0)
    cols = a.shape[1]  # (the other operand's last dim the batch dim's size: a wrong dim read agrees on it)
    other = m.tensor(np.linspace(-1.0, 1.0, a.shape[0] * a.shape[1] * a.shape[3] * cols)
                     .reshape(a.shape[0], a.shape[1], a.shape[3], cols), requires_grad=True)
    y = m.matmul(a, other)
    value = y.detach().numpy().copy()
    if changed:
        with m.no_grad():
            a.mul_(2.0)
    try:
        grads = m.autograd.grad(y, (base, other), m.ones_like(y))
    except RuntimeError as err:
        return value, "modified by an inplace operation" in str(err)
    return value, [g.numpy() for g in grads]


@pytest.mark.parametrize("changed", [False, True])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_sliced_batch_stacks_as_pytorch(layout, changed):
    (got_y, got), (want_y, want) = _run(ember, layout, changed), _run(torch, layout, changed)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
    assert type(got) is type(want)
    if isinstance(want, bool):
        assert got == want
    else:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
