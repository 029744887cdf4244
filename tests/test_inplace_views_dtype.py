"""In-place ops that need a gradient on views of another dtype than their base, as PyTorch records them:
``view_as_real(z)``, ``z.real``/``z.imag`` of a complex ``z``, ``view_as_complex`` of a real tensor (values and
gradients); and ``x.view(dtype)``, PyTorch's reinterpretation of the bits: a view that takes no gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, check, outcomes


def _real_view_mul(m, z, w):
    y = z * 1
    r = m.view_as_real(y)
    r[..., 0].mul_(w)
    return y, r * 2


def _real_imag_parts(m, z, w):
    y = z * 1
    y.real.add_(w)
    y.imag.mul_(w)
    return y


def _parts_of_a_zeros_base(m, z, w):
    b = m.zeros(3, dtype=m.complex128)
    b.real.copy_(w)
    b.imag[1:].add_(w[:2] * w[1:])
    return b * z


def _complex_view_of_real(m, x, w):
    y = x * 1
    c = m.view_as_complex(y)
    c[1:].mul_(m.complex(w[:2], w[1:]))
    return y, c.abs()


def _strided_real_view(m, z, w):
    y = (z * 1).t()
    r = m.view_as_real(y)[::2]
    r.select(-1, 1).sub_(w[:2].unsqueeze(-1))
    return y.t(), r


def _view_made_before_then_real_changed(m, z, w):
    y = z * 1
    r = m.view_as_real(y)
    y.imag.mul_(w)  # r is out of date; it reads y's new history
    return r * r


CASES = {"view_as_real_mul_": (_real_view_mul, [(3,), (3,)]),
         "real_add_imag_mul_": (_real_imag_parts, [(3,), (3,)]),
         "parts_of_zeros": (_parts_of_a_zeros_base, [(3,), (3,)]),
         "strided_view_as_real": (_strided_real_view, [(2, 4), (2,)]),
         "view_made_before": (_view_made_before_then_real_changed, [(3,), (3,)])}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_a_real_view_of_a_complex_base(name):
    fn, (zs, ws) = CASES[name]

    def program(m, zr, zi, w):
        return fn(m, m.complex(zr, zi), w)
    check(program, [zs, zs, ws], dtype=np.float64)


def test_inplace_on_a_complex_view_of_a_real_base():
    check(_complex_view_of_real, [(3, 2), (3,)], dtype=np.float64)


def test_second_order_through_a_real_view():
    out = []
    for m in (ember, torch):
        w = m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)
        z = m.complex(w * w, w)
        m.view_as_real(z)[..., 1].mul_(w)
        (g,) = m.autograd.grad((z.abs() ** 2).sum(), w, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), w)
        out.append((g, gg))
    for e, t in zip(*out):
        assert_close(e, t)


def test_view_dtype_reinterprets_the_bits_without_a_gradient():
    got = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, -0.5, 4.0], requires_grad=True)
        y = x * 1
        iv = y.view(m.int32)
        same = y.view(m.float32)
        iv.add_(1)  # not recorded: y's history is unchanged
        y.sum().backward()
        half = m.arange(8.0).view(m.float16)
        got.append((iv.tolist(), iv.requires_grad, same.requires_grad, y.tolist(), x.grad.tolist(), y._version,
                    tuple(half.shape), m.zeros(2, dtype=m.complex64).view(m.float32).shape[0]))
    assert got[0] == got[1], got


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(2, 3, dtype=m.float16).view(m.float32),
    lambda m: m.zeros(3, 4)[:, ::2].view(m.float16),
    lambda m: m.tensor(1.0).view(m.float16),
    lambda m: m.zeros(4, 4, dtype=m.float16)[:, 1:3].view(m.float32),
    lambda m: m.zeros(4, 3, dtype=m.float16).t()[:, :2].contiguous()[1:, :].view(m.float64),
])
def test_view_dtype_errors_as_pytorchs(make):
    (e, _), (t, _) = outcomes(make)
    assert isinstance(t, RuntimeError) and type(e) is type(t) and str(e) == str(t), (e, t)


# Found by review: an empty tensor's element-size-changing view (NumPy gives it strides of 0).
@pytest.mark.parametrize("shape, dtype", [((0,), "float64"), ((0, 3), "float16"), ((2, 0), "int8")])
def test_view_dtype_of_an_empty_tensor(shape, dtype):
    shapes = [tuple(fw.zeros(*shape).view(getattr(fw, dtype)).shape) for fw in (torch, ember)]
    assert shapes[0] == shapes[1]
