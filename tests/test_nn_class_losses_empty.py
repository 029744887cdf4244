"""cross_entropy and nll_loss with no classes (C = 0) or no rows, against PyTorch: the value (NaN where PyTorch
divides by nothing), the gradient's shape, or the same error type; and the class weights, which the
class-probability form differentiates and the class-index form refuses to, as PyTorch's kernels do."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember

# (input shape, class-index target shape)
SHAPES = [((0, 3), (0,)), ((2, 0), (2,)), ((0, 0), (0,)), ((0,), ()), ((2, 0, 3), (2, 3)), ((2, 0, 3, 4), (2, 3, 4)),
          ((0, 0, 3), (0, 3)), ((2, 3, 0), (2, 0)), ((0, 3, 2), (0, 2))]
OPTIONS = ["plain", "weight", "ignore_index", "label_smoothing", "ignore_smoothing", "probabilities",
           "probabilities_smoothing"]


def _run(m, fn, shape, target_shape, reduction, option):
    x = m.zeros(shape, dtype=m.float64, requires_grad=True)
    kw = {}
    if option.startswith("probabilities"):
        target = m.full(shape, 0.5, dtype=m.float64)
    else:
        target = m.zeros(target_shape, dtype=m.int64)
    if option == "weight":
        kw["weight"] = m.ones(shape[1] if len(shape) > 1 else shape[0], dtype=m.float64)
    if "ignore" in option:
        kw["ignore_index"] = 0
    if "smoothing" in option:
        kw["label_smoothing"] = 0.1
    try:
        loss = getattr(m.nn.functional, fn)(x, target, reduction=reduction, **kw)
        loss.sum().backward()
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return type(err).__name__
    return tuple(loss.shape), loss.detach().numpy().tolist(), tuple(x.grad.shape)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


CASES = [(fn, option) for fn in ("cross_entropy", "nll_loss") for option in OPTIONS
         if fn == "cross_entropy" or option in ("plain", "weight", "ignore_index")]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize(("fn", "option"), CASES)
def test_empty_class_losses_as_pytorch(fn, option, shapes, reduction):
    got = _run(ember, fn, *shapes, reduction, option)
    want = _run(torch, fn, *shapes, reduction, option)
    assert _same(got, want), (got, want)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_probability_cross_entropy_differentiates_its_class_weights(smoothing, reduction):
    """PyTorch computes the class-probability form of cross_entropy from differentiable ops: the class weights
    take their gradient (ember used to drop it)."""
    rng = np.random.default_rng(0)
    x, y, w = rng.standard_normal((3, 4)), rng.random((3, 4)), rng.random(4) + 0.5
    grads = []
    for m in (torch, ember):
        xt, wt = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        loss = m.nn.functional.cross_entropy(xt, m.tensor(y), weight=wt, label_smoothing=smoothing,
                                             reduction=reduction)
        loss.sum().backward()
        grads.append((xt.grad.numpy(), wt.grad.numpy()))
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 2), (2, 3, 1, 2)], ids=str)
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_class_index_losses_refuse_class_weights_that_require_grad(fn, shape):
    """PyTorch's class-index kernels have no derivative for the class weights: weights that require grad are
    refused in grad mode (naming the 1-D or the 2-D kernel), accepted under no_grad."""
    outcomes = []
    for m in (torch, ember):
        x = m.zeros(shape, dtype=m.float64)
        target = m.zeros(shape[:1] + shape[2:] if len(shape) > 1 else (), dtype=m.int64)
        w = m.ones(3, dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            getattr(m.nn.functional, fn)(x, target, weight=w)
        with m.no_grad():
            value = getattr(m.nn.functional, fn)(x, target, weight=w).item()
        outcomes.append((str(err.value), value))
    assert outcomes[0] == outcomes[1]
