"""torch.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine against PyTorch: values bit for bit
(x * (1 / scale) with a float32 reciprocal, rounded half to even, PyTorch's saturation of NaN and infinities), the
straight-through gradient masked outside [quant_min, quant_max], grad_fn names, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16"]


def _pair(array, dtype, requires_grad=True):
    t = torch.tensor(array, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    e = ember.tensor(array, dtype=getattr(ember, dtype), requires_grad=requires_grad)
    return e, t


def _values(shape, seed=0):
    r = np.random.default_rng(seed)
    a = r.normal(0, 3, shape)
    flat = a.reshape(-1)
    flat[:8] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.0, 4.0 * 0.0371, -9.0 * 0.0371]  # ties and exact grid points
    return a


def _check(fn_e, fn_t, e, t):
    ye, yt = fn_e(e), fn_t(t)
    assert ye.dtype == getattr(ember, str(yt.dtype).split(".")[1])
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    assert ye.grad_fn.name() == yt.grad_fn.name()
    g = np.random.default_rng(5).normal(size=tuple(yt.shape))
    ye.backward(ember.tensor(g, dtype=ye.dtype))
    yt.backward(torch.tensor(g, dtype=yt.dtype))
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale,zero_point,qmin,qmax", [(0.0371, 3, -128, 127), (0.1, 0, 0, 255), (1.0, -2, -8, 7),
                                                        (0.25, 0, 0, 0), (3.0, -2, -8, 7)])
def test_per_tensor_matches_torch(dtype, scale, zero_point, qmin, qmax):
    a = _values((40, 50))
    _check(lambda x: ember.fake_quantize_per_tensor_affine(x, scale, zero_point, qmin, qmax),
           lambda x: torch.fake_quantize_per_tensor_affine(x, scale, zero_point, qmin, qmax), *_pair(a, dtype))


def test_per_tensor_tensor_qparams_overload():
    a = _values((6, 7))
    for se, ze, st, zt in [(ember.tensor(0.05), ember.tensor(3, dtype=ember.int32),
                            torch.tensor(0.05), torch.tensor(3, dtype=torch.int32)),
                           (ember.tensor([0.5], dtype=ember.float64), ember.tensor([1]),
                            torch.tensor([0.5], dtype=torch.float64), torch.tensor([1]))]:
        _check(lambda x, s=se, z=ze: ember.fake_quantize_per_tensor_affine(x, s, z, 0, 255),
               lambda x, s=st, z=zt: torch.fake_quantize_per_tensor_affine(x, s, z, 0, 255), *_pair(a, "float32"))


def test_tensor_qparams_take_a_zero_point_outside_the_range():
    # PyTorch checks zero_point against [quant_min, quant_max] only in the overload taking numbers
    a = [1.5, 40.0, -7.0]
    _check(lambda x: ember.fake_quantize_per_tensor_affine(x, ember.tensor(3.0), ember.tensor(300), -8, 7),
           lambda x: torch.fake_quantize_per_tensor_affine(x, torch.tensor(3.0), torch.tensor(300), -8, 7),
           *_pair(a, "float32"))
    with pytest.raises(RuntimeError, match="`zero_point` must be between `quant_min` and `quant_max`."):
        ember.fake_quantize_per_tensor_affine(ember.tensor(a), 3.0, 300, -8, 7)


def test_non_finite_and_huge_values_saturate_as_pytorch():
    a = [float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 3e9, -3e9, 2.6]
    _check(lambda x: ember.fake_quantize_per_tensor_affine(x, 0.5, 3, -10, 10),
           lambda x: torch.fake_quantize_per_tensor_affine(x, 0.5, 3, -10, 10), *_pair(a, "float32"))
    for zp in ([3], [3.5]):
        ze = ember.tensor(zp, dtype=ember.int32 if isinstance(zp[0], int) else ember.float32)
        zt = torch.tensor(zp, dtype=torch.int32 if isinstance(zp[0], int) else torch.float32)
        for dtype in ("float32", "float64"):
            _check(lambda x, z=ze: ember.fake_quantize_per_channel_affine(x, ember.tensor([0.5]), z, 0, -10, 10),
                   lambda x, z=zt: torch.fake_quantize_per_channel_affine(x, torch.tensor([0.5]), z, 0, -10, 10),
                   *_pair([a], dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 3])
@pytest.mark.parametrize("zp_dtype", ["int32", "float32", "float16"])
def test_per_channel_matches_torch(dtype, axis, zp_dtype):
    shape = (5, 4, 3, 6)
    a = _values(shape, seed=axis)
    r = np.random.default_rng(10 + axis)
    scale = (np.abs(r.normal(0, 0.05, shape[axis])) + 0.01).astype(np.float32)
    zp = r.integers(-5, 6, shape[axis]) + (0.5 if zp_dtype != "int32" else 0)
    se, st = ember.tensor(scale), torch.tensor(scale)
    ze, zt = ember.tensor(zp, dtype=getattr(ember, zp_dtype)), torch.tensor(zp, dtype=getattr(torch, zp_dtype))
    _check(lambda x: ember.fake_quantize_per_channel_affine(x, se, ze, axis, -20, 19),
           lambda x: torch.fake_quantize_per_channel_affine(x, st, zt, axis, -20, 19), *_pair(a, dtype))


def test_qat_weight_quantisation_pattern():
    """QAT's per-output-channel symmetric int8 weights: scale = amax / 127, zero points 0, inside a conv."""
    w = _values((8, 3, 3, 3), seed=3) * 0.1
    results = []
    for m in (ember, torch):
        weight = m.tensor(w, dtype=m.float32, requires_grad=True)
        scale = weight.detach().abs().amax(dim=(1, 2, 3)) / 127
        wq = m.fake_quantize_per_channel_affine(weight, scale, m.zeros(8, dtype=m.int32), 0, -128, 127)
        x = m.tensor(np.random.default_rng(1).normal(size=(2, 3, 6, 6)), dtype=m.float32)
        m.nn.functional.conv2d(x, wq, padding=1).square().sum().backward()
        results.append((wq.detach().numpy(), weight.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-5)


def _errors(m):
    x = m.ones(4, 6)
    s, z = m.tensor([0.1, 0.2, 0.3, 0.4]), m.zeros(4, dtype=m.int32)
    pc = m.fake_quantize_per_channel_affine
    return [
        lambda: m.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 2),
        lambda: m.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255),
        lambda: m.fake_quantize_per_tensor_affine(x.long(), 0.1, 0, 0, 255),
        lambda: m.fake_quantize_per_tensor_affine(x, m.tensor([0.1, 0.2]), m.tensor([0, 0], dtype=m.int32), 0, 9),
        lambda: m.fake_quantize_per_tensor_affine(x, m.tensor(0.1, requires_grad=True), m.tensor(0), 0, 255),
        lambda: pc(x, s.double(), z, 0, -128, 127),
        lambda: pc(x, s, z.long(), 0, -128, 127),
        lambda: pc(x, s.view(2, 2), z.view(2, 2), 0, -128, 127),
        lambda: pc(x, s, z[:2], 0, -128, 127),
        lambda: pc(x, s, z, 1, -128, 127),
        lambda: pc(x, s, z, 0, 5, 2),
        lambda: pc(x, s, z + 200, 0, -128, 127),
        lambda: pc(x.long(), s, z, 0, -128, 127),
        lambda: pc(x, s, z, -2, -128, 127),
    ]


def test_errors_match_torch():
    for fe, ft in zip(_errors(ember), _errors(torch)):
        with pytest.raises(Exception) as et:
            ft()
        with pytest.raises(type(et.value)) as ee:
            fe()
        assert " ".join(str(ee.value).split()) == " ".join(str(et.value).split())
