"""A Parameter's ``chunk``/``split``/``unbind`` pieces share one node (SplitBackward0 & co., PyTorch's) whether or
not a DTensor exists: only a DTensor's pieces go one node each to its dispatch."""

import pytest

import ember
from ember.autograd import graph


@pytest.mark.parametrize("dtensor_made", [False, True])
@pytest.mark.parametrize("op", ["chunk", "split", "split_sizes", "unbind"])
def test_parameter_pieces_share_one_node(op, dtensor_made, monkeypatch):
    if dtensor_made:  # (the hook a DTensor installs, answering None for anything that is no DTensor)
        monkeypatch.setattr(graph, "_dtensor_dispatch", lambda cls, inputs, params: None)
    p = ember.nn.Parameter(ember.arange(6.0).view(3, 2))
    pieces = {"chunk": lambda: p.chunk(3), "split": lambda: p.split(1), "split_sizes": lambda: p.split([1, 2]),
              "unbind": lambda: p.unbind()}[op]()
    nodes = {id(t.grad_fn) for t in pieces}
    assert len(nodes) == 1
    name = {"split_sizes": "SplitWithSizesBackward0", "unbind": "UnbindBackward0"}.get(op, "SplitBackward0")
    assert type(pieces[0].grad_fn).__name__ == name
    sum(t.sum() * (i + 1) for i, t in enumerate(pieces)).backward()
    assert p.grad is not None and p.grad.shape == (3, 2)
