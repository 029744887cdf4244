"""A binary op on operands of one shape and two floating dtypes computes in the promoted dtype, and each operand's
gradient reaches it in the operand's own dtype, as PyTorch's engine casts it on the edge: a hook on the narrower
operand and its retained .grad see float32 (or float16/bfloat16), not the promoted float64 or float32. (ember's fast
path for two tensors of one shape must not take operands of two dtypes: it would hand the promoted gradient on.)
Dtypes seen by the hook, the retained .grad's dtype and values, and the leaves' gradients, against PyTorch."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "b + a": lambda a, b: b + a,
    "b * a": lambda a, b: b * a,
    "torch.add": lambda a, b: a.add(b),
}
PAIRS = [("float32", "float64"), ("float64", "float32"), ("float16", "float32"), ("bfloat16", "float32"),
         ("float32", "float32")]


def _run(m, op, da, db):
    x = m.tensor(np.array([[1.5, -2.0], [3.0, 0.25]]), dtype=getattr(m, da), requires_grad=True)
    b = m.tensor(np.array([[0.3, 4.1], [-1.7, 2.9]]), dtype=getattr(m, db), requires_grad=True)
    a = x * 2  # (a non-leaf operand: its gradient goes on to x's node)
    a.retain_grad()
    seen = []
    a.register_hook(lambda g: seen.append(str(g.dtype).split(".")[1]))
    (OPS[op](a, b) * 1.25).sum().backward()
    return seen, [str(t.grad.dtype).split(".")[1] for t in (a, x, b)], [t.grad.double().numpy() for t in (a, x, b)]


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
@pytest.mark.parametrize("op", list(OPS))
def test_each_operand_gets_its_gradient_in_its_own_dtype(op, dtypes):
    got, want = _run(ember, op, *dtypes), _run(torch, op, *dtypes)
    assert got[:2] == want[:2]
    tol = 1e-2 if "16" in dtypes[0] + dtypes[1] else 1e-6
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
