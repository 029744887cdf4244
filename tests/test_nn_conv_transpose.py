"""Transposed convolutions (1-, 2-, 3-d) and Conv3d against PyTorch: outputs and the input, weight and bias
gradients in float32 and float64, every argument, the output_size= of forward, parameters and errors."""

import numpy as np
import pytest
import torch
from nn_oracle import batch_last, compare_module
from oracle import check

import ember
import ember.nn as nn
from ember._kernels import policy
from ember.nn._ops import conv, winograd

TOL = {np.float32: dict(atol=2e-4, rtol=1e-4), np.float64: dict(atol=1e-10, rtol=1e-10)}


def _fn(name, **kwargs):
    return lambda m, x, w, b: getattr(m.nn.functional, name)(x, w, b, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x,w,kwargs", [
    ((2, 4, 5, 6), (4, 3, 3, 3), {}),
    ((2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2}),
    ((2, 4, 5, 6), (4, 3, 4, 4), {"stride": 2, "padding": 1}),                  # a DCGAN up-sampling layer
    ((2, 4, 5, 6), (4, 3, 3, 2), {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2)}),
    ((2, 4, 5, 6), (4, 2, 3, 3), {"groups": 2, "stride": 2, "padding": 2}),
    ((2, 6, 4, 4), (6, 1, 3, 3), {"groups": 3, "dilation": 2}),
    ((2, 4, 5, 6), (4, 3, 3, 3), {"dilation": 3, "output_padding": 2}),        # output_padding < dilation only
    ((2, 4, 5, 6), (4, 3, 3, 3), {"padding": 2}),                              # stride 1, padding reaches the kernel
    ((2, 4, 5, 6), (4, 3, 2, 2), {"padding": 3, "stride": 3}),                 # padding beyond the kernel
    ((1, 3, 1, 1), (3, 2, 4, 4), {}),                                          # a 1x1 latent to 4x4 (DCGAN input)
    ((4, 5, 5), (4, 3, 3, 3), {"stride": 2, "output_padding": 1}),             # unbatched
])
def test_conv_transpose2d(dtype, x, w, kwargs):
    out = (w[1] * kwargs.get("groups", 1),)
    check(_fn("conv_transpose2d", **kwargs), [x, w, out], dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose2d_stride1_3x3_takes_winograd(monkeypatch, dtype):
    """Large enough for Winograd: forward (stride-1 input gradient) and backward (the convolution of g)."""
    calls = []
    for name in ("conv3x3_rows", "weight_grad3x3_rows"):  # (what conv3x3 and weight_grad3x3 run, and the input
        fn = getattr(winograd, name)                     # gradient's split with the weight gradient)
        monkeypatch.setattr(winograd, name, lambda *a, _fn=fn, _name=name, **kw: calls.append(_name) or _fn(*a, **kw))
    check(_fn("conv_transpose2d", padding=1), [(32, 16, 6, 6), (16, 16, 3, 3), (16,)], dtype=dtype, **TOL[dtype])
    assert calls == ["conv3x3_rows", "conv3x3_rows", "weight_grad3x3_rows"]


def test_conv_transpose_col2im_reference(monkeypatch):
    """The stride-1 forward pinned to the col2im path gives the same values."""
    monkeypatch.setattr(policy, "transposed_as_conv", False)
    check(_fn("conv_transpose2d", padding=1, output_padding=1, dilation=2), [(2, 3, 5, 4), (3, 4, 3, 3), (4,)],
          dtype=np.float64, **TOL[np.float64])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{}, {"stride": 3, "padding": 1, "output_padding": 2}, {"groups": 2, "dilation": 2},
                                    {"padding": 2}])
def test_conv_transpose1d(dtype, kwargs):
    w = (4, 3, 3)
    check(_fn("conv_transpose1d", **kwargs), [(3, 4, 7), w, (3 * kwargs.get("groups", 1),)], dtype=dtype,
          **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                    {"stride": (1, 2, 3), "groups": 2, "dilation": (2, 1, 1)}])
def test_conv_transpose3d(dtype, kwargs):
    check(_fn("conv_transpose3d", **kwargs), [(2, 4, 3, 4, 5), (4, 2, 3, 2, 3), (2 * kwargs.get("groups", 1),)],
          dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "padding": 1}, {"padding": (0, 1, 2), "dilation": (1, 2, 1)},
                                    {"groups": 2}, {"padding": "same"}])
def test_conv3d(dtype, kwargs):
    o = 4
    w = (o, 4 // kwargs.get("groups", 1), 3, 2, 3)
    check(_fn("conv3d", **kwargs), [(2, 4, 5, 6, 5), w, (o,)], dtype=dtype, **TOL[dtype])


def test_without_bias_and_batch_last_input():
    """A batch-last input (the layout ember's own convolutions produce) and no bias."""
    x = np.random.default_rng(0).standard_normal((3, 4, 5, 5)).astype(np.float32)
    check(lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2), [batch_last(x), (4, 2, 3, 3)])


@pytest.mark.parametrize("cls,nd,kwargs", [
    ("ConvTranspose2d", 2, {"stride": 2, "padding": 1}),
    ("ConvTranspose2d", 2, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "bias": False,
                            "dilation": 2}),
    ("ConvTranspose1d", 1, {"stride": 2}),
    ("ConvTranspose3d", 3, {"stride": (2, 1, 2), "padding": 1}),
    ("Conv3d", 3, {"stride": 2, "padding": 1}),
    ("Conv3d", 3, {"padding": 1, "padding_mode": "circular"}),
])
def test_modules(cls, nd, kwargs):
    em, tm = getattr(nn, cls)(4, 6, 3, **kwargs), getattr(torch.nn, cls)(4, 6, 3, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert repr(em) == repr(tm)
    for name in ("stride", "padding", "dilation", "output_padding", "groups", "transposed", "padding_mode"):
        assert getattr(em, name) == getattr(tm, name), name
    x = np.random.default_rng(0).standard_normal((2, 4, *(5,) * nd)).astype(np.float32)
    compare_module(em, tm, x, atol=1e-4)


@pytest.mark.parametrize("cls", ["ConvTranspose2d", "Conv3d", "ConvTranspose1d"])
def test_default_init_is_pytorchs(cls):
    """kaiming_uniform_(a=sqrt(5)): weight within +-1/sqrt(fan_in), bias too; fan_in from the weight's dim 1."""
    m = getattr(nn, cls)(8, 6, 3, groups=2)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    fan_in = w.shape[1] * int(np.prod(w.shape[2:]))
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform with a=sqrt(5): sqrt(6 / ((1 + 5) fan_in))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound and np.abs(b).std() > 0
    assert w.shape == tuple(getattr(torch.nn, cls)(8, 6, 3, groups=2).weight.shape)


@pytest.mark.parametrize("size", [[11, 12], [2, 3, 11, 12], torch.Size([12, 11])])
def test_output_size(size):
    em, tm = nn.ConvTranspose2d(4, 3, 3, stride=2), torch.nn.ConvTranspose2d(4, 3, 3, stride=2)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    eo, to = em(ember.tensor(x), output_size=list(size)), tm(torch.tensor(x), output_size=size)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-5)


def test_errors():
    x, w = ember.randn(2, 4, 5, 5), ember.randn(4, 3, 3, 3)
    F = nn.functional
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(x, w, output_padding=1)
    with pytest.raises(RuntimeError, match="expected input.*to have 4 channels, but got 5"):
        F.conv_transpose2d(ember.randn(2, 5, 5, 5), w)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv_transpose2d(x, w, padding=4)
    with pytest.raises(RuntimeError, match="divisible by 3 at dimension 0"):
        F.conv_transpose2d(x, w, groups=3)
    with pytest.raises(RuntimeError, match="Expected 3D .* or 4D"):
        F.conv_transpose2d(ember.randn(5, 5), w)
    with pytest.raises(TypeError, match="padding"):
        F.conv_transpose2d(x, w, padding="same")
    with pytest.raises(RuntimeError, match="non-positive stride"):
        F.conv_transpose2d(x, w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding"):
        F.conv_transpose2d(x, w, padding=-1)
    with pytest.raises(RuntimeError, match="bias to be 1-dimensional with 3 elements"):
        F.conv_transpose2d(x, w, ember.randn(4))
    with pytest.raises(RuntimeError):
        F.conv_transpose2d(x.double(), w)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.ConvTranspose2d(4, 3, 3, groups=2)
    m = nn.ConvTranspose2d(4, 3, 3, stride=2)
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        m(x, output_size=[1, 11, 12])
    with pytest.raises(ValueError, match=r"valid sizes range from \[11, 11\] to \[12, 12\]"):
        m(x, output_size=[13, 12])
    with pytest.raises(RuntimeError, match="Expected 4D .* or 5D"):
        nn.Conv3d(4, 3, 3)(ember.randn(4, 5, 5))


def test_input_modified_in_place_after_use_is_an_error():
    x = ember.randn(2, 4, 3, 3, requires_grad=True)
    h = x * 1
    out = nn.functional.conv_transpose2d(h, ember.randn(4, 2, 3, 3, requires_grad=True))
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("fn,x,w,kwargs", [
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 4, 4), {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), {"stride": 2, "groups": 2, "output_padding": 1}),
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 3), {"stride": 2, "padding": 1}),
    ("conv3d", (2, 4, 4, 5, 4), (6, 2, 3, 2, 3), {"stride": (2, 1, 1), "groups": 2}),
])
def test_wide_gemm_layout(monkeypatch, fn, x, w, kwargs):
    """GEMMs too wide for one OpenBLAS thread take the flat column layout (one GEMM instead of one per output
    row; the convolution's per-sample GEMMs run whole): forced here on small shapes; values and gradients as
    PyTorch's."""

    monkeypatch.setattr(policy, "blas_threaded_mnk", 1)
    monkeypatch.setattr(policy, "blas_threads", 2)  # (OpenBLAS on one thread never blocks a GEMM)
    monkeypatch.setattr(policy, "one_blas_thread", False)  # (nor does a convolution that sets it to one)
    layouts = []
    stacked = conv._stacked
    monkeypatch.setattr(conv, "_stacked", lambda *a: layouts.append(stacked(*a)) or layouts[-1])
    out = (w[0] if fn.startswith("conv2") or fn.startswith("conv3") else w[1] * kwargs.get("groups", 1),)
    check(_fn(fn, **kwargs), [x, w, out], dtype=np.float64, **TOL[np.float64])
    if fn.startswith("conv_transpose"):  # (a convolution computes in (N, C, *spatial) layout, with no row stacks)
        assert layouts and set(layouts) == {0}
