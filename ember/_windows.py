"""Window functions (``torch.hann_window`` & co.): tapers for spectral analysis (``stft``) and filters.

Each takes ``window_length`` and ``periodic`` (default True: the window of length ``window_length + 1``
without its last point, the form a periodic signal's DFT wants; False: the symmetric window), and
PyTorch's ``dtype`` (a floating dtype, default float32), ``layout``, ``device`` and ``requires_grad``.
Values are computed in float64 and rounded to ``dtype``.
"""

from __future__ import annotations

import math

from . import _dtype
from ._backend import xp
from ._creation import _finish
from ._tensor import Tensor


def _window(name: str, window_length: int, periodic: bool, dtype, requires_grad: bool, device, symmetric) -> Tensor:
    """``symmetric(n, N)`` (float64 positions n = 0..N-1 of an N-point symmetric window) made periodic if asked."""
    d = _dtype.get_default_dtype() if dtype is None else dtype
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {d}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        values = xp.ones(window_length)
    else:
        total = window_length + 1 if periodic else window_length
        values = symmetric(xp.arange(window_length, dtype=xp.float64), total)
    return _finish(values.astype(d.np), requires_grad, device)


def _cosine_sum(*coefficients: float):
    """The window sum_k (-1)^k a_k cos(2 pi k n / (N - 1))."""
    def window(n, total):
        phase = 2 * math.pi * n / (total - 1)
        return sum((-1) ** k * a * xp.cos(k * phase) for k, a in enumerate(coefficients))

    return window


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1))."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad, device, _cosine_sum(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Hamming window: alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device, _cosine_sum(alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device,
                   lambda n, total: 1 - xp.abs(2 * n / (total - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window: I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta) (I0: the modified Bessel function)."""
    def window(n, total):
        ratio = 2 * n / (total - 1) - 1
        return xp.i0(beta * xp.sqrt(xp.maximum(1 - ratio * ratio, 0))) / xp.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device, window)
