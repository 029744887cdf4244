"""quantile/nanquantile interpolate as PyTorch's ``lerp_`` kernel does, to the last bit: ``below + w * diff`` for
|w| < 0.5, else ``above + (w - 1) * diff``, each a fused multiply-add (float32 and float64, values of many
magnitudes, NaN slices)."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "lower", "higher", "nearest"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 5, 10, 33, 1000])
def test_bits_as_pytorch(n, dtype, name, interpolation):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal((4, n)) * 10.0 ** rng.integers(-3, 4, (4, n))).astype(dtype)
    a[1, 0] = np.nan
    q = np.concatenate([rng.random(40), [0, 0.5, 1]]).astype(dtype)
    want = getattr(torch, name)(torch.tensor(a), torch.tensor(q), dim=1, interpolation=interpolation).numpy()
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(q), dim=1, interpolation=interpolation).numpy()
    np.testing.assert_array_equal(got, want)


def test_gradient_as_pytorch():
    grads = []
    for m in (ember, torch):
        x = m.tensor([1.0, 5.0, 2.0, 8.0, 3.0], requires_grad=True)
        m.quantile(x, m.tensor([0.3, 0.7, 0.55])).sum().backward()
        grads.append(x.grad)
    assert_close(*grads)
