"""ember.fft against torch.fft: values, dtypes and gradients of every transform with n / s, dim and each norm;
frequencies, shifts and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember

NORMS = [None, "backward", "ortho", "forward"]


def _real(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _complex(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 8, 13])
@pytest.mark.parametrize("dim", [-1, 0])
def test_one_dim_transforms(name, norm, n, dim):
    x = _real((8, 6)) if name in REAL_ONLY else _complex((8, 6))
    check(lambda m, t: getattr(m.fft, name)(t, n=n, dim=dim, norm=norm), [x], atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft"])
def test_real_input_to_complex_transforms(name):
    # a real input is made complex; its gradient is the real part
    check(lambda m, t: getattr(m.fft, name)(t, norm="ortho"), [_real((3, 7))], atol=1e-9, rtol=1e-7)


NDIM = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]


@pytest.mark.parametrize("name", NDIM)
@pytest.mark.parametrize("s,dim", [(None, None), ((4, 6), None), ((5, -1), (0, 2)), (None, (2, 0)), ((3,), (1,)),
                                   ((6, 4, 7), None)])
@pytest.mark.parametrize("norm", NORMS)
def test_multi_dim_transforms(name, s, dim, norm):
    if name.endswith("2") and any(v is not None and len(v) != 2 for v in (s, dim)):
        pytest.skip("the 2-D transforms take two dims")
    x = _real((4, 5, 6)) if name in REAL_ONLY else _complex((4, 5, 6))
    kw = {k: v for k, v in (("s", s), ("dim", dim)) if v is not None}
    check(lambda m, t: getattr(m.fft, name)(t, norm=norm, **kw), [x], atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("name", ONE_D + NDIM)
def test_float32_dtypes_as_pytorch(name):
    x = _real((4, 6), np.float32) if name in REAL_ONLY else _complex((4, 6), np.complex64)
    check(lambda m, t: getattr(m.fft, name)(t), [x], dtype=np.float32, atol=1e-4, rtol=1e-4)
    e, t = getattr(ember.fft, name)(ember.arange(8).view(2, 4)), getattr(torch.fft, name)(torch.arange(8).view(2, 4))
    if name not in ("irfft", "hfft", "irfft2", "irfftn", "hfft2", "hfftn"):  # (PyTorch has no int c2r)
        assert e.dtype.name == str(t.dtype)[6:]  # integers compute in the default float dtype
        assert_close(e, t, atol=1e-5)


def test_rfft_irfft_roundtrip_gradient_in_a_loss():
    # a real loss through both Hermitian halves: rfft, a complex weight, irfft (the FNO pattern)
    x, w = _real((2, 3, 16)), _real((3, 9, 2))
    check(lambda m, x, w: (m.fft.irfft(m.fft.rfft(x) * m.view_as_complex(w), n=16) ** 2).sum(), [x, w], atol=1e-9)
    check(lambda m, x, w: m.fft.irfft(m.fft.rfft(x, norm="ortho")[..., :5] * m.view_as_complex(w[:, :5]), n=16,
                                      norm="ortho"), [x, w], atol=1e-9)


def test_fftfreq_and_rfftfreq():
    for n, d in ((5, 1.0), (6, 0.1), (1, 2.0), (8, 0.5)):
        assert_close(ember.fft.fftfreq(n, d), torch.fft.fftfreq(n, d))
        assert_close(ember.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
    assert_close(ember.fft.fftfreq(4, dtype=ember.float64), torch.fft.fftfreq(4, dtype=torch.float64))


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), (1,)])
def test_shifts(dim):
    check(lambda m, t: m.fft.fftshift(t, dim=dim) * 2, [(5, 6)])
    check(lambda m, t: m.fft.ifftshift(t, dim=dim) * 2, [(5, 7)])
    check(lambda m, t: m.fft.ifftshift(m.fft.fftshift(t, dim=dim), dim=dim), [(3, 5)])


@pytest.mark.parametrize("call", [
    lambda m: m.fft.fft(m.zeros(4, 6), norm="bad"), lambda m: m.fft.fft(m.zeros(4, 6), n=0),
    lambda m: m.fft.fftn(m.zeros(4, 6), dim=(0, 0)), lambda m: m.fft.fft(m.zeros(4, 6), dim=3),
    lambda m: m.fft.rfft(m.zeros(3, dtype=m.cfloat)), lambda m: m.fft.fftn(m.zeros(4, 6), s=(2,), dim=(0, 1)),
    lambda m: m.fft.irfft(m.zeros(1)), lambda m: m.fft.ihfft(m.zeros(3, dtype=m.cfloat)),
], ids=["norm", "n", "unique", "dim", "rfft-complex", "s-dim", "irfft-1", "ihfft-complex"])
def test_errors_as_pytorch(call):
    with pytest.raises((RuntimeError, IndexError)) as te:
        call(torch)
    with pytest.raises(te.type) as ee:
        call(ember)
    assert str(te.value).split(" (")[0] in str(ee.value)


def test_module_is_reachable_as_torch_fft():
    import ember.fft as fft_module

    assert ember.fft is fft_module
    with pytest.raises(AttributeError, match="torch.fft.nope is not implemented"):
        ember.fft.nope  # noqa: B018
