"""``SliceBackward0``'s and ``SelectBackward0``'s saved attributes as PyTorch's: ``_saved_dim`` (in the node's
input: after an unsqueeze, after an Ellipsis), ``_saved_start``/``_saved_end``/``_saved_step`` as the slice was
given (a missing end INT64_MAX, a negative number read as unsigned), ``_saved_index``, ``_saved_self_sym_sizes``
(the input's shape: the first node's result for ``x[1:3, 2]``); still readable after backward (ints, not tensors)."""

import pytest
import torch

import ember

EXPRESSIONS = ["x[1:3]", "x[:3]", "x[2:]", "x[-2:]", "x[:-1]", "x[::2]", "x[..., 1:3]", "x[:, 1:5:2]",
               "x[None, 1:3]", "x[10:20]", "x[-1]", "x[..., -2]", "x[:, 0]", "x.narrow(1, 1, 2)", "x.select(1, -1)",
               "x[1:3, 2]", "x[1:3][:, 1:2]", "x[:]"]


def _attributes(m, expression):
    x = m.arange(24.0).reshape(4, 6).requires_grad_()
    y = eval(expression, {"x": x})
    fn = y.grad_fn
    names = ("_saved_dim", "_saved_start", "_saved_end", "_saved_step", "_saved_index", "_saved_self_sym_sizes")
    before = {n: getattr(fn, n) for n in names if hasattr(fn, n)}
    y.sum().backward()
    after = {n: getattr(fn, n) for n in before}
    return type(fn).__name__, before, after


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_as_pytorchs(expression):
    got, expected = _attributes(ember, expression), _attributes(torch, expression)
    assert got == expected
    assert expected[1]  # (a node with saved attributes: the test compares something)
