"""Gradients that, as in PyTorch, have no derivative of their own (ctc_loss's, multi-process SyncBatchNorm's).

Under ``create_graph`` such an op's backward computes its gradient on plain arrays and returns it through
``gradient_without_derivative``: a recorded op whose output requires grad when what the gradient depends on does
(as PyTorch's ``NotImplemented`` node), so that the first-order gradient is there and only differentiating it
again raises PyTorch's error, "derivative for aten::<op> is not implemented".
"""

from __future__ import annotations

from .graph import Node, torch_named
from .recorded import RecordedArray


@torch_named("NotImplemented")
class _NotImplemented(Node):
    """PyTorch's node for an op with no derivative: it passes ``grad`` (computed outside the graph) on, with an
    edge for each input (only those that require grad are given), and its backward raises."""

    def forward(self, *depends_on, grad, op: str):
        self.op = op
        return grad

    def backward(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")

    def name(self) -> str:  # (PyTorch's C++ name; its type and a tensor's repr say ``NotImplemented``)
        return "torch::autograd::NotImplemented"


def gradient_without_derivative(grad, op: str, *depends_on) -> RecordedArray:
    """``grad`` (a plain array) as a recorded gradient of the recorded arrays ``depends_on`` (plain ones and None
    are skipped) whose derivative is not implemented: ``op`` names PyTorch's backward op in the error."""
    tensors = [d.t for d in depends_on if type(d) is RecordedArray]
    return RecordedArray(_NotImplemented.apply(*tensors, grad=grad, op=op))
