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
