"""addmv in float16/bfloat16 rounds as PyTorch's CPU gemv does with beta or alpha not 1: beta and alpha taken in the
half type, beta * input rounded to it before alpha * (mat @ vec) is added (float16 with alpha 1 takes PyTorch's fast
path: one rounding); ember computed beta * input + alpha * (mat @ vec) in float32 and rounded once, one rounding off
in a few entries."""

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("beta, alpha", [(2.0, 0.7), (0.3, 0.0), (0.5, 1.0), (0.3, 1.3), (1.0, 0.7), (1.7, 1.0),
                                         (0.0, 0.7), (0.0, 1.0), (1.0, 1.0)])
def test_half_addmv_rounds_as_pytorch(dtype, beta, alpha):
    rng = np.random.default_rng(0)
    y, mat, vec = (rng.standard_normal(s).astype(np.float32) for s in ((64,), (64, 37), (37,)))

    def run(lib):
        d = getattr(lib, dtype)
        return lib.addmv(lib.tensor(y).to(d), lib.tensor(mat).to(d), lib.tensor(vec).to(d), beta=beta,
                         alpha=alpha).float().numpy()

    np.testing.assert_array_equal(run(ember), run(torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("alpha", [1.0, 0.7, 1 / 3])
def test_half_addmv_with_beta_zero_ignores_the_input(dtype, alpha):
    """beta 0: the input's nan and inf do not reach the result, on every half path (float16's alpha-1 fast path
    too), and an alpha the half type cannot hold is taken rounded to it, as PyTorch's."""
    rng = np.random.default_rng(3)
    y, mat, vec = (rng.standard_normal(s).astype(np.float32) for s in ((16,), (16, 9), (9,)))
    y[[1, 4, 7]] = np.nan, np.inf, -np.inf

    def run(lib):
        d = getattr(lib, dtype)
        return lib.addmv(lib.tensor(y).to(d), lib.tensor(mat).to(d), lib.tensor(vec).to(d), beta=0,
                         alpha=alpha).float().numpy()

    expected = run(torch)
    assert np.isfinite(expected).all()
    np.testing.assert_array_equal(run(ember), expected)
