"""The normalisation functions on the shapes at their edges: one element, size-1 dims, one channel or group, empty
batches and empty feature dims. Each runs in ember and in PyTorch on the same input: the same outcome (values and
every gradient, or the same exception type where PyTorch refuses the shape)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close


def _f(m):
    return m.nn.functional


def _c(x):
    return x.shape[1]


# name -> fn(m, x) with x of at least 1 dim (the functions' own parameters made from x's shape)
FNS = {
    "local_response_norm": lambda m, x: _f(m).local_response_norm(x, 2),
    "local_response_norm_size3": lambda m, x: _f(m).local_response_norm(x, 3, alpha=0.5, beta=0.6, k=2.0),
    "group_norm_1": lambda m, x: _f(m).group_norm(x, 1),
    # (two groups: N * C / G equals the spatial size on (1, 4, 2), which PyTorch's one-value check must not refuse)
    "group_norm_2": lambda m, x: _f(m).group_norm(x, 2),
    "group_norm_c": lambda m, x: _f(m).group_norm(x, _c(x), m.linspace(0.5, 1.5, _c(x), dtype=m.float64),
                                                  m.linspace(-1.0, 1.0, _c(x), dtype=m.float64)),
    "instance_norm": lambda m, x: _f(m).instance_norm(x),
    "layer_norm_last": lambda m, x: _f(m).layer_norm(x, x.shape[-1:]),
    "layer_norm_all": lambda m, x: _f(m).layer_norm(x, x.shape[1:]),
    "rms_norm_last": lambda m, x: _f(m).rms_norm(x, x.shape[-1:]),
    "batch_norm_train": lambda m, x: _f(m).batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda m, x: _f(m).batch_norm(x, m.zeros(_c(x), dtype=m.float64),
                                                     m.ones(_c(x), dtype=m.float64)),
    "normalize": lambda m, x: _f(m).normalize(x),
    "normalize_p1_last": lambda m, x: _f(m).normalize(x, p=1.0, dim=-1),
}
SHAPES = [(1, 1, 1), (1, 1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 3), (2, 3, 1, 1), (1, 4, 2), (3, 2, 4),
          (0, 2, 3), (2, 2, 0), (2, 0, 3), (1, 1)]


def _run(m, fn, shape):
    x = m.tensor(np.random.default_rng(0).standard_normal(shape) + 0.5, dtype=m.float64, requires_grad=True)
    try:
        y = fn(m, x)
        g = np.random.default_rng(1).standard_normal(tuple(y.shape))
        y.backward(m.tensor(g, dtype=m.float64))
    except (RuntimeError, ValueError, IndexError, ZeroDivisionError) as err:
        return type(err), None
    return y.detach(), x.grad


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(FNS))
def test_normalisation_on_an_edge_shape_as_pytorch(name, shape):
    (ey, eg), (ty, tg) = _run(ember, FNS[name], shape), _run(torch, FNS[name], shape)
    if tg is None:
        assert ey is ty, f"ember gave {ey!r} where PyTorch raised {ty.__name__}"
        return
    assert eg is not None, f"ember raised {ey.__name__} where PyTorch gave {ty}"
    assert_close(ey, ty, atol=1e-10, rtol=1e-10)
    assert_close(eg, tg, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("shape,groups", [((1, 2), 2), ((1, 2, 1), 2), ((1, 4), 4), ((1, 6, 1, 1), 6), ((1, 3), 3)],
                         ids=str)
def test_group_norm_of_one_value_per_group_refused_with_pytorchs_message(shape, groups):
    """PyTorch's ValueError names the (N * C / G, G, *) view it checks; its message as PyTorch's."""
    messages = []
    for m in (ember, torch):
        with pytest.raises(ValueError) as err:
            _f(m).group_norm(m.ones(shape), groups)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_empty_batch_is_pytorchs_affine_graph(training, bias):
    """An empty batch's batch_norm is ``input * weight (+ bias)``, as PyTorch builds it: the same node
    (MulBackward0, AddBackward0 with a bias), zero gradients for weight and bias, and, as a product saves only
    the input for the weight's gradient, no error when the weight changes in place before backward."""
    names, grads = [], []
    for m in (ember, torch):
        x = m.zeros(0, 3, 2, dtype=m.float64)
        w = m.tensor([1.5, -2.0, 0.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([0.5, 0.25, -1.0], dtype=m.float64, requires_grad=True) if bias else None
        stats = (None, None) if training else (m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64))
        out = _f(m).batch_norm(x, *stats, w, b, training=training)
        names.append((type(out.grad_fn).__name__, [type(f).__name__ for f, _ in out.grad_fn.next_functions[:1]]))
        with m.no_grad():
            w.mul_(2.0)
        out.sum().backward()
        grads.append((w.grad, b.grad if bias else None))
    assert names[0] == names[1]
    for e, t in zip(*grads):
        assert (e is None) == (t is None)
        if t is not None:
            assert_close(e, t, atol=0, rtol=0)
