"""Losses on operands of two dtypes, against PyTorch: the result's dtype (the operands' promoted type for the
regression losses and kl_div, a 0-d target promoting fully where PyTorch broadcasts first; the input's for huber;
the target's for binary_cross_entropy_with_logits; weights never promote), the value, each operand's gradient
(cast back to its own dtype), the graph node's name, and PyTorch's errors for dtypes it refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
P, T01 = RNG.uniform(0.1, 0.9, (4, 3)), RNG.uniform(0, 1, (4, 3))

LOSSES = {
    "mse": (lambda F, m, x, y: F.mse_loss(x, y), A, B),
    "mse none": (lambda F, m, x, y: F.mse_loss(x, y, reduction="none"), A, B),
    "l1": (lambda F, m, x, y: F.l1_loss(x, y), A, B),
    "l1 sum": (lambda F, m, x, y: F.l1_loss(x, y, reduction="sum"), A, B),
    "smooth_l1": (lambda F, m, x, y: F.smooth_l1_loss(x, y, beta=0.5), A, B),
    "smooth_l1 beta 0": (lambda F, m, x, y: F.smooth_l1_loss(x, y, beta=0.0), A, B),
    "huber": (lambda F, m, x, y: F.huber_loss(x, y), A, B),
    "bce_with_logits": (lambda F, m, x, y: F.binary_cross_entropy_with_logits(x, y), A, T01),
    "bce_with_logits weights": (lambda F, m, x, y: F.binary_cross_entropy_with_logits(
        x, y, weight=m.full((3,), 0.5, dtype=m.float64), pos_weight=m.full((3,), 2.0, dtype=m.float64)), A, T01),
    "kl_div": (lambda F, m, x, y: F.kl_div(x, y, reduction="batchmean"), A, P),
    "kl_div log_target": (lambda F, m, x, y: F.kl_div(x, y, reduction="sum", log_target=True), A, B),
    "poisson_nll": (lambda F, m, x, y: F.poisson_nll_loss(x, y), A, np.abs(B)),
    "cross_entropy probabilities": (lambda F, m, x, y: F.cross_entropy(x, y), A, P),
}
PAIRS = [("float32", "float64"), ("float64", "float32"), ("float16", "float32"), ("float32", "float16"),
         ("bfloat16", "float32"), ("float32", "int64")]


def _run(m, loss, dx, dy, target_grad):
    fn, xa, ya = LOSSES[loss]
    x = m.tensor(xa, dtype=getattr(m, dx), requires_grad=True)
    y = m.tensor(ya, dtype=getattr(m, dy), requires_grad=target_grad and dy != "int64")
    try:
        out = fn(m.nn.functional, m, x, y)
        out.sum().backward()
    except RuntimeError as err:
        return "RuntimeError", str(err).split(" but ")[0].split(" (")[0]
    name = out.grad_fn.name()
    grads = [None if t.grad is None else (str(t.grad.dtype).split(".")[1], t.grad.double().numpy()) for t in (x, y)]
    return str(out.dtype).split(".")[1], out.double().detach().numpy(), name, grads


@pytest.mark.parametrize("target_grad", [False, True])
@pytest.mark.parametrize("dx,dy", PAIRS)
@pytest.mark.parametrize("loss", list(LOSSES))
def test_loss_dtypes_as_pytorch(loss, dx, dy, target_grad):
    theirs = _run(torch, loss, dx, dy, target_grad)
    ours = _run(ember, loss, dx, dy, target_grad)
    if theirs[0] == "RuntimeError":
        assert ours == theirs
        return
    low = "float16" in (dx, dy) or "bfloat16" in (dx, dy)
    tol = dict(rtol=2e-2, atol=2e-2) if low else dict(rtol=1e-5, atol=1e-6)
    assert ours[0] == theirs[0]  # the result's dtype
    np.testing.assert_allclose(ours[1], theirs[1], **tol)
    if not loss.startswith(("kl_div", "poisson", "cross_entropy")):  # (composites in PyTorch: other node names)
        assert ours[2] == theirs[2]
    for g_ours, g_theirs in zip(ours[3], theirs[3]):
        assert (g_ours is None) == (g_theirs is None)
        if g_ours is not None:
            assert g_ours[0] == g_theirs[0]  # each gradient in its operand's dtype
            np.testing.assert_allclose(g_ours[1], g_theirs[1], **tol)


@pytest.mark.parametrize("case", ["mse 0-d", "l1 0-d"])
def test_regression_loss_with_a_0d_target_promotes_fully(case):
    """PyTorch broadcasts a regression loss's operands first: a float64 0-d target makes the loss float64."""
    results = []
    for m in (torch, ember):
        x = m.tensor(A, dtype=m.float32, requires_grad=True)
        y = m.tensor(0.5, dtype=m.float64)
        with pytest.warns(UserWarning, match="different to the input size"):
            out = getattr(m.nn.functional, case.split()[0] + "_loss")(x, y)
        out.backward()
        results.append((str(out.dtype).split(".")[1], str(x.grad.dtype).split(".")[1], round(out.item(), 5)))
    assert results[0] == results[1]


def _refused(m, case):
    F = m.nn.functional
    f32 = m.tensor(A, dtype=m.float32)
    ints = m.ones(4, 3, dtype=m.int64)
    c64 = m.ones(4, 3, dtype=m.complex64)
    classes, weight = m.tensor([0, 1, 2, 0]), m.ones(3, dtype=m.float64)
    return {
        "mse int int": lambda: F.mse_loss(ints, ints),
        "mse complex": lambda: F.mse_loss(f32, c64),
        "smooth_l1 complex": lambda: F.smooth_l1_loss(f32, c64),
        "huber int input": lambda: F.huber_loss(ints, f32),
        "huber complex target": lambda: F.huber_loss(f32, c64),
        "bce_with_logits int input": lambda: F.binary_cross_entropy_with_logits(ints, f32),
        "kl_div complex": lambda: F.kl_div(f32, c64, reduction="sum"),
        "nll_loss float64 weight": lambda: F.nll_loss(f32, classes, weight=weight),
        "cross_entropy float64 weight": lambda: F.cross_entropy(f32, classes, weight=weight),
        "l1 bool": lambda: F.l1_loss(f32, m.ones(4, 3, dtype=m.bool)),
    }[case]


@pytest.mark.parametrize("case", ["mse int int", "mse complex", "smooth_l1 complex", "huber int input",
                                  "huber complex target", "bce_with_logits int input", "kl_div complex",
                                  "nll_loss float64 weight", "cross_entropy float64 weight", "l1 bool"])
def test_loss_dtype_errors_as_pytorch(case):
    outcomes = []
    for m in (torch, ember):
        with pytest.raises((RuntimeError, NotImplementedError)) as err:
            _refused(m, case)()
        outcomes.append((err.type, str(err.value).replace("torch", "ember")[:40]))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", ["bce", "bce weight", "logits", "logits weight", "logits pos_weight"])
def test_bfloat16_binary_cross_entropy_bit_for_bit(case, reduction):
    """PyTorch's bfloat16 kernels round each step to bfloat16 (log_sigmoid and sigmoid once, from float32): the
    losses and the input's gradient are PyTorch's bit for bit, for every reduction."""
    rng = np.random.default_rng(1)
    p, y = rng.uniform(0.001, 0.999, 200), rng.uniform(0, 1, 200)
    logits, w = rng.standard_normal(200) * 6, rng.uniform(0, 2, 200)
    seen = []
    for m in (ember, torch):
        x = m.tensor(p if case.startswith("bce") else logits, dtype=m.bfloat16, requires_grad=True)
        t = m.tensor(y, dtype=m.bfloat16)
        kw = {k: m.tensor(w, dtype=m.bfloat16) for k in ("weight", "pos_weight") if k in case}
        fn = m.nn.functional.binary_cross_entropy if case.startswith("bce") else \
            m.nn.functional.binary_cross_entropy_with_logits
        out = fn(x, t, reduction=reduction, **kw)
        out.sum().backward()
        seen.append((out.detach().float().numpy(), x.grad.float().numpy()))
    for got, want in zip(*seen):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", ["bce", "bce weight", "logits", "logits weight", "logits pos_weight"])
def test_half_binary_cross_entropy_gradients_in_pytorchs_order(case, reduction, dtype):
    """Under an upstream gradient g other than 1, PyTorch's half precision gradients are g (x - t) / max((1 - x) x,
    eps) (g times the kernel's numerator, not its quotient), the target's -logit(x) g, and for the logits d g, each
    then times the weight and divided for the mean, every step rounded: ember's are the same bits (the inputs from
    float64 arrays, which PyTorch converts through float32)."""
    rng = np.random.default_rng(3)
    p, y = rng.uniform(0.001, 0.999, 2000), rng.uniform(0, 1, 2000)
    logits, w, g = rng.standard_normal(2000) * 6, rng.uniform(0, 2, 2000), rng.uniform(0.1, 3, 2000)
    seen = []
    for m in (ember, torch):
        dt = getattr(m, dtype)
        x = m.tensor(p if case.startswith("bce") else logits, dtype=dt, requires_grad=True)
        t = m.tensor(y, dtype=dt, requires_grad=True)
        kw = {k: m.tensor(w, dtype=dt) for k in ("weight", "pos_weight") if k in case}
        fn = m.nn.functional.binary_cross_entropy if case.startswith("bce") else \
            m.nn.functional.binary_cross_entropy_with_logits
        out = fn(x, t, reduction=reduction, **kw)
        out.backward(m.tensor(g if reduction == "none" else g[0], dtype=dt))
        seen.append([a.detach().float().numpy() for a in (out, x.grad, t.grad)])
    for got, want in zip(*seen):
        np.testing.assert_array_equal(got, want)
