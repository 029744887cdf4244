"""In-place shape changes: ``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``, ``swapdims_``.

The tensor keeps its storage and takes the view's shape (and, when it needs a gradient, the view's
place in the graph); its version counter is bumped, as PyTorch does.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.grad_mode import _GradState, no_grad
from . import shape
from .indexing import check_inplace
from .inplace import _snapshot


def _view_inplace(x: Tensor, op) -> Tensor:
    tracked = _GradState.enabled and x._requires_grad
    check_inplace(x, tracked, overlap_ok=True)  # (a new shape: no element is written, as PyTorch's, expanded too)
    if tracked:
        view = op(_snapshot(x, copy=False))  # (a view of x's memory: x keeps sharing it with its views and base)
        x.grad_fn, x._output_nr = view.grad_fn, view._output_nr
    else:
        with no_grad():
            view = op(x)
    x._data = view._data  # same storage, new shape and strides
    forward_ad.share_tangent(view, x)
    x._vc[0] += 1
    return x


def unsqueeze_(x: Tensor, dim: int) -> Tensor:
    return _view_inplace(x, lambda t: shape.unsqueeze(t, dim))


def squeeze_(x: Tensor, dim=None) -> Tensor:
    return _view_inplace(x, lambda t: shape.squeeze(t, dim))


def t_(x: Tensor) -> Tensor:
    return (_sparse_inplace if x.is_sparse else _view_inplace)(x, lambda t: shape.t_as(t, "t_"))


def transpose_(x: Tensor, dim0: int, dim1: int) -> Tensor:
    return (_sparse_inplace if x.is_sparse else _view_inplace)(x, lambda t: shape.transpose(t, dim0, dim1))


def _sparse_inplace(x: Tensor, op) -> Tensor:
    """A sparse COO tensor takes the indices, values and size of ``op(x)`` (it never joins a graph)."""
    x._data = op(x)._data
    x._bump_version()
    return x
