"""What ``torch.autograd.functional``'s results carry, against PyTorch: without ``create_graph`` every output and
product is detached (no history, ``requires_grad`` False, never the caller's own ``v`` or input, whichever path
computes it: forward mode, the double-backward trick, a backward pass), with it they keep their graph. Each of vjp,
jvp, hvp, vhp, jacobian and hessian, for functions that return their input itself, a linear and a nonlinear one, with
inputs and ``v`` that require grad or not, under grad mode on and off. ``tests/test_autograd_functional.py`` has
the values and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import ember

FUNCS = {
    "identity": lambda m, a: a,
    "linear": lambda m, a: a * 3.0,
    "nonlinear": lambda m, a: m.sin(a) * a,
}

# (call, whether it takes v, whether func must return one element)
CALLS = {
    "vjp": (lambda F, f, x, v, cg: F.vjp(f, x, v, create_graph=cg), True, False),
    "jvp": (lambda F, f, x, v, cg: F.jvp(f, x, v, create_graph=cg), True, False),
    "jvp(v=None)": (lambda F, f, x, v, cg: F.jvp(f, x[:1], create_graph=cg), False, False),
    "hvp": (lambda F, f, x, v, cg: F.hvp(f, x, v, create_graph=cg), True, True),
    "vhp": (lambda F, f, x, v, cg: F.vhp(f, x, v, create_graph=cg), True, True),
    "jacobian": (lambda F, f, x, v, cg: F.jacobian(f, x, create_graph=cg), False, False),
    "jacobian(forward)": (lambda F, f, x, v, cg: F.jacobian(f, x, create_graph=cg, vectorize=True,
                                                            strategy="forward-mode") if not cg else
                          F.jacobian(f, x, create_graph=cg), False, False),
    "hessian": (lambda F, f, x, v, cg: F.hessian(f, x, create_graph=cg), False, True),
    # (the forward-mode outer Jacobian's blocks: under no_grad PyTorch's are views of its recorded tangents made
    # under no_grad, requiring grad without a grad_fn)
    "hessian(forward)": (lambda F, f, x, v, cg: F.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
                         if not cg else F.hessian(f, x, create_graph=cg), False, True),
}


def _leaves(out):
    return [out] if not isinstance(out, (tuple, list)) else [t for o in out for t in _leaves(o)]


def _run(m, call, func, create_graph, x_grad, v_grad, grad_mode):
    make, _, scalar = CALLS[call]
    x = m.tensor([0.5, -1.25, 2.0], dtype=m.float64, requires_grad=x_grad)
    v = m.tensor([1.5, 0.25, -2.0], dtype=m.float64, requires_grad=v_grad)
    f = (lambda a: FUNCS[func](m, a).sum()) if scalar else (lambda a: FUNCS[func](m, a))
    if call == "jvp(v=None)":
        f = lambda a: FUNCS[func](m, a) * 2  # noqa: E731 - (one element in, one out: v may be left out)
    with m.set_grad_enabled(grad_mode):
        try:
            out = make(m.autograd.functional, f, x, v, create_graph)
        except RuntimeError as err:
            return f"RuntimeError: {err}"
    return [(t.requires_grad, t.grad_fn is None, t is v, t is x, np.round(np.asarray(t.detach().tolist()), 12).tolist())
            for t in _leaves(out)]


# PyTorch's forward-mode Jacobian of a function linear in x is a function of x all the same (its mul's tangent
# formula adds the number's zero tangent times x), so it requires grad where x does under grad mode; ember's is
# computed without x and has no history
_LINEAR_FORWARD = pytest.mark.xfail(strict=True, reason="PyTorch's forward-mode Jacobian of x * 3 has a history "
                                    "through x (a zero term); ember's none (docs/api.md, Differences: Autograd)")


def _case(c, f, cg, xg, vg, gm):
    linear_forward = c == "jacobian(forward)" and f == "linear" and not cg and xg and gm
    return pytest.param(c, f, cg, xg, vg, gm, marks=[_LINEAR_FORWARD] if linear_forward else [])


CASES = [_case(c, f, cg, xg, vg, gm) for c in CALLS for f in FUNCS
         for cg, xg, vg, gm in itertools.product([False, True], repeat=4) if CALLS[c][1] or not vg]


@pytest.mark.parametrize(("call", "func", "create_graph", "x_grad", "v_grad", "grad_mode"), CASES)
def test_functional_results_history_as_pytorch(call, func, create_graph, x_grad, v_grad, grad_mode):
    got, want = (_run(m, call, func, create_graph, x_grad, v_grad, grad_mode) for m in (ember, torch))
    assert got == want


def _captured_weight_columns(lib, grad_mode):
    """``jacobian(..., strategy="forward-mode", vectorize=True)`` of functions that capture a weight requiring grad:
    PyTorch's blocks are the tangents as computed, so with grad enabled they keep their history back to the weight
    (whose gradient through them is checked); under no_grad, and for a block that does not depend on the weight,
    none."""
    w = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    x = lib.tensor([1.0, 2.0, -1.0])
    weights = lib.arange(6.0).reshape(2, 3)
    seen = []
    with lib.set_grad_enabled(grad_mode):
        for func in (lambda v: w @ v, lambda v: lib.tanh(w @ v), lambda v: (w @ v, v * 2)):
            jac = lib.autograd.functional.jacobian(func, x, strategy="forward-mode", vectorize=True)
            blocks = jac if isinstance(jac, (tuple, list)) else (jac,)
            seen.append([(b.requires_grad, b.grad_fn is None) for b in blocks])
            if blocks[0].requires_grad:
                grad = lib.autograd.grad((blocks[0] * weights).sum(), w)[0]
                seen.append(np.round(grad.detach().numpy(), 5).tolist())
    return seen


@pytest.mark.parametrize("grad_mode", [True, False])
def test_forward_mode_jacobian_keeps_a_captured_weights_history_as_pytorch(grad_mode):
    assert _captured_weight_columns(ember, grad_mode) == _captured_weight_columns(torch, grad_mode)
