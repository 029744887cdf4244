"""CTCLoss / F.ctc_loss against PyTorch: losses and log_probs gradients for every reduction, padded and concatenated
targets, different input and target lengths (empty targets, repeated labels, impossible alignments with and
without zero_infinity), float32 and float64, unbatched input, and the errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
import ember.nn as nn

TOL = {np.float32: dict(atol=1e-5, rtol=1e-4), np.float64: dict(atol=1e-10, rtol=1e-10)}


def compare(dtype, t, c, targets, in_len, tgt_len, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    n = len(in_len)
    logits = rng.standard_normal((t, n, c) if n else (t, c)).astype(dtype)
    results = []
    for m in (ember, torch):
        x = m.tensor(logits, requires_grad=True)
        lp = x.log_softmax(-1)
        lp.retain_grad()
        loss = m.nn.functional.ctc_loss(lp, m.tensor(targets), m.tensor(in_len), m.tensor(tgt_len), **kwargs)
        up = np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)).astype(dtype)
        loss.backward(m.tensor(up))
        results.append((loss, lp.grad, x.grad))
    for name, a, b in zip(("loss", "log_probs grad", "logits grad"), *results):
        assert_close(a, b, msg=name, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_padded_targets(dtype, reduction):
    targets = np.array([[1, 2, 2, 3], [3, 1, 0, 0], [2, 2, 2, 0], [4, 0, 0, 0]])
    compare(dtype, 12, 5, targets, [12, 9, 10, 3], [4, 2, 3, 0], reduction=reduction)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_concatenated_targets_and_blank(dtype):
    targets = np.array([1, 2, 1, 3, 3, 0, 1])  # blank=4 here: 0 is an ordinary class
    compare(dtype, 9, 5, targets, [9, 7, 8], [3, 2, 2], blank=4, reduction="none")


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(zero_infinity):
    """Target longer than the input (with repeats needing blanks between them): infinite loss."""
    targets = np.array([[1, 1, 1], [2, 3, 0]])
    if zero_infinity:
        compare(np.float64, 4, 4, targets, [3, 4], [3, 2], reduction="sum", zero_infinity=True)
    else:
        compare(np.float64, 4, 4, np.array([[1, 2, 0], [2, 3, 0]]), [4, 4], [2, 2], reduction="none")
        out = nn.functional.ctc_loss(ember.randn(4, 2, 4).log_softmax(2), ember.tensor(targets), [3, 4], [3, 2],
                                     reduction="none")
        assert np.isinf(out.numpy()[0]) and np.isfinite(out.numpy()[1])


def test_unbatched_and_module():
    compare(np.float64, 7, 4, np.array([1, 3, 3]), [7], [3], reduction="mean")
    lp = ember.randn(6, 2, 4).log_softmax(2)
    tl = torch.tensor(lp.numpy())
    args = ([[1, 2], [3, 3]], [6, 5], [2, 2])
    em, tm = nn.CTCLoss(blank=0, reduction="sum"), torch.nn.CTCLoss(blank=0, reduction="sum")
    assert_close(em(lp, ember.tensor(args[0]), *args[1:]), tm(tl, torch.tensor(args[0]), *args[1:]))
    assert repr(em) == repr(tm)


def test_errors():
    lp, tg = ember.randn(5, 2, 4).log_softmax(2), ember.tensor([[1, 2], [1, 1]])
    F = nn.functional
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5, but got value 6"):
        F.ctc_loss(lp, tg, [5, 6], [2, 2])
    with pytest.raises(RuntimeError, match="size at least 3 at dimension 1"):
        F.ctc_loss(lp, tg, [5, 5], [2, 3])
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction="bad")
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size 4 at dimension 0"):
        F.ctc_loss(lp, ember.tensor([1, 2, 1]), [5, 5], [2, 2])
