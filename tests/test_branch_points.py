"""Ops evaluated exactly at their branch points, against PyTorch: the value, the gradient, the gradient of the
gradient (create_graph) and the forward-mode tangent where an op's formula switches (relu at 0, hardtanh at its
limits, smooth_l1 at ``beta``, a margin loss at its margin, a p-norm at p = 2, a tie between maxima ...), and on
either side of it.

A comparison written ``<`` where ``<=`` is meant (or the reverse), a limit taken from the wrong argument or a
branch that keeps the wrong side at equality leaves every value off the branch point right, so tests at random
points pass; PyTorch's convention at the point itself (relu's gradient 0 at 0, clamp's 1 at its bounds,
hardtanh's 0 at its limits, a tie's gradient split or given to the first) is what each case pins. The points are
exactly representable in bfloat16, so that each precision evaluates the same branch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

# points around 0 and the usual limits (±0.5, ±1, 3, 6): each case picks the ones at its branch points
P = [-7.0, -6.0, -4.0, -3.0, -2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0]


def _F(m):
    return m.nn.functional


def _t(m, values, like):
    return m.tensor(values, dtype=like.dtype)


# name -> (fn(module, x) of the 1-D tensor x of points, points): every case is elementwise in x or reduces it
CASES = {
    # activations: PyTorch's gradient at each kink
    "relu": (lambda m, x: _F(m).relu(x), P),
    "relu6": (lambda m, x: _F(m).relu6(x), P),
    "leaky_relu": (lambda m, x: _F(m).leaky_relu(x, 0.25), P),
    "leaky_relu negative slope": (lambda m, x: _F(m).leaky_relu(x, -0.5), P),
    "elu": (lambda m, x: _F(m).elu(x, 1.5), P),
    "celu": (lambda m, x: _F(m).celu(x, 0.5), P),
    "selu": (lambda m, x: _F(m).selu(x), P),
    "hardtanh": (lambda m, x: _F(m).hardtanh(x), P),
    "hardtanh limits": (lambda m, x: _F(m).hardtanh(x, -0.5, 2.0), P),
    "hardtanh equal limits": (lambda m, x: _F(m).hardtanh(x, 0.5, 0.5), P),
    "softplus threshold": (lambda m, x: _F(m).softplus(x, beta=2.0, threshold=1.0), P),
    "softplus negative beta": (lambda m, x: _F(m).softplus(x, beta=-2.0, threshold=1.0), P),
    "hardsigmoid": (lambda m, x: _F(m).hardsigmoid(x), P),
    "hardswish": (lambda m, x: _F(m).hardswish(x), P),
    "hardshrink": (lambda m, x: _F(m).hardshrink(x, 0.5), P),
    "softshrink": (lambda m, x: _F(m).softshrink(x, 0.5), P),
    "threshold": (lambda m, x: _F(m).threshold(x, 0.5, -2.0), P),
    "threshold at its value": (lambda m, x: _F(m).threshold(x, 0.5, 0.5), P),
    "rrelu eval": (lambda m, x: _F(m).rrelu(x, 0.125, 0.375, training=False), P),
    "prelu": (lambda m, x: _F(m).prelu(x, _t(m, [0.25], x)), P),
    "logsigmoid": (lambda m, x: _F(m).logsigmoid(x), P),
    "mish": (lambda m, x: _F(m).mish(x), P),
    "silu": (lambda m, x: _F(m).silu(x), P),
    "gelu": (lambda m, x: _F(m).gelu(x), P),
    "gelu tanh": (lambda m, x: _F(m).gelu(x, approximate="tanh"), P),
    "softsign": (lambda m, x: _F(m).softsign(x), P),
    "tanhshrink": (lambda m, x: _F(m).tanhshrink(x), P),
    # pointwise ops with a kink or a limit
    "abs": (lambda m, x: m.abs(x), P),
    "sgn": (lambda m, x: m.sgn(x), P),
    "sign": (lambda m, x: m.sign(x), P),
    "clamp": (lambda m, x: m.clamp(x, -0.5, 2.0), P),
    "clamp min": (lambda m, x: m.clamp(x, min=0.5), P),
    "clamp max": (lambda m, x: m.clamp(x, max=0.5), P),
    "clamp min above max": (lambda m, x: m.clamp(x, 1.0, -1.0), P),
    "clamp tensor limits": (lambda m, x: m.clamp(x, _t(m, [-0.5] * len(P), x), _t(m, [2.0] * len(P), x)), P),
    "clamp_min": (lambda m, x: m.clamp_min(x, 0.5), P),
    "clamp_max": (lambda m, x: m.clamp_max(x, 0.5), P),
    "maximum ties": (lambda m, x: m.maximum(x, _t(m, [0.5] * len(P), x)), P),
    "minimum ties": (lambda m, x: m.minimum(x, _t(m, [0.5] * len(P), x)), P),
    "fmax ties": (lambda m, x: m.fmax(x, _t(m, [0.5] * len(P), x)), P),
    "fmin ties": (lambda m, x: m.fmin(x, _t(m, [0.5] * len(P), x)), P),
    "maximum of itself": (lambda m, x: m.maximum(x, x), P),
    "pow 2 at 0": (lambda m, x: x ** 2, P),
    "pow 0 at 0": (lambda m, x: x ** 0, P),
    "pow 1 at 0": (lambda m, x: x ** 1, P),
    "pow 3 at 0": (lambda m, x: x ** 3, P),
    "pow 0.5 at 0": (lambda m, x: m.abs(x) ** 0.5, P),
    "sqrt at 0": (lambda m, x: m.sqrt(m.abs(x)), [0.0, 0.25, 1.0]),
    "floor": (lambda m, x: m.floor(x * 0.5), P),
    "round half": (lambda m, x: m.round(x + 0.5), P),
    "where at 0": (lambda m, x: m.where(x > 0, x * 2.0, x * 3.0), P),
    # reductions with ties: PyTorch's full max splits the gradient evenly, the dim form gives it to one index
    "max ties": (lambda m, x: m.max(m.clamp(x, max=1.0)), P),
    "min ties": (lambda m, x: m.min(m.clamp(x, min=-1.0)), P),
    "amax ties": (lambda m, x: m.amax(m.clamp(x, max=1.0).reshape(3, 6), dim=1), P),
    "amin ties": (lambda m, x: m.amin(m.clamp(x, min=-1.0).reshape(3, 6), dim=0), P),
    "max dim ties": (lambda m, x: m.max(m.clamp(x, max=1.0).reshape(3, 6), dim=1)[0], P),
    "min dim ties": (lambda m, x: m.min(m.clamp(x, min=-1.0).reshape(3, 6), dim=0)[0], P),
    "median ties": (lambda m, x: m.median(m.clamp(x, -1.0, 1.0)), P),
    "cummax ties": (lambda m, x: m.cummax(m.clamp(x, -1.0, 1.0), dim=0)[0], P),
    "logsumexp of equal values": (lambda m, x: m.logsumexp(x * 0.0 + 1.0, dim=0), P),
    # vector norms at the exponents where their formulas switch, with zeros among the entries
    **{f"norm p={p}": (lambda m, x, p=p: m.linalg.vector_norm(m.clamp(x, -1.0, 1.0), ord=p), P)
       for p in (0.5, 1.0, 1.5, 2.0, 3.0, float("inf"), -float("inf"))},
    **{f"norm p={p} dim": (lambda m, x, p=p: m.linalg.vector_norm(m.clamp(x, -1.0, 1.0).reshape(3, 6), ord=p,
                                                                   dim=1), P)
       for p in (1.0, 1.5, 2.0, 3.0, float("inf"))},
    "norm p=2 of zeros": (lambda m, x: m.linalg.vector_norm(x * 0.0), P),
    # losses at their switching differences (target 0 unless said)
    **{f"smooth_l1 beta={b} {r}": (lambda m, x, b=b, r=r: _F(m).smooth_l1_loss(x, x.detach() * 0.0, beta=b,
                                                                                reduction=r), P)
       for b in (0.5, 1.0, 0.0) for r in ("none", "mean")},
    **{f"huber delta={d} {r}": (lambda m, x, d=d, r=r: _F(m).huber_loss(x, x.detach() * 0.0, delta=d, reduction=r), P)
       for d in (0.5, 1.0, 2.0) for r in ("none", "sum")},
    "l1 at 0": (lambda m, x: _F(m).l1_loss(x, x.detach() * 0.0 + 0.5, reduction="none"), P),
    "hinge_embedding -1": (lambda m, x: _F(m).hinge_embedding_loss(x, _t(m, [-1.0] * len(P), x), margin=0.5,
                                                                  reduction="none"), P),
    "hinge_embedding mixed": (lambda m, x: _F(m).hinge_embedding_loss(
        x, _t(m, [1.0, -1.0] * (len(P) // 2), x), margin=1.0), P),
    "margin_ranking": (lambda m, x: _F(m).margin_ranking_loss(x, x.detach() * 0.0, _t(m, [1.0] * len(P), x),
                                                              margin=0.25, reduction="none"), P),
    "margin_ranking -1": (lambda m, x: _F(m).margin_ranking_loss(x, x.detach() * 0.0, _t(m, [-1.0] * len(P), x),
                                                                 margin=0.5, reduction="none"), P),
    **{f"multi_margin p={p} margin={mg}": (lambda m, x, p=p, mg=mg: _F(m).multi_margin_loss(
        m.clamp(x, -1.0, 1.0).reshape(6, 3), m.tensor([1, 0, 2, 1, 0, 2]), p=p, margin=mg, reduction="none"), P)
       for p in (1, 2) for mg in (1.0, 0.5)},
    "multilabel_margin": (lambda m, x: _F(m).multilabel_margin_loss(
        m.clamp(x, -1.0, 1.0).reshape(6, 3), m.tensor([[1, -1, 0]] * 6), reduction="none"), P),
    "soft_margin": (lambda m, x: _F(m).soft_margin_loss(x, _t(m, [1.0, -1.0] * (len(P) // 2), x)), P),
    "cosine_embedding orthogonal": (lambda m, x: _F(m).cosine_embedding_loss(
        m.stack([x, x.detach() * 0.0 + 1.0], 1)[8:10], m.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=x.dtype),
        _t(m, [-1.0, -1.0], x), margin=0.0, reduction="none"), P),
    "binary_cross_entropy at 0 and 1": (lambda m, x: _F(m).binary_cross_entropy(
        m.clamp(x, 0.0, 1.0), _t(m, [0.0, 1.0] * (len(P) // 2), x), reduction="none"), P),
    "bce_with_logits at 0": (lambda m, x: _F(m).binary_cross_entropy_with_logits(
        x, _t(m, [0.0, 1.0, 0.5] * (len(P) // 3), x), pos_weight=_t(m, [2.0], x), reduction="none"), P),
    "poisson_nll at 0": (lambda m, x: _F(m).poisson_nll_loss(m.clamp(x, min=0.0), _t(m, [1.0] * len(P), x),
                                                            log_input=False, reduction="none"), P),
}

# where ember differs from PyTorch at a branch point (PyTorch's backward and its double backward or forward mode
# disagree there, and ember's one formula follows the backward)
DIFFERS = {
    ("tangent", "prelu"):
        "PyTorch's forward mode takes the slope 1 at x = 0 (self >= 0), its backward the weight (self > 0); ember's "
        "tangent follows the backward (ember/nn/_ops/activation_more.py:prelu)",
    ("tangent", "fmax ties"):
        "PyTorch's forward mode gives a tie other's tangent (self > other), its backward gives self the gradient "
        "(self >= other); ember's tangent follows the backward (ember/ops/pointwise.py:fmax)",
    ("tangent", "binary_cross_entropy at 0 and 1"):
        "PyTorch's forward mode gives NaN where the input is 0 or 1 (its tangent formula divides by x (1 - x) "
        "unclamped); ember's tangent is its clamped gradient's",
}


def _known(request, kind, case):
    if (kind, case) in DIFFERS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=DIFFERS[kind, case]))


TOL = {"float64": dict(rtol=1e-8, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-6),
       "bfloat16": dict(rtol=2e-2, atol=2e-2)}


def _array(t):
    if getattr(t, "_is_zerotensor", lambda: False)():  # (PyTorch's gradient of a constant, as of sgn)
        return np.zeros(tuple(t.shape))
    return t.detach().double().numpy()


def _run(m, case, dtype, order):
    fn, points = CASES[case]
    x = m.tensor(points, dtype=getattr(m, dtype), requires_grad=True)
    y = fn(m, x)
    c = m.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
    (g,) = m.autograd.grad(y, x, c, create_graph=order == 2)
    out = [str(y.dtype).split(".")[-1], _array(y), _array(g)]
    if order == 2:
        d = m.tensor(np.linspace(-1.0, 1.0, len(points)), dtype=x.dtype)
        # a gradient that does not depend on x (piecewise-linear ops) differentiates to zeros
        h = m.autograd.grad(g, x, d, allow_unused=True)[0] if g.requires_grad else None
        out.append(np.zeros(len(points)) if h is None else _array(h))
    return out


def _torch(case, dtype, order):
    try:
        return _run(torch, case, dtype, order)
    except (NotImplementedError, RuntimeError) as err:  # (no bfloat16 kernel, no double backward in PyTorch)
        if "not implemented" in str(err):
            pytest.skip(f"PyTorch: {err}")
        raise


def _compare(ours, theirs, tol):
    assert ours[0] == theirs[0], "result dtype"
    for what, a, b in zip(("value", "gradient", "second order"), ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, **tol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("case", list(CASES))
def test_value_and_gradient_at_branch_points_are_pytorchs(case, dtype):
    theirs = _torch(case, dtype, 1)
    _compare(_run(ember, case, dtype, 1), theirs, TOL[dtype])


@pytest.mark.parametrize("case", list(CASES))
def test_second_order_at_branch_points_is_pytorchs(case, request):
    _known(request, "second order", case)
    theirs = _torch(case, "float64", 2)
    _compare(_run(ember, case, "float64", 2), theirs, TOL["float64"])


def _tangent(m, case):
    fn, points = CASES[case]
    fwad = m.autograd.forward_ad
    with fwad.dual_level():
        x = fwad.make_dual(m.tensor(points, dtype=m.float64),
                           m.tensor(np.linspace(-1.0, 2.0, len(points)), dtype=m.float64))
        t = fwad.unpack_dual(fn(m, x)).tangent
    return None if t is None else _array(t)


@pytest.mark.parametrize("case", list(CASES))
def test_forward_mode_tangent_at_branch_points_is_pytorchs(case, request):
    _known(request, "tangent", case)
    try:
        theirs = _tangent(torch, case)
    except NotImplementedError as err:  # (no forward mode for the margin losses in PyTorch)
        pytest.skip(f"PyTorch: {err}")
    ours = _tangent(ember, case)
    if theirs is None:
        assert ours is None or not np.any(ours)
    else:
        np.testing.assert_allclose(ours, theirs, **TOL["float64"], equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atan2_gradient_at_the_origin_is_pytorchs(dtype):
    """atan2 at (0, 0): PyTorch takes 1 / (x^2 + y^2) as 0 there, so both gradients are zeros (-0 for x), also
    under a zero upstream gradient (a complex max-pool gathers the phase of a few entries of relu'd zeros: the rest
    get gradient 0, which used to turn into NaN and poison every weight)."""
    grads = {}
    for m in (torch, ember):
        y = m.tensor([0.0, 0.0, -0.0, 1.0, 0.0], dtype=getattr(m, dtype), requires_grad=True)
        x = m.tensor([0.0, -0.0, 0.0, 0.0, -1.0], dtype=getattr(m, dtype), requires_grad=True)
        m.atan2(y, x).backward(m.tensor([1.0, 0.0, 2.0, 1.0, 2.0], dtype=getattr(m, dtype)))
        grads[m] = [np.asarray(t.grad.detach().numpy()) for t in (y, x)]
    for ours, theirs in zip(grads[ember], grads[torch], strict=True):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))
