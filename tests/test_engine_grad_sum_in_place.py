"""The autograd engine sums a node's gradients in place into the first one where nothing else holds it (a residual
block's two gradients), with PyTorch's values; a gradient something else holds (a hook's tensor, ``retain_grad``,
the same array sent twice) is never written."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import engine


@pytest.fixture
def in_place_sums(monkeypatch):
    """The sizes of the sums the engine makes in place."""
    sizes = []
    real = engine.xp.add

    class Spy:
        def __getattr__(self, name):
            return getattr(np, name)

        def add(self, a, b, out=None):
            sizes.append(a.size)
            return real(a, b, out=out)

    monkeypatch.setattr(engine, "xp", Spy())
    return sizes


def _residual(lib, x, w):
    y = lib.nn.functional.conv2d(x, w, padding=1).relu()
    # x's gradient: the add's (the last ReLU's fresh gradient, passed on) and the first convolution's
    return (lib.nn.functional.conv2d(y, w, padding=1) + x).relu()


def test_a_residual_sum_is_made_in_place_with_pytorchs_values(in_place_sums):
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 8, 16, 16)).astype(np.float32), (rng.standard_normal((8, 8, 3, 3)) / 8).astype(np.float32)
    up = rng.standard_normal((4, 8, 16, 16)).astype(np.float32)
    tx = torch.tensor(xs, requires_grad=True)
    _residual(torch, tx.relu(), torch.tensor(ws)).backward(torch.tensor(up))
    ex = ember.tensor(xs, requires_grad=True)
    _residual(ember, ex.relu(), ember.tensor(ws)).backward(ember.tensor(up))
    assert in_place_sums == [xs.size]
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5 * float(tx.grad.abs().max()))


@pytest.mark.parametrize("keep", ["retain_grad", "hook", "twice"])
def test_a_gradient_held_elsewhere_is_not_written(in_place_sums, keep):
    """d's gradient goes on unchanged (the add passes it through) into a's slot, where the exp's joins it: d.grad,
    a hook's tensor, or the same array sent down both edges of ``d + d`` must keep their values."""
    xs = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    results = []
    for lib in (torch, ember):
        x = lib.tensor(xs, requires_grad=True)
        a = x * 2
        d = a + 0
        seen = []
        if keep == "retain_grad":
            d.retain_grad()
        elif keep == "hook":
            d.register_hook(seen.append)
        out = (a.exp().sum() + (d * 3).sum()) if keep != "twice" else (a.exp().sum() + ((d + d) * 3).sum())
        out.backward()
        kept = d.grad if keep == "retain_grad" else seen[0] if keep == "hook" else None
        results.append([x.grad.numpy().copy()] + ([] if kept is None else [np.array(kept.detach().numpy())]))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    if keep != "twice":
        np.testing.assert_array_equal(results[1][1], np.full((3, 4), 3, np.float32))
