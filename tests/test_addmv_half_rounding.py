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
