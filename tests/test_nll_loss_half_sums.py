"""nll_loss of a bfloat16 or float16 input reduces as PyTorch's CPU kernel: the
losses summed in the half type itself, in a cascade of partial sums (each operation rounded to it), the weights of
a mean likewise, and the gradient ``-(g / total weight)`` then times the class weight, each rounded: the bits of a
reduced loss and its gradient are PyTorch's, where a float32 sum rounded once differs by an ulp or more."""

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

ROWS = [1, 3, 16, 17, 257, 300, 1000]


def _case(n: int, ignored: bool):
    g = np.random.default_rng(n)
    x = g.standard_normal((n, 5)).astype(np.float32) * 3
    t = g.integers(0, 5, n)
    if ignored:
        t[g.random(n) < 0.3] = 2
    return x, t, g.random(5).astype(np.float32) + 0.5


def _loss_and_grad(m, x, t, w, dtype, reduction, ignored, weighted):
    xi = m.tensor(x).to(getattr(m, dtype)).requires_grad_(True)
    keywords = {"reduction": reduction, "ignore_index": 2 if ignored else -100}
    if weighted:
        keywords["weight"] = m.tensor(w).to(getattr(m, dtype))
    out = m.nn.functional.nll_loss(xi, m.tensor(t), **keywords)
    out.backward(m.ones_like(out) * 0.7)
    return out.dtype == getattr(m, dtype), out.detach().float().tolist(), xi.grad.float().tolist()


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ignored", [False, True], ids=["all", "ignore_index"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_losses_and_gradients_as_pytorch(dtype, reduction, ignored, weighted):
    wrong = []
    for n in ROWS:
        x, t, w = _case(n, ignored)
        want, got = (_loss_and_grad(m, x, t, w, dtype, reduction, ignored, weighted) for m in (torch, ember))
        if got != want:
            wrong.append((n, got[:2], want[:2]))
    assert wrong == []


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_one_sample_and_every_target_ignored(dtype, reduction):
    """A (C,) input (one row), and a batch whose every target is ignored (a mean of 0 / 0: NaN)."""
    results = []
    for m in (torch, ember):
        x = m.tensor([0.3, -1.7, 2.2]).to(getattr(m, dtype)).requires_grad_(True)
        one = m.nn.functional.nll_loss(x, m.tensor(1), reduction=reduction)
        one.backward()
        xs = m.tensor([[0.3, -1.7], [2.2, 0.1]]).to(getattr(m, dtype))
        none = m.nn.functional.nll_loss(xs, m.tensor([1, 1]), ignore_index=1, reduction=reduction)
        results.append((one.float().item(), x.grad.float().tolist(), str(none.float().item())))
    assert results[1] == results[0]


def test_the_example_that_differed():
    """bfloat16, 300 rows, mean: PyTorch's -0.14844 (a float32 sum rounded once gives -0.14746)."""
    g = np.random.default_rng(0)
    x, t = g.standard_normal((300, 4)).astype(np.float32), g.integers(0, 4, 300)
    got, want = (m.nn.functional.nll_loss(m.tensor(x).to(m.bfloat16), m.tensor(t)).float().item()
                 for m in (ember, torch))
    assert got == want


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_spatial_scores_as_pytorch(dtype, reduction, weighted):
    """(N, C, H, W) scores (PyTorch's nll_loss2d kernel) reduce in the same cascade."""
    results = []
    for m in (torch, ember):
        g = np.random.default_rng(1)
        x = m.tensor(g.standard_normal((4, 3, 20, 20)).astype(np.float32) * 3).to(getattr(m, dtype))
        x.requires_grad_(True)
        t = m.tensor(g.integers(0, 3, (4, 20, 20)))
        weight = m.tensor(g.random(3).astype(np.float32) + 0.5).to(getattr(m, dtype)) if weighted else None
        out = m.nn.functional.nll_loss(x, t, weight=weight, reduction=reduction)
        out.backward()
        results.append((out.float().item(), x.grad.float().tolist()))
    assert results[1] == results[0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_saved_total_weight_as_pytorch(dtype, reduction):
    """The node's ``_saved_total_weight``: the weights summed by the kernel's cascade, in the half type."""
    results = []
    for m in (torch, ember):
        g = np.random.default_rng(3)
        x = m.tensor(g.standard_normal((300, 5)).astype(np.float32)).to(getattr(m, dtype)).requires_grad_(True)
        weight = m.tensor(g.random(5).astype(np.float32) + 0.5).to(getattr(m, dtype))
        out = m.nn.functional.nll_loss(x, m.tensor(g.integers(0, 5, 300)), weight=weight, reduction=reduction)
        total = out.grad_fn._saved_total_weight
        results.append((str(total.dtype).split(".")[1], total.float().item()))
    assert results[1] == results[0]


def _ignored_patterns(n: int, rng):
    """None ignored, some at random, every flush index of level 0 (multiples of 16: one run through the level), of
    level 1 (multiples of 256) and some of level 2, and all but the flush indices."""
    rows = np.arange(n)
    return [np.zeros(n, bool), rng.random(n) < 0.2, rows % 16 == 0, rows % 256 == 0,
            (rows % 4096 == 0) | (rows % 112 == 0), rows % 16 != 0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_cascade_a_level_at_a_time_is_the_loops(dtype, monkeypatch):
    """The cascade summed a level at a time (groups between flushes at once, long runs a value at a time) gives
    the row-at-a-time loop's bits: losses (subtracted) and weights (added), with NaN, +-inf, overflow and -0."""
    from ember.nn._ops import classification as C

    monkeypatch.setattr(C, "_CASCADE_LOOP_ROWS", 0)  # (the levels for every size here, the loop's sizes too)

    half = np.dtype(np.float16) if dtype == "float16" else np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(7)
    for n in (256, 257, 4097, 70000):
        for ignored in _ignored_patterns(n, rng):
            for special in ("plain", "nonfinite", "overflow"):
                v = rng.standard_normal(n).astype(np.float32)
                if special == "nonfinite":
                    v[rng.random(n) < 0.01], v[rng.random(n) < 0.01], v[rng.random(n) < 0.01] = np.nan, np.inf, -np.inf
                    v[rng.random(n) < 0.05] = -0.0
                if special == "overflow":
                    v *= 3e4
                with np.errstate(all="ignore"):
                    values = v.astype(half)
                kept = np.flatnonzero(~ignored)
                for negated in (True, False):
                    with np.errstate(all="ignore"):
                        got = C._cascade_levels(values[kept], kept, negated, half)
                        expected = C._half_cascade_loop(values[kept], kept, negated, half)
                    assert np.asarray(got).view(np.uint16) == np.asarray(expected).view(np.uint16), (n, special)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_large_batches_as_pytorch(dtype):
    """Batches past the loop's size (levels 0 to 2 flushed), with rows ignored at flush indices: PyTorch's bits."""
    rng = np.random.default_rng(8)
    for n in (700, 5000, 70000):
        x = rng.standard_normal((n, 4)).astype(np.float32) * 3
        t = rng.integers(0, 4, n)
        t[::256] = 1
        for weighted in (False, True):
            for ignored in (False, True):
                got = _loss_and_grad(ember, x, t, x[0] + 2, dtype, "mean", ignored, weighted)
                expected = _loss_and_grad(torch, x, t, x[0] + 2, dtype, "mean", ignored, weighted)
                assert got[1] == expected[1] and got[0] and expected[0], (n, weighted, ignored)
