"""vmap of masked_fill with a batched value (a 0-d tensor per example): each example filled with its own value,
in the input's dtype, as under PyTorch; out of place and in place (of a batched input), with gradients. (PyTorch
runs its slow per-example fallback and warns of it; ember's rule is batched and does not.)"""

import warnings

import numpy as np
import pytest
import torch

import ember

MASK = [[True, False, True], [False, False, True]]


def _filled(m, form):
    """(the result, its dtype's name, the gradients of x and the values, or None for an integer result)."""
    values = m.tensor([1.5, -2.0], requires_grad=True)
    x = m.arange(6.0).reshape(2, 3).requires_grad_()
    mask = m.tensor([True, False, True])

    def fill(xe, v, mk=mask):
        if form == "method":
            return xe.masked_fill(mask, v)
        if form == "function":
            return m.masked_fill(xe, mask, v)
        if form == "keyword":
            return xe.masked_fill(mask=mask, value=v)
        if form == "inplace":
            return (xe * 1).masked_fill_(mask, v)
        if form == "int_self":
            return m.arange(3).masked_fill(mask, v.detach())  # (a value requiring grad: PyTorch refuses)
        return xe.masked_fill(mk, v)

    with warnings.catch_warnings():
        if m is torch:  # (its fallback's warning; ember's rule gives none)
            warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
        out = m.vmap(fill)(x, values, m.tensor(MASK)) if form == "batched_mask" else m.vmap(fill)(x, values)
    grads = None
    if out.dtype.is_floating_point:
        grads = [g.numpy() for g in m.autograd.grad((out * m.arange(1.0, 7.0).reshape(2, 3)).sum(), (x, values))]
    return out.detach().numpy(), str(out.dtype).split(".")[-1], grads


@pytest.mark.parametrize("form", ["method", "function", "keyword", "inplace", "batched_mask", "int_self"])
def test_each_example_is_filled_with_its_own_value_as_torchs(form):
    (want, want_dtype, want_grads), (got, got_dtype, got_grads) = _filled(torch, form), _filled(ember, form)
    np.testing.assert_array_equal(got, want)
    assert got_dtype == want_dtype and (got_grads is None) == (want_grads is None)
    for g, w in zip(got_grads or [], want_grads or []):
        np.testing.assert_array_equal(g, w)
