"""clamp with tensor bounds records PyTorch's one ClampBackward0 node (an edge per bound, None for an absent one;
clamp_min's and clamp_max's ClampMinBackward1/ClampMaxBackward1, their number forms ClampMinBackward0/...), with
PyTorch's gradients at ties, at bounds that cross (min > max) and at NaN."""

import numpy as np
import pytest
import torch

import ember

NAN = float("nan")
X = [-2.0, 0.0, 1.0, 2.0, 3.0, 5.0, NAN, 1.5]
LO = [-1.0, 0.0, 1.0, 1.0, 4.0, 1.0, 0.0, NAN]
HI = [1.0, 0.0, 2.0, 2.0, 3.0, 6.0, 1.0, 2.0]


def structure(t):
    fn = t.grad_fn
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


CASES = {
    "both": lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
    "min": lambda lib, x, lo, hi: lib.clamp(x, min=lo),
    "max": lambda lib, x, lo, hi: x.clamp(max=hi),
    "clip": lambda lib, x, lo, hi: lib.clip(x, lo, hi),
    "clamp_min": lambda lib, x, lo, hi: lib.clamp_min(x, lo),
    "clamp_max": lambda lib, x, lo, hi: x.clamp_max(hi),
    "clamp_min_number": lambda lib, x, lo, hi: lib.clamp_min(x, 1.0),
    "clamp_max_number": lambda lib, x, lo, hi: x.clamp_max(1.0),
    "broadcast": lambda lib, x, lo, hi: lib.clamp(x, lo[:1], hi[-1:]),
    "inplace": lambda lib, x, lo, hi: (x * 1).clamp_(lo, hi) if x.requires_grad else None,
}


@pytest.mark.parametrize("requires", ["x", "bounds", "all"])
@pytest.mark.parametrize("case", CASES)
def test_clamp_tensor_bounds(case, requires):
    out = []
    for lib in (torch, ember):
        x, lo, hi = (lib.tensor(v, dtype=lib.float64) for v in (X, LO, HI))
        for t, who in ((x, "x"), (lo, "bounds"), (hi, "bounds")):
            t.requires_grad_(requires in (who, "all"))
        y = CASES[case](lib, x, lo, hi)
        if y is None or not y.requires_grad:
            out.append(None)
            continue
        w = lib.arange(1, y.numel() + 1, dtype=lib.float64).reshape(y.shape)
        y.backward(w)
        out.append((structure(y), y.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in (x, lo, hi)]))
    if out[0] is None:
        assert out[1] is None
        return
    (ts, ty, tg), (es, ey, eg) = out
    assert es == ts if case != "broadcast" else es[0] == ts[0]  # (a slice's node: ember's own name)
    np.testing.assert_array_equal(ey, ty)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_array_equal(e, t)


def test_clamp_bound_of_another_dtype():
    out = []
    for lib in (torch, ember):
        x = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        lo = lib.tensor([1.0, 0.0, 0.0], dtype=lib.float64, requires_grad=True)
        hi = lib.tensor(1.5, requires_grad=True)
        y = lib.clamp(x, lo, hi)
        y.sum().backward()
        out.append((structure(y), str(y.dtype)[6:], str(lo.grad.dtype)[6:], x.grad.tolist(), lo.grad.tolist(),
                    hi.grad.tolist()))
    assert out[1] == out[0]


def test_clamp_tensor_bounds_second_order():
    out = []
    for lib in (torch, ember):
        x = lib.tensor([0.5, 2.0, -1.0], dtype=lib.float64, requires_grad=True)
        lo = lib.tensor([1.0, 0.0, 0.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((lib.clamp(x, min=lo) ** 2).sum(), lo, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), lo)
        out.append((g.tolist(), gg.tolist()))
    assert out[1] == out[0]


@pytest.mark.parametrize("x_grad", [False, True])
@pytest.mark.parametrize("bounds", ["both", "min", "max", "min only requires grad"])
def test_clamp_in_place_with_bounds_that_require_grad_is_recorded_as_pytorchs(x_grad, bounds):
    # (a tensor that does not require grad clamped in place by bounds that do: PyTorch records ClampBackward0 and the
    # bounds get their gradients; ember recorded nothing and backward found no graph)
    seen = []
    for m in (ember, torch):
        leaf = m.tensor([-2.0, 0.5, 3.0, 1.5], requires_grad=x_grad)
        lo = m.tensor([-1.0, 1.0, 0.0, 1.5], requires_grad=True)
        hi = m.tensor([2.0, 2.0, 2.0, 1.5], requires_grad=bounds != "min only requires grad")
        x = leaf * 1 if x_grad else leaf.clone()
        kwargs = {"both": {"min": lo, "max": hi}, "min": {"min": lo}, "max": {"max": hi},
                  "min only requires grad": {"min": lo, "max": hi}}[bounds]
        out = x.clamp_(**kwargs)
        (out * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        seen.append((out is x, x._version, type(out.grad_fn).__name__, out.detach().tolist(),
                     None if lo.grad is None else lo.grad.tolist(),
                     None if hi.grad is None else hi.grad.tolist(),
                     leaf.grad.tolist() if x_grad else None))
    assert seen[0] == seen[1]


def test_clamp_in_place_under_no_grad_records_nothing():
    lo = ember.tensor([0.0, 0.0], requires_grad=True)
    with ember.no_grad():
        out = ember.tensor([-1.0, 2.0]).clamp_(min=lo)
    assert out.grad_fn is None and not out.requires_grad and out.tolist() == [0.0, 2.0]


@pytest.mark.parametrize("case", ["both", "min", "max", "clip", "clamp_min", "clamp_max"])
def test_clamp_tensor_bounds_forward_ad_is_pytorchs_formula(case):
    # PyTorch's forward AD of these is its own formula (clamp_jvp; clamp_min's where(x >= min, x_t, min_t)), not
    # the backward transposed: at a tie clamp(min=) takes the bound's tangent and clamp_min x's; a NaN x passes
    # its own tangent between two bounds and a one-sided bound's otherwise
    seen = []
    for lib in (torch, ember):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x, lo, hi = (fa.make_dual(lib.tensor(v), lib.full((len(X),), t))
                         for v, t in ((X, 1.0), (LO, 10.0), (HI, 100.0)))
            seen.append(fa.unpack_dual(CASES[case](lib, x, lo, hi)).tangent.numpy())
    np.testing.assert_array_equal(seen[1], seen[0])
