"""``torch.gradient`` against PyTorch: values to the last bit (the same arithmetic order), gradients through it,
and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error

COORDS = ([0.0, 1.0, 3.0], [0.0, 0.5, 2.0, 2.5])


def _cases(m):
    base = m.tensor((np.arange(12.0).reshape(3, 4) ** 2 + np.sin(np.arange(12.0)).reshape(3, 4)).tolist())
    coords = tuple(m.tensor(c) for c in COORDS)
    return [
        (base, {}), (base, {"edge_order": 2}), (base, {"spacing": 2.0}), (base, {"spacing": [0.5, 3.0]}),
        (base, {"dim": 1}), (base, {"dim": [-1, 0], "spacing": [2.0, 0.25], "edge_order": 2}),
        (base, {"spacing": coords}), (base, {"spacing": coords, "edge_order": 2}),
        (base, {"spacing": coords[1:], "dim": -1}), (base, {"spacing": m.tensor(4.0)}),
        (base.double(), {"spacing": 3}), (m.tensor([1, 4, 9, 16, 25]), {}), (m.tensor([1, 4, 9]), {"edge_order": 2}),
        (base[:2], {"dim": 0}), (base.t(), {"edge_order": 2}), (m.tensor(np.cos(np.arange(24.0)).reshape(2, 3, 4).tolist()), {"dim": (2, 0)}),
    ]


@pytest.mark.parametrize("case", range(16))
def test_gradient_matches_pytorch(case):
    """ember had no torch.gradient (a MissingFeatureError)."""
    results = []
    for m in (torch, ember):
        x, kwargs = _cases(m)[case]
        x = x.clone().requires_grad_(x.is_floating_point())
        out = m.gradient(x, **kwargs)
        grads = None
        if x.requires_grad:
            sum(o.sin().sum() for o in out).backward()
            grads = x.grad.numpy()
        results.append(([o.detach().numpy() for o in out], grads))
    (want, want_grad), (got, got_grad) = results
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    if want_grad is not None:
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    {"spacing": [1.0, 2.0, 3.0]}, {"spacing": [2.0]}, {"dim": [0, 0]}, {"edge_order": 3}, {"edge_order": 0},
    {"spacing": [1.0, 2.0], "dim": 0}, {"dim": 5}, {"dim": 0, "edge_order": 2, "x": "short"},
])
def test_gradient_errors_as_pytorch(kwargs):
    def call(m):
        kw = dict(kwargs)
        x = m.ones(2, 4) if kw.pop("x", None) else m.ones(3, 4)
        return m.gradient(x, **kw)
    assert_same_error(call)
