"""The layout of what ``autograd.grad`` returns, against PyTorch: a gradient its formulas leave expanded (``sum``'s,
and whatever passes it through unchanged) comes back expanded, strides 0, not contiguous, and in-place arithmetic
on it raises PyTorch's error; ``mean``'s gradient is a tensor of its own (PyTorch's ``expand / numel``), contiguous
and writable. Values and the result's independence from the graph's tensors are checked too."""

from __future__ import annotations

import pytest
import torch

import ember

CASES = {
    "sum": lambda m, p: p.sum(),
    "sum(dim)": lambda m, p: p.sum(0).sum(),
    "sum times one": lambda m, p: p.sum() * 1.0,
    "sum(dim, keepdim) times column": lambda m, p: (p.sum(1, keepdim=True) * m.ones(3, 1)).sum(),
    "plus one, summed": lambda m, p: (p + 1).sum(),
    "mean": lambda m, p: p.mean(),
    "mean(dim)": lambda m, p: p.mean(1).sum(),
    "times two, summed": lambda m, p: (p * 2).sum(),
    "expanded row, summed": lambda m, p: p[0].expand(3, 4).sum(),
}


def _outcome(call):
    try:
        return call()
    except RuntimeError as err:
        return f"raises: {str(err).split('.')[0]}"


def _observe(m, case):
    p = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_()
    (g,) = m.autograd.grad(CASES[case](m, p), p)
    seen = [g.stride(), g.is_contiguous(), g.tolist(), _outcome(lambda: g.view(12).stride()), g.contiguous().stride()]
    try:
        g.add_(1.0)
        seen.append(("add_", g.tolist()))
    except RuntimeError as err:
        seen.append(("add_ raises", str(err).split(".")[0]))
    seen.append(p.tolist())  # (the leaf is untouched whatever happens to its gradient)
    return seen


@pytest.mark.parametrize("case", list(CASES))
def test_grad_result_layout_as_pytorch(case):
    assert _observe(ember, case) == _observe(torch, case)


def test_expanded_grad_shares_no_memory_with_grad_output():
    # PyTorch's expanded gradient is a view of the grad_output; ember's keeps the layout but copies the one element
    # (a later in-place change of grad_output must not reach a gradient returned before, which no program of
    # PyTorch's API can rely on either way without also depending on its storage sharing)
    p = ember.ones(2, 3, requires_grad=True)
    go = ember.tensor(2.0)
    (g,) = ember.autograd.grad(p.sum(), p, go)
    assert g.stride() == (0, 0) and g.tolist() == [[2.0] * 3] * 2
    go.fill_(5.0)
    assert g.tolist() == [[2.0] * 3] * 2
