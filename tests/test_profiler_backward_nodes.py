"""The backward nodes ``ember.profiler`` records against those PyTorch's profiler records for the same backward.

A node that runs other nodes inside its own backward (a ``FormulaNode``, ember's one node for PyTorch's
``SelectBackwardBackward0``, ``SliceBackwardBackward0``, ``StackBackward0`` ...) runs its recorded steps through
``engine.run_node``, which opens no span of its own: PyTorch's node is one op, so its profiler shows that node and
no steps inside it (a ``CopySlices`` or ``CloneBackward0`` span there would be ember's implementation showing)."""

from __future__ import annotations

import re

import pytest
import torch

import ember

# a backward node's event in PyTorch's profiler ("autograd::engine::evaluate_function: X" wraps each, left out)
_NODE = re.compile(r"(?:torch::autograd::)?(\w+Backward\d*|CopySlices|AccumulateGrad)")


def _node_names(m, prof) -> list[str]:
    if m is torch:
        return sorted(match.group(1) for e in prof.events() if (match := _NODE.fullmatch(e.name)))
    return sorted(e["name"] for e in prof.events() if e["cat"] == "backward")


def _second_backward(m, form: str) -> list[str]:
    x = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
    if form == "select":
        g, = m.autograd.grad(x.exp()[1] ** 2, x, create_graph=True)
    elif form == "slice":
        g, = m.autograd.grad((x[1:] ** 3).sum(), x, create_graph=True)
    else:  # unbind: its gradient a stack of the pieces'
        a, b, c = x.unbind()
        g, = m.autograd.grad(a * b * c, x, create_graph=True)
    with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU]) as prof:
        g.sum().backward()
    return _node_names(m, prof)


@pytest.mark.parametrize("form", ["select", "slice", "unbind"])
def test_a_formula_node_is_one_span_as_pytorchs_node(form):
    names = _second_backward(ember, form)
    assert names == _second_backward(torch, form)
    assert {"SelectBackwardBackward0", "SliceBackwardBackward0", "StackBackward0"} & set(names)  # (one ran)
