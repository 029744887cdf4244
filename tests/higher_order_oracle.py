"""Compare ember's gradients of gradients with PyTorch's on the same inputs (float64).

    check_second_order(lambda m, x, w: m.tanh(x @ w), [(3, 4), (4, 5)])

runs ``fn(module, *inputs)`` with ``module = ember`` and ``module = torch`` on the same random inputs,
takes the first-order vector-Jacobian product with a random cotangent ``v`` and ``create_graph=True``,
compares it, then differentiates ``<first-order gradients, u>`` (a random ``u``) with respect to the inputs
and ``v`` and compares those: the second-order terms a wrong double backward breaks (what PyTorch's
``gradgradcheck`` checks, against PyTorch's own values instead of finite differences).
"""

from __future__ import annotations

import numpy as np
import torch
from oracle import assert_close, make_inputs

import ember


def _second_order(lib, fn, arrays, floating, seed):
    inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, floating)]
    out = fn(lib, *inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    rng = np.random.default_rng(seed + 1)
    vs = [lib.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, requires_grad=True) for o in outs]
    diff = [t for t, f in zip(inputs, floating) if f]
    first = lib.autograd.grad(outs, diff, vs, create_graph=True, allow_unused=True)
    used = [(t, g) for t, g in zip(diff, first) if g is not None]
    us = [lib.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype) for _t, g in used]
    total = sum((g * u).sum() for (_t, g), u in zip(used, us))
    wrt = diff + vs
    second = lib.autograd.grad(total, wrt, allow_unused=True) if total.requires_grad else [None] * len(wrt)
    return outs, first, second


def _is_zero(t) -> bool:
    """All zeros (PyTorch's ZeroTensor, the second derivative of a piecewise-linear op, has no numpy())."""
    if isinstance(t, torch.Tensor) and t._is_zerotensor():
        return True
    return not np.any(t.detach().numpy())


def check_second_order(fn, specs, *, atol=1e-7, rtol=1e-6, positive=False, seed=0, arrays=None):
    """``fn``'s outputs, first-order gradients and second-order gradients: ember against torch, float64.

    A second-order gradient that PyTorch has as None (or zero) must be None or zero in ember too."""
    arrays = arrays if arrays is not None else make_inputs(specs, dtype=np.float64, seed=seed, positive=positive)
    floating = [a.dtype.kind in "fc" for a in arrays]
    e_outs, e_first, e_second = _second_order(ember, fn, arrays, floating, seed)
    t_outs, t_first, t_second = _second_order(torch, fn, arrays, floating, seed)
    for i, (eo, to) in enumerate(zip(e_outs, t_outs)):
        assert_close(eo, to, atol=atol, rtol=rtol, msg=f"output {i}")
    for kind, es, ts in (("first-order", e_first, t_first), ("second-order", e_second, t_second)):
        for i, (e, t) in enumerate(zip(es, ts)):
            if t is None or e is None:
                other = e if t is None else t
                assert other is None or _is_zero(other), f"{kind} gradient {i}: {e} vs {t}"
                continue
            if t._is_zerotensor():  # (PyTorch's known-zero gradient, which has no values to compare)
                assert _is_zero(e), f"{kind} gradient {i}: {e} vs PyTorch's zeros"
                continue
            assert_close(e, t, atol=atol, rtol=rtol, msg=f"{kind} gradient {i}")
    return e_first, e_second


__all__ = ["check_second_order", "torch"]
