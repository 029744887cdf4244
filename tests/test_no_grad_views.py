"""A view made under no_grad of a tensor that requires grad, as PyTorch's: it requires grad (a leaf without
history: a gradient reaching it goes nowhere, and it cannot be a root of backward), and changing it in place
in grad mode is PyTorch's error for a view made in no_grad mode, not the leaf's."""

from __future__ import annotations

import pytest
import torch

import ember


def _made(m, leaf: bool):
    x = m.ones(4, requires_grad=True)
    base = x if leaf else x * 1
    with m.no_grad():
        v = base[:2]
        vv = v.view(2, 1)
    return x, v, vv


@pytest.mark.parametrize("leaf", [True, False])
def test_flags_as_pytorchs(leaf):
    got = []
    for m in (ember, torch):
        x, v, vv = _made(m, leaf)
        y = v * 2
        got.append((v.requires_grad, v.is_leaf, v.grad_fn is None, vv.requires_grad, y.requires_grad,
                    [f is None for f, _ in y.grad_fn.next_functions]))
    assert got[0] == got[1] == (True, True, True, True, True, [True, True]), got


def test_gradient_through_it_goes_nowhere():
    got = []
    for m in (ember, torch):
        x, v, _ = _made(m, True)
        (v * 2).sum().backward()
        unused = m.autograd.grad((v * 2).sum(), x, allow_unused=True)
        got.append((x.grad, v.grad, unused))
    assert got[0] == got[1] == (None, None, (None,)), got


def _error(fn):
    out = []
    for m in (ember, torch):
        try:
            fn(m)
            out.append(None)
        except RuntimeError as err:
            out.append(str(err))
    return out


@pytest.mark.parametrize("leaf", [True, False])
def test_in_place_in_grad_mode_is_the_no_grad_view_error(leaf):
    e, t = _error(lambda m: _made(m, leaf)[1].mul_(2))
    assert t is not None and t.startswith("A view was created in no_grad mode and is being modified inplace")
    assert e == t


def test_backward_from_it_is_refused():
    e, t = _error(lambda m: _made(m, True)[1].backward(m.ones(2)))
    assert t is not None and e is not None
    assert e.startswith(t), (e, t)
