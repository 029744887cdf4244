"""cross_entropy and nll_loss of (N, C, d1, ...) inputs of each rank PyTorch takes (3, 4, 5), with spatial sizes
odd, one and zero (ember computes ranks 3 and 5+ on an (N, C, 1, -1) view of a contiguous copy, the target reshaped
to match and the unreduced loss viewed back), each reduction, class weights and an ignore_index: values and
gradients against PyTorch."""

import numpy as np
import pytest
import torch

import ember

SHAPES = [(2, 3, 3), (2, 3, 1), (1, 4, 5), (2, 3, 3, 1), (2, 3, 1, 3), (2, 3, 3, 1, 3), (2, 3, 1, 1, 1), (2, 3, 0),
          (3, 2, 5, 3)]


def _run(m, shape, loss, reduction, weighted):
    rng = np.random.default_rng(sum(shape))
    x = m.tensor(rng.standard_normal(shape), requires_grad=True)
    t = m.tensor(rng.integers(0, shape[1], (shape[0], *shape[2:])))
    kwargs = dict(reduction=reduction, ignore_index=1)
    if weighted:
        kwargs["weight"] = m.tensor(np.linspace(0.5, 2.0, shape[1]))
    inp = x if loss == "cross_entropy" else m.log_softmax(x, 1)
    y = getattr(m.nn.functional, loss)(inp, t, **kwargs)
    (y * m.tensor(rng.standard_normal(y.shape))).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_class_losses_of_each_spatial_shape_as_pytorch(shape, loss, reduction, weighted):
    (got_y, got_g), (want_y, want_g) = _run(ember, shape, loss, reduction, weighted), \
        _run(torch, shape, loss, reduction, weighted)
    assert got_y.shape == want_y.shape
    np.testing.assert_allclose(got_y, want_y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-10, atol=1e-12)
