"""A NaN or infinity in a convolution's weight: the input gradient is NaN only where an output read that weight,
as PyTorch's (the stride-1 input gradient computed as a correlation of the zero-padded output gradient made
0 * NaN = NaN at border positions no output reads)."""

import numpy as np
import pytest

from tests.oracle import outcomes

CASES = {  # name -> (nd, padding, in channels, out channels, batch, size, kernel, groups)
    "1d": (1, 0, 1, 1, 1, 6, 3, 1),
    "1d_wide_kernel": (1, 2, 2, 2, 1, 9, 5, 1),
    "2d": (2, 0, 1, 1, 1, 6, 3, 1),
    "2d_padded": (2, 1, 1, 1, 1, 6, 3, 1),
    "2d_channels": (2, 0, 4, 4, 2, 6, 3, 1),
    "2d_groups": (2, 0, 4, 4, 2, 6, 3, 2),
    "2d_winograd": (2, 1, 16, 16, 32, 8, 3, 1),
    "2d_winograd_nchw": (2, 1, 16, 16, 32, 40, 3, 1),
    "2d_batch_last": (2, 0, 8, 8, 3, 40, 3, 1),
    "3d": (3, 0, 1, 1, 1, 6, 3, 1),
}


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_input_grad_with_nonfinite_weight(case, bad, dtype):
    nd, pad, c, o, n, size, k, groups = CASES[case]
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((n, c, *(size,) * nd)).astype(dtype)
    ws = rng.standard_normal((o, c // groups, *(k,) * nd)).astype(dtype)
    ws[(0, 0) + (0,) * nd] = bad

    def grad(m):
        x = m.tensor(xs, requires_grad=True)
        getattr(m.nn.functional, f"conv{nd}d")(x, m.tensor(ws), padding=pad, groups=groups).sum().backward()
        return x.grad.numpy()

    (got, _), (want, _) = outcomes(grad)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # (NaN where both are)
