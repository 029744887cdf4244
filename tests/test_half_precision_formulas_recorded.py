"""Ops that compute half-precision (float16, bfloat16) inputs in float32 (lowp.py), differentiated twice against
PyTorch: the recorded formula runs in the half dtype on the graph's own tensors (the inputs, the rounded output),
as PyTorch's formulas run in the tensors' dtype, so the gradients' nodes are the formula's (an mm's gradient is
MmBackward0, not a cast back to the half dtype) and ops whose formulas read their inputs or output (matrix
products, softmax, norms) differentiate twice (they raised HigherOrderError)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _f(m):
    return m.nn.functional


OPS = {
    "mm": lambda m, a, b, c: a @ b,
    "bmm": lambda m, a, b, c: a.reshape(2, 2, 3) @ b.expand(2, 3, 3),
    "matmul vector": lambda m, a, b, c: a @ b[0],
    "addmm": lambda m, a, b, c: m.addmm(c, a, b, beta=0.5, alpha=2.0),
    "addmv": lambda m, a, b, c: m.addmv(c[:, 0], a, b[:, 0]),
    "addr": lambda m, a, b, c: m.addr(c, a[:, 0], b[0]),
    "baddbmm": lambda m, a, b, c: m.baddbmm(c.reshape(2, 2, 3), a.reshape(2, 2, 3), b.expand(2, 3, 3)),
    "addbmm": lambda m, a, b, c: m.addbmm(c[:3], a[:3].expand(2, 3, 3), b.expand(2, 3, 3)),
    "linear of a square": lambda m, a, b, c: _f(m).linear(a * a, b, c[0]),
    "softmax": lambda m, a, b, c: a.softmax(1),
    "log_softmax": lambda m, a, b, c: a.log_softmax(0),
    "nll_loss": lambda m, a, b, c: _f(m).nll_loss(a, m.tensor([0, 1, 2, 0])) * a,
    "norm": lambda m, a, b, c: a.norm(dim=1),
    "logsumexp": lambda m, a, b, c: a.logsumexp(1),
    "prod": lambda m, a, b, c: a.prod(1),
    "sum": lambda m, a, b, c: a.sum(0) * a,
}


def _run(m, name: str, dtype: str):
    """(names of the gradients' nodes, the gradients, their gradients) of OPS[name] in ``dtype``."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) * 0.5 for s in ((4, 3), (3, 3), (4, 3))]
    leaves = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=True) for a in arrays]
    y = OPS[name](m, *leaves)
    grads = m.autograd.grad((y * y).sum(), leaves, create_graph=True, allow_unused=True)
    used = [g for g in grads if g is not None]
    again = m.autograd.grad(sum((g * g).sum() for g in used), leaves, allow_unused=True)
    names = [None if g is None or g.grad_fn is None else g.grad_fn.name() for g in grads]
    for g in used:
        assert g.dtype == getattr(m, dtype)
    return names, [g.detach().float().numpy() for g in used], [g.float().numpy() for g in again if g is not None]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(OPS))
def test_twice_differentiated_as_pytorch_with_the_formulas_nodes(name, dtype):
    t_names, t_grads, t_again = _run(torch, name, dtype)
    e_names, e_grads, e_again = _run(ember, name, dtype)
    for e, t in zip(e_grads + e_again, t_grads + t_again, strict=True):
        np.testing.assert_allclose(e, t, rtol=5e-2, atol=5e-2 * max(1.0, np.abs(t).max()))
    # the nodes are the formula's whatever the precision: where ember's float32 gradients' nodes are PyTorch's, so
    # are the half-precision ones
    assert e_names == _run(ember, name, "float32")[0]
    if _run(torch, name, "float32")[0] == e_names:
        assert e_names == t_names


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_a_rounded_output_changed_in_place_before_backward_is_refused_as_pytorch(op, dtype):
    """The node saved its float32 output before rounding; PyTorch saves the output itself, so changing it in place
    before backward is its error."""
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=getattr(m, dtype), requires_grad=True)
        y = getattr(x, op)(1)
        with m.no_grad():
            y.add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
