"""The orthogonal polynomials of ``torch.special`` (missing in ember), against torch: values over degrees from
negative to 200 and arguments inside, at and outside [-1, 1] (the kernels' exact end values, closed trigonometric
forms and recurrences), float64 and float32 (where a large degree overflows as PyTorch's), dtypes, broadcasting, a
number for either operand, no gradient, out=, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]
XS = np.array([-1.5, -1.0, -0.999, -0.5, 0.0, 1e-9, 0.3, 0.5, 0.9999, 1.0, 2.0, np.nan, np.inf])
NS = np.array([-2, -1, 0, 1, 2, 3, 5, 7, 8, 9, 10, 25, 60, 200])
TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-4, atol=1e-6)}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_as_torch(name, dtype):
    e, t = (getattr(m.special, name)(m.tensor(XS.astype(dtype))[:, None], m.tensor(NS)) for m in (ember, torch))
    assert str(e.dtype).rsplit(".")[-1] == str(t.dtype).rsplit(".")[-1] == dtype
    np.testing.assert_allclose(e.numpy(), t.numpy(), equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("name", NAMES)
def test_operand_forms_and_dtypes_as_torch(name):
    for make in (lambda m: (m.tensor([1, 2, 3]), 2), lambda m: (0.5, m.tensor([3, 4])),
                 lambda m: (m.tensor([0.5, 0.2], dtype=m.float64), m.tensor([2.7, -0.5])),
                 lambda m: (m.tensor(0.25), 3.9), lambda m: (m.tensor([0.5]), m.tensor([3.0], dtype=m.float16)),
                 lambda m: (m.ones(0, 2), 3)):
        e, t = (getattr(m.special, name)(*make(m)) for m in (ember, torch))
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype).rsplit(".")[-1] == str(t.dtype).rsplit(".")[-1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_no_gradient_and_out():
    for m in (ember, torch):
        x = m.tensor([0.5, 0.2], requires_grad=True)
        y = m.special.legendre_polynomial_p(x, 3)
        assert not y.requires_grad and y.grad_fn is None
        out = m.empty(2)
        m.special.hermite_polynomial_h(x, 3, out=out)  # (allowed: the result takes no gradient)
        np.testing.assert_allclose(out.numpy(), [-5.0, -2.336], rtol=1e-6)


@pytest.mark.parametrize("call", [lambda m: m.special.chebyshev_polynomial_t(0.5, 3),
                                  lambda m: m.special.laguerre_polynomial_l(m.ones(2, dtype=m.float16), 3),
                                  lambda m: m.special.hermite_polynomial_he(m.ones(2, dtype=m.bfloat16), 3),
                                  lambda m: m.special.legendre_polynomial_p(m.ones(2, dtype=m.complex64), 3)])
def test_errors_as_torch(call):
    messages = []
    for m in (ember, torch):
        with pytest.raises((TypeError, NotImplementedError)) as info:
            call(m)
        messages.append((type(info.value).__name__, str(info.value).splitlines()[0]))
    assert messages[0] == messages[1]


def test_names_as_torchs():
    for name in NAMES:
        assert getattr(ember.special, name).__name__ == getattr(torch.special, name).__name__ == f"special_{name}"
