"""torch.special.zeta (the Hurwitz zeta function) against PyTorch: values over a grid of x and q that reaches
every branch of Cephes' algorithm (poles, negative q, the direct sum's early exit, the Euler-Maclaurin tail, inf
and nan), random draws, dtype promotion and numbers for either operand, broadcasting, the gradient in q (first
and second order), and the errors (float16, two numbers, the gradient in x)."""

import numpy as np
import pytest
import torch
from oracle import assert_same_error

import ember

XS = [1.0, 1.0000001, 1.001, 1.5, 2, 2.5, 3, 4.5, 7, 10, 20, 50, 100, 0.5, -1, -2, float("inf"), float("nan"), 1e5]
QS = [1.0, 2.0, 0.5, 1e-3, 1e-8, 3.7, 9.5, 10.0, 100.0, 1e6, 1e10, 0.0, -1.0, -2.5, -1.5, -10.3, -0.0,
      float("inf"), float("nan"), 5e-324]
RTOL = {"float64": 4e-15, "float32": 2e-6}  # (sums of alternating signs at negative q: a few ulps)


def close(got, want, rtol):
    g, w = got.numpy(), want.numpy()
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
    finite = np.isfinite(w)
    np.testing.assert_allclose(g[finite], w[finite], rtol=rtol, atol=0)
    np.testing.assert_array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_over_the_branches_as_pytorch(dtype):
    x, q = np.meshgrid(np.array(XS), np.array(QS))
    got, want = (fw.special.zeta(fw.tensor(x, dtype=getattr(fw, dtype)), fw.tensor(q, dtype=getattr(fw, dtype)))
                 for fw in (ember, torch))
    close(got, want, RTOL[dtype])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_random_values_as_pytorch(dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 30, 3000)
    x[::2] = np.round(x[::2])  # integral x: negative q has values there
    q = rng.uniform(-20, 50, 3000)
    got, want = (fw.special.zeta(fw.tensor(x, dtype=getattr(fw, dtype)), fw.tensor(q, dtype=getattr(fw, dtype)))
                 for fw in (ember, torch))
    close(got, want, RTOL[dtype])


@pytest.mark.parametrize("case", ["int_int", "int_float64", "float32_float64", "zero_dim", "number_x", "number_q",
                                  "int_number", "bool", "broadcast"])
def test_promotion_numbers_and_broadcasting_as_pytorch(case):
    def fn(fw):
        t = fw.tensor
        return {"int_int": lambda: fw.special.zeta(t([2, 3]), t([1, 2])),
                "int_float64": lambda: fw.special.zeta(t([2, 3]), t([1.0, 2.0], dtype=fw.float64)),
                "float32_float64": lambda: fw.special.zeta(t([2.0, 3.0]), t([1.0, 2.0], dtype=fw.float64)),
                "zero_dim": lambda: fw.special.zeta(t([2.0, 3.0]), t(1.5, dtype=fw.float64)),
                "number_x": lambda: fw.special.zeta(2.0, t([1.0, 2.0])),
                "number_q": lambda: fw.special.zeta(t([2.0, 3.0]), 1),
                "int_number": lambda: fw.special.zeta(2, t([1, 2])),
                "bool": lambda: fw.special.zeta(t([True]), t([2.0])),
                "broadcast": lambda: fw.special.zeta(t([[2.0], [3.5]]), t([1.0, 2.0, 0.5]))}[case]()

    got, want = fn(ember), fn(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    close(got, want, 1e-6)


def test_gradient_in_q_as_pytorch():
    def grads(fw):
        x = fw.tensor([2.0, 3.0, 4.5, 2.0], dtype=fw.float64)
        q = fw.tensor([1.0, 2.0, 0.5, -1.5], dtype=fw.float64, requires_grad=True)
        y = fw.special.zeta(x, q)
        assert type(y.grad_fn).__name__ == "SpecialZetaBackward0"
        (g,) = fw.autograd.grad((y * fw.tensor([1.0, 2.0, 3.0, 4.0], dtype=fw.float64)).sum(), q,
                                create_graph=True)
        (gg,) = fw.autograd.grad(g.sum(), q)
        return g.detach(), gg

    for got, want in zip(grads(ember), grads(torch)):
        close(got, want, 1e-13)


@pytest.mark.parametrize("case", ["float16", "bfloat16", "int_float16", "two_numbers", "gradient_in_x"])
def test_errors_as_pytorch(case):
    def fn(fw):
        if case == "two_numbers":
            return fw.special.zeta(2, 3)
        if case == "gradient_in_x":
            x = fw.tensor([2.0, 3.0], requires_grad=True)
            return fw.special.zeta(x, 1.0).sum().backward()
        dtypes = {"float16": ("float16", "float16"), "bfloat16": ("bfloat16", "int64"),
                  "int_float16": ("int32", "float16")}[case]
        return fw.special.zeta(fw.tensor([2, 3], dtype=getattr(fw, dtypes[0])),
                               fw.tensor([1, 2], dtype=getattr(fw, dtypes[1])))

    assert_same_error(fn)
