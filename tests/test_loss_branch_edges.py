"""Losses at the edges of their branches and clamps, against PyTorch: the value, the first derivatives (input and
target) and the second (of the summed first), in float32 and float64.

A random input never lands on ``|x - t| == beta`` (smooth_l1's switch), on a hinge's margin, on BCE's clamped 0 and 1
or on gaussian_nll's clamped variance, so a ``<`` made ``<=`` there, or a changed epsilon, leaves every random test
passing. Each case here puts inputs exactly on those points, and beside them."""

import numpy as np
import pytest
import torch

import ember

# (loss, input, target, extra tensors, keyword options); each an input and a target that require grad where the
# loss differentiates them (PyTorch's class-label targets and the margin losses' labels do not)
EDGES = {
    "bce": ("binary_cross_entropy", [0.0, 1.0, 1e-7, 0.5, 1 - 1e-7, 0.0, 1.0, 0.25],
            [0.3, 0.3, 0.0, 1.0, 1.0, 0.0, 1.0, 0.25], {}, {}),
    # within the second derivative's epsilon (1e-12) of 0 and 1: (x + eps)^2 (1 - x + eps)^2 tells + eps from - eps
    # only there (float32 rounds 1 - 1e-12 to 1)
    "bce at its epsilon": ("binary_cross_entropy", [1e-13, 1 - 1e-12, 5e-13, 1 - 3e-12, 2e-12],
                           [0.0, 1.0, 0.5, 0.25, 1.0], {}, {}),
    "bce weight": ("binary_cross_entropy", [0.0, 1.0, 0.5, 0.75], [0.5, 0.5, 0.0, 1.0],
                   {"weight": [2.0, 0.5, 3.0, 1.5]}, {}),
    "smooth_l1": ("smooth_l1_loss", [0.0, 1.0, -1.0, 0.5, 2.0, 0.25], [0.0, 0.0, 0.0, 0.0, 1.0, 0.0], {}, {}),
    "smooth_l1 beta": ("smooth_l1_loss", [0.5, -0.5, 0.0, 0.7, 1.5], [0.0, 0.0, 0.0, 0.2, 0.0], {}, {"beta": 0.5}),
    "smooth_l1 beta 0": ("smooth_l1_loss", [0.5, 0.0, -2.0], [0.5, 1.0, 0.0], {}, {"beta": 0.0}),
    "huber": ("huber_loss", [0.0, 1.0, -1.0, 0.5, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 1.0, 1.0], {}, {}),
    "huber delta": ("huber_loss", [2.0, -2.0, 0.0, 2.5, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0], {}, {"delta": 2.0}),
    "l1": ("l1_loss", [0.0, 1.0, -1.0, 0.5], [0.0, 1.0, 0.0, 0.5], {}, {}),
    "mse": ("mse_loss", [0.0, 1.0, -1.0, 0.5], [0.0, 1.0, 0.0, 0.5], {}, {}),
    "poisson": ("poisson_nll_loss", [0.0, 1.0, 1e-9, 2.0], [0.0, 1.0, 2.0, 3.0], {}, {"log_input": False}),
    "poisson full": ("poisson_nll_loss", [0.0, 1.0, 0.5, 2.0], [0.0, 1.0, 1.0, 3.0], {}, {"full": True}),
    "poisson eps": ("poisson_nll_loss", [0.0, 1.0, 0.5], [0.0, 1.0, 2.0], {}, {"log_input": False, "eps": 0.25}),
    "gaussian": ("gaussian_nll_loss", [0.0, 1.0, 2.0, 0.5], [0.0, 0.5, 1.0, 0.5], {"var": [1e-6, 0.0, 1e-7, 2.0]},
                 {}),
    "gaussian eps full": ("gaussian_nll_loss", [0.0, 1.0, 2.0], [0.0, 0.5, 1.0], {"var": [0.1, 0.05, 1.0]},
                          {"eps": 0.1, "full": True}),
    "soft_margin": ("soft_margin_loss", [0.0, 40.0, -40.0, 1.0, 100.0], [1.0, 1.0, 1.0, -1.0, -1.0], {}, {}),
    "kl_div": ("kl_div", [-1.0, 0.0, -2.0, -0.5], [0.5, 1.0, 0.25, 0.1], {}, {"reduction": "sum"}),
    "kl_div log_target": ("kl_div", [-1.0, 0.0, -2.0], [-1.0, 0.0, -50.0], {}, {"log_target": True}),
}

# the margin losses: the label (+1/-1) or its pair takes no gradient
MARGINS = {
    "hinge": ("hinge_embedding_loss", [0.0, 1.0, 0.5, 2.0, 1.5], [1.0, -1.0, -1.0, -1.0, 1.0], {}),
    "hinge margin": ("hinge_embedding_loss", [2.0, 1.0, 3.0], [-1.0, -1.0, -1.0], {"margin": 2.0}),
    "margin_ranking": ("margin_ranking_loss", [0.0, 1.0, 0.5, -0.5], [1.0, -1.0, 1.0, -1.0], {}),
}


def _run(m, dtype, name, values, target, extra, options, target_grad):
    """[loss, first derivatives..., second derivatives...] with respect to the input, the target (where it takes a
    gradient) and gaussian_nll's variance."""
    dt = getattr(m, dtype)
    x = m.tensor(values, dtype=dt, requires_grad=True)
    t = m.tensor(target, dtype=dt, requires_grad=target_grad)
    kw = {k: m.tensor(v, dtype=dt, requires_grad=k == "var") for k, v in extra.items()}
    wrt = [x] + ([t] if target_grad else []) + [v for v in kw.values() if v.requires_grad]
    options = {"reduction": "sum", **options}
    if name == "margin_ranking_loss":  # (input1, input2, label)
        loss = m.nn.functional.margin_ranking_loss(x, m.full_like(x, 0.5), t, **options)
    elif name == "gaussian_nll_loss":
        loss = m.nn.functional.gaussian_nll_loss(x, t, kw["var"], **options)
    else:
        loss = getattr(m.nn.functional, name)(x, t, **kw, **options)
    firsts = m.autograd.grad(loss, wrt, create_graph=True)
    total = sum(f.sum() for f in firsts)
    # (a piecewise-linear loss's first derivative may hold no graph: its second is zero)
    seconds = m.autograd.grad(total, wrt, allow_unused=True) if total.requires_grad else [None] * len(wrt)
    return [loss.detach()] + [f.detach() for f in firsts] + [s if s is None else s.detach() for s in seconds]


def _compare(got, want, what):
    assert (got is None) == (want is None) or (got is None and not want.any()) or (want is None and not got.any()), \
        what
    if got is None or want is None:
        return
    # (PyTorch's zero second derivative of a piecewise-linear loss is a ZeroTensor, read with force=True)
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(force=True), rtol=1e-5, atol=1e-6,
                               err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(EDGES))
def test_loss_at_its_branch_and_clamp_edges_as_torch(case, dtype):
    name, values, target, extra, options = EDGES[case]
    target_grad = name != "soft_margin_loss"  # (PyTorch's soft_margin_loss refuses a target that requires grad)
    got = _run(ember, dtype, name, values, target, extra, options, target_grad)
    want = _run(torch, dtype, name, values, target, extra, options, target_grad)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _compare(g, w, f"{case} {dtype} entry {i} (loss, first derivatives, second derivatives)")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(MARGINS))
def test_margin_loss_at_its_margin_as_torch(case, dtype):
    name, values, target, options = MARGINS[case]
    got = _run(ember, dtype, name, values, target, {}, options, target_grad=False)
    want = _run(torch, dtype, name, values, target, {}, options, target_grad=False)
    for what, g, w in zip(("loss", "d/dx", "d2/dx"), got, want, strict=True):
        _compare(g, w, f"{case} {dtype} {what}")
