"""Found by running small training programs under PyTorch and ember side by side: each checked against torch."""

import numpy as np
import pytest
import torch
from oracle import assert_close, node_names

import ember

RNG = np.random.default_rng(41)
X8 = RNG.standard_normal((2, 8, 3, 4)).astype(np.float32)


def _shuffle_input(m, layout):
    x = m.tensor(X8)
    return {"contiguous": lambda: x, "channels_last": lambda: x.to(memory_format=m.channels_last),
            "sliced": lambda: x[:, :, :, :2], "3d": lambda: x[0], "5d": lambda: x.reshape(1, 2, 8, 3, 4)}[layout]()


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "sliced", "3d", "5d"])
@pytest.mark.parametrize("op,factor", [("pixel_shuffle", 2), ("pixel_shuffle", 1), ("pixel_unshuffle", 1)])
def test_pixel_shuffle_is_one_new_tensor_laid_out_as_pytorch(layout, op, factor):
    # A factor of 1 gave a view of the input (an in-place write reached it) and a channels-last input a row-major
    # result; the node's next function was ember's inner permute, not the input's node.
    results = []
    for m in (ember, torch):
        x = _shuffle_input(m, layout).detach().clone(memory_format=m.preserve_format).requires_grad_()
        x_before = x.detach().clone()
        y = getattr(m.nn.functional, op)(x * 2, factor)
        names = node_names(y.grad_fn)
        y.detach()[(0,) * y.ndim] = 100.0  # a new tensor: the input is untouched
        (y * m.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        results.append((y, x.grad, names, y.stride(), m.equal(x.detach(), x_before)))
    (ey, eg, en, es, eu), (ty, tg, tn, ts, tu) = results
    assert_close(ey, ty)
    assert_close(eg, tg)
    assert (en, es, eu) == (tn, ts, tu)


def test_pixel_unshuffle_channels_last():
    for r in (1, 2):
        e = ember.nn.functional.pixel_unshuffle(ember.tensor(X8[:1, :2, :2]).to(memory_format=ember.channels_last), r)
        t = torch.nn.functional.pixel_unshuffle(torch.tensor(X8[:1, :2, :2]).to(memory_format=torch.channels_last), r)
        assert_close(e, t)
        assert e.stride() == t.stride()


def test_pixel_shuffle_double_backward():
    out = []
    for m in (ember, torch):
        x = m.tensor(X8, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.pixel_shuffle(x, 2)
        (g,) = m.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        out.append(gg)
    assert_close(*out)
