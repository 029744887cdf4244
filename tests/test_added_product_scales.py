"""The addmm family (addmm, addmv, addr, baddbmm, addbmm) with each (beta, alpha) pair, one of them 1 and the other
not among them, in each floating dtype: values and the three gradients against PyTorch's.

The node keeps its own beta and alpha only when one is not 1 (``_AddedProduct``; addbmm's half-precision forward
sets them itself), so a pair with one side 1 is where a slip in that test shows: the product's gradient unscaled."""

import numpy as np
import pytest
import torch

import ember

SHAPES = {"addmm": [(4, 5), (4, 6), (6, 5)], "addmv": [(4,), (4, 6), (6,)], "addr": [(4, 5), (4,), (5,)],
          "baddbmm": [(3, 4, 5), (3, 4, 6), (3, 6, 5)], "addbmm": [(4, 5), (3, 4, 6), (3, 6, 5)]}
SCALES = [(1, 1), (1, 2.0), (1, -0.5), (0.5, 1), (3, 1), (2, 1), (0.5, 2.0), (0, 1), (0, 2.0), (1, 0), (2, 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_beta_and_alpha_pair_as_torch(name, dtype):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES[name]]
    gout = rng.standard_normal(SHAPES[name][0]).astype(np.float32)  # (the result has the added input's shape)
    half = dtype in ("float16", "bfloat16")
    for beta, alpha in SCALES:
        results = []
        for m in (ember, torch):
            ins = [m.tensor(a).to(getattr(m, dtype)).requires_grad_() for a in arrays]
            out = getattr(m, name)(*ins, beta=beta, alpha=alpha)
            out.backward(m.tensor(gout).to(getattr(m, dtype)))
            results.append([out.detach()] + [t.grad for t in ins])
        for what, e, t in zip(("result", "input's grad", "first operand's grad", "second operand's grad"), *results):
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (what, beta, alpha)
            e, t = e.float().numpy(), t.float().numpy()
            if half:  # (within one rounding of the largest entry: PyTorch's half-precision addmv rounds beta * input
                # first or not depending on its gemv kernel's blocking, so a few entries differ by that rounding)
                np.testing.assert_allclose(e, t, rtol=2 ** -7, atol=2 ** -7 * np.abs(t).max(),
                                           err_msg=f"{what} beta={beta} alpha={alpha}")
            else:
                np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5, err_msg=f"{what} beta={beta} alpha={alpha}")


# the products with nothing to sum: an inner dimension of 0 (addbmm's also a batch of 0), the input broadcast or not
EMPTY_SUMS = {"addmm": [(3, 5), (3, 0), (0, 5)], "addmm broadcast": [(5,), (3, 0), (0, 5)],
              "addmv": [(3,), (3, 0), (0,)], "baddbmm": [(2, 3, 5), (2, 3, 0), (2, 0, 5)],
              "baddbmm broadcast": [(3, 1), (2, 3, 0), (2, 0, 5)], "addbmm": [(3, 5), (2, 3, 0), (2, 0, 5)],
              "addbmm of no batch": [(3, 5), (0, 3, 4), (0, 4, 5)]}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("case", sorted(EMPTY_SUMS))
def test_a_product_with_nothing_to_sum_scales_the_input_as_torch(case, dtype):
    """PyTorch's CPU kernels scale the input alone (``result.mul_(beta)``, zeros for beta 0: the input's nan
    ignored), a half-precision result with beta taken in the half type: a beta it cannot hold (0.1, 1/3) shows
    that rounding; bit for bit, values and gradients."""
    rng = np.random.default_rng(2)
    arrays = [(rng.standard_normal(s) * 10).astype(np.float32) for s in EMPTY_SUMS[case]]
    arrays[0].flat[1] = np.nan
    for beta, alpha in [(0.1, 1), (1 / 3, 0.7), (0, 1), (1, 1), (0.3, 0), (2, 1), (7.3, 0.1)]:
        results = []
        for m in (ember, torch):
            ins = [m.tensor(a).to(getattr(m, dtype)).requires_grad_() for a in arrays]
            out = getattr(m, case.split()[0])(*ins, beta=beta, alpha=alpha)
            out.backward(m.ones_like(out))
            results.append([out.detach()] + [t.grad for t in ins])
        for what, e, t in zip(("result", "input's grad", "first operand's grad", "second operand's grad"), *results):
            assert tuple(e.shape) == tuple(t.shape), (what, beta, alpha)
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (what, beta, alpha)
            np.testing.assert_array_equal(e.float().numpy(), t.float().numpy(), err_msg=f"{what} {beta} {alpha}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.3, 1.7), (0, 1), (2, 1), (1, 1 / 3)])
def test_half_addbmm_rounds_after_each_batch_entry_as_torch(dtype, beta, alpha):
    """PyTorch's half-precision addbmm is one addmm per batch entry, each sum rounded to the half type: a batch
    longer than the matrices' rows and columns shows a rounding left out (or one bound read from the wrong
    dimension); bit for bit."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, 4), (7, 2, 3), (7, 3, 4))]

    def run(m):
        ins = [m.tensor(a).to(getattr(m, dtype)) for a in arrays]
        return m.addbmm(*ins, beta=beta, alpha=alpha).float().numpy()

    np.testing.assert_array_equal(run(ember), run(torch))
