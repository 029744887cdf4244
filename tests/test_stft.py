"""torch.stft / torch.istft against PyTorch: values and gradients over the options (hop, window length, centring,
pad modes, normalisation, one- or two-sided, batched or not), the round trip, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import check

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

STFT = [dict(n_fft=16), dict(n_fft=16, hop_length=3, win_length=10, window=True),
        dict(n_fft=15, hop_length=5, center=False, window=True), dict(n_fft=8, pad_mode="constant", normalized=True),
        dict(n_fft=12, hop_length=4, onesided=False, window=True), dict(n_fft=10, pad_mode="replicate")]


def _call(m, fn, x, kw, **extra):
    kw = dict(kw)
    if kw.pop("window", False):
        kw["window"] = m.hann_window(kw.get("win_length", kw["n_fft"]), dtype=m.float64)
    return getattr(m, fn)(x, **kw, **extra)


@pytest.mark.parametrize("kw", STFT, ids=range(len(STFT)))
@pytest.mark.parametrize("shape", [(60,), (2, 60)])
def test_stft_values_and_grads(kw, shape):
    check(lambda m, x: _call(m, "stft", x, kw, return_complex=True), [shape], dtype=np.float64, atol=1e-10)
    check(lambda m, x: _call(m, "stft", x, kw, return_complex=False), [shape], dtype=np.float64, atol=1e-10)


def test_stft_of_complex_signal():
    check(lambda m, z: m.stft(z, 8, window=m.hann_window(8, dtype=m.float64), return_complex=True), [(2, 40)],
          dtype=np.complex128, atol=1e-10)


ISTFT = [dict(n_fft=16), dict(n_fft=16, hop_length=3, win_length=10, window=True), dict(n_fft=8, normalized=True),
         dict(n_fft=12, hop_length=4, onesided=False, window=True), dict(n_fft=16, hop_length=4, window=True,
                                                                            center=False, length=40)]


@pytest.mark.parametrize("kw", ISTFT, ids=range(len(ISTFT)))
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("length", [None, 55, 70])
def test_istft_values_and_grads(kw, batched, length):
    kw = dict(kw)
    if "length" not in kw and length is not None:
        kw["length"] = length
    stft_kw = {k: v for k, v in kw.items() if k != "length"}
    signal = np.random.default_rng(0).standard_normal((2, 60) if batched else (60,))
    spec = _call(torch, "stft", torch.tensor(signal), stft_kw, return_complex=True).numpy()
    try:
        _call(torch, "istft", torch.tensor(spec), kw)
    except RuntimeError as e:  # the window vanishes somewhere in the requested length: the same error
        assert "window overlap add min" in str(e)
        with pytest.raises(RuntimeError, match="window overlap add min"):
            _call(ember, "istft", ember.tensor(spec), kw)
        return
    check(lambda m, s: _call(m, "istft", s, kw), [spec], dtype=np.complex128, atol=1e-10)


def test_round_trip_recovers_the_signal():
    x = ember.randn(3, 80, dtype=ember.float64)
    w = ember.hann_window(20, dtype=ember.float64)
    y = ember.istft(ember.stft(x, 20, 5, window=w, return_complex=True), 20, 5, window=w, length=80)
    assert np.allclose(y.numpy(), x.numpy(), atol=1e-12)
    # the Tensor methods
    assert ember.randn(50).stft(8, return_complex=True).istft(8).shape == torch.randn(50).stft(8, return_complex=True).istft(8).shape


@pytest.mark.parametrize("call,message", [
    (lambda m: m.stft(m.zeros(100), 16), "stft requires the return_complex parameter be given for real inputs"),
    (lambda m: m.stft(m.zeros(100), 0, return_complex=True), "expected 0 < n_fft < 100, but got n_fft=0"),
    (lambda m: m.stft(m.zeros(100), 200, return_complex=True, center=False), "but got n_fft=200"),
    (lambda m: m.istft(m.zeros(9, 5), 16), "istft requires a complex-valued input tensor"),
    (lambda m: m.istft(m.zeros(9, 26, dtype=m.cfloat), 16, window=m.zeros(16)), "window overlap add min"),
    (lambda m: m.istft(m.zeros(7, 26, dtype=m.cfloat), 16), "match n_fft"),
], ids=["return_complex", "n_fft0", "n_fft-long", "istft-real", "nola", "freq"])
def test_errors_as_pytorch(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(torch)
    with pytest.raises(RuntimeError, match=message):
        call(ember)
