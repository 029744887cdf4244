"""A base's ``requires_grad_`` after views of it were made: views without history (made while the base needed no
gradient, or under no_grad) follow the base's flag as PyTorch's ask their base; a view's own ``requires_grad_``
leaves its siblings and base as they were. Each case against PyTorch."""

from __future__ import annotations

import pytest
import torch

import ember


def _views_then_base(m):
    base = m.zeros(4)
    v, w = base[:2], base[2:].view(2, 1)
    base.requires_grad_()
    return v.requires_grad, w.requires_grad, v.is_leaf, w.is_leaf


def _view_itself(m):
    base = m.zeros(4)
    v, w = base[:2], base[2:]
    v.requires_grad_()
    return v.requires_grad, w.requires_grad, base.requires_grad


def _no_grad_view_then_base_off(m):
    with m.no_grad():
        base = m.zeros(4, requires_grad=True)
        v = base[:2]
    before = v.requires_grad
    base.requires_grad_(False)
    return before, v.requires_grad


def _grad_mode_view_keeps_history(m):
    base = m.zeros(4, requires_grad=True)
    v = base[:2]
    return v.requires_grad, v.grad_fn is not None


@pytest.mark.parametrize("case", [_views_then_base, _view_itself, _no_grad_view_then_base_off,
                                  _grad_mode_view_keeps_history])
def test_views_follow_their_bases_requires_grad_as_pytorch(case):
    assert case(ember) == case(torch)
