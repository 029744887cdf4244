"""Clamp's tensor bounds as inputs of its node, against PyTorch: in every form that takes a tensor bound (one or two,
clamp_min/clamp_max, clip, the method and in-place forms, a bound of another dtype or shape), with the input and
each bound requiring grad, the node's edges (how many, and the node each leads to: PyTorch gives clamp's Tensor
overload three, ``None`` for a bound left out, clamp_min/clamp_max two), the values, each gradient, and a second
backward through the gradients (clamp's masks). ``tests/test_clamp_forms.py`` has each form's node name with bounds that do not
require grad."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

# (ties: x at a lower bound below the upper one (2) and at an upper bound above the lower one (6), whose gradient
# goes to x alone; x at both bounds where they are equal (1, 3))
X = [-2.0, 0.0, 1.0, 1.0, 3.0, -0.0, 0.25, 7.0]
LO = [0.0, 0.0, 1.0, 1.0, 2.0, 0.0, -1.0, 8.0]
HI = [1.0, 0.0, 2.0, 1.0, 2.5, 1.0, 0.25, 9.0]

# (form, which of (lo, hi) it takes: the gradients compared)
FORMS = {
    "clamp(min=t)": (lambda m, x, lo, hi: m.clamp(x, min=lo), "l"),
    "clamp(max=t)": (lambda m, x, lo, hi: m.clamp(x, max=hi), "h"),
    "clamp(t, t)": (lambda m, x, lo, hi: m.clamp(x, lo, hi), "lh"),
    "clamp(min=t, max=None)": (lambda m, x, lo, hi: m.clamp(x, min=lo, max=None), "l"),
    "clamp(min=None, max=t)": (lambda m, x, lo, hi: m.clamp(x, min=None, max=hi), "h"),
    "x.clamp(t, t)": (lambda m, x, lo, hi: x.clamp(lo, hi), "lh"),
    "clip(t, t)": (lambda m, x, lo, hi: m.clip(x, lo, hi), "lh"),
    "x.clip(max=t)": (lambda m, x, lo, hi: x.clip(max=hi), "h"),
    "clamp_min(t)": (lambda m, x, lo, hi: m.clamp_min(x, lo), "l"),
    "clamp_max(t)": (lambda m, x, lo, hi: m.clamp_max(x, hi), "h"),
    "x.clamp_min(t)": (lambda m, x, lo, hi: x.clamp_min(lo), "l"),
    "x.clamp_max(t)": (lambda m, x, lo, hi: x.clamp_max(hi), "h"),
    "clamp_(t, t)": (lambda m, x, lo, hi: (x * 1).clamp_(lo, hi), "lh"),
    "clamp_(max=t)": (lambda m, x, lo, hi: (x * 1).clamp_(max=hi), "h"),
    "clamp_min_(t)": (lambda m, x, lo, hi: (x * 1).clamp_min_(lo), "l"),
    "clamp_max_(t)": (lambda m, x, lo, hi: (x * 1).clamp_max_(hi), "h"),
    "clamp(min=row)": (lambda m, x, lo, hi: m.clamp(x.reshape(2, 4), min=lo[:4]), "l"),
    "clamp(max=0-d)": (lambda m, x, lo, hi: m.clamp(x, max=hi[2]), "h"),
    "clamp_max(row)": (lambda m, x, lo, hi: m.clamp_max(x.reshape(2, 4), hi[4:]), "h"),
}


def _edges(fn) -> list:
    return [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


def _run(m, form, dtype, bound_dtype):
    make, takes = FORMS[form]
    x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
    lo, hi = (m.tensor(v, dtype=getattr(m, bound_dtype), requires_grad=True) for v in (LO, HI))
    out = make(m, x, lo, hi)
    weights = m.arange(1.0, out.numel() + 1.0, dtype=out.dtype).reshape(out.shape)
    leaves = [x] + [b for k, b in (("l", lo), ("h", hi)) if k in takes]
    grads = m.autograd.grad((out * out * weights).sum(), leaves, create_graph=True)
    # a second backward, through the masks: each gradient is 2 out times the weights where its input passed
    second = m.autograd.grad(sum((g * g).sum() for g in grads), leaves, allow_unused=True)
    return (type(out.grad_fn).__name__, _edges(out.grad_fn), str(out.dtype).split(".")[-1],
            np.asarray(out.detach().tolist()).tolist(), [np.asarray(g.detach().tolist()).tolist() for g in grads],
            [None if s is None else np.asarray(s.tolist()).tolist() for s in second])


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("form", list(FORMS))
def test_tensor_bounds_that_require_grad_as_pytorch(form, dtypes):
    got, want = (_run(m, form, *dtypes) for m in (ember, torch))
    assert got == want
