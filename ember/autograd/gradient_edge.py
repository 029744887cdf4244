"""``torch.autograd.graph``'s gradient edges and version bumps: ``GradientEdge``, ``get_gradient_edge``,
``increment_version``.

A gradient edge names where a tensor's gradient enters the graph (its node and output number), so that
``autograd.grad`` can take gradients with respect to it after the tensor itself is gone, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from .._inference import InferenceCounter
from .._tensor import Tensor

__all__ = ["GradientEdge", "get_gradient_edge", "increment_version"]


class GradientEdge(NamedTuple):
    """A node of the graph and one of its outputs (PyTorch's ``GradientEdge``); ``autograd.grad`` takes it among
    its inputs and outputs in a tensor's place."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """Where ``tensor``'s gradient enters the graph: its grad_fn, or a leaf's accumulator, and its output number."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    node, output_nr = tensor._edge()
    return GradientEdge(node, output_nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each of several), as an in-place change would: an op that
    changed it behind autograd's back makes backward through a graph that saved it PyTorch's error. An inference
    tensor's is left alone, as PyTorch's (it has no version counter to bump)."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not isinstance(t._vc, InferenceCounter):
            t._bump_version()
