"""Window functions against PyTorch: every window, periodic and symmetric, lengths 0..9, dtypes, errors."""

from __future__ import annotations

import pytest
import torch
from oracle import assert_close

import ember

WINDOWS = {"hann_window": {}, "hamming_window": {"alpha": 0.5, "beta": 0.4}, "blackman_window": {},
           "bartlett_window": {}, "kaiser_window": {"beta": 5.0}}


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("n", list(range(10)) + [64])
def test_windows_as_pytorch(name, periodic, n):
    assert_close(getattr(ember, name)(n, periodic), getattr(torch, name)(n, periodic), atol=1e-6)
    if WINDOWS[name]:  # the window's own parameters, positional after periodic and by keyword
        assert_close(getattr(ember, name)(n, periodic, **WINDOWS[name]),
                     getattr(torch, name)(n, periodic, **WINDOWS[name]), atol=1e-6)
    assert_close(getattr(ember, name)(n, periodic, dtype=ember.float64),
                 getattr(torch, name)(n, periodic, dtype=torch.float64), atol=1e-12)


def test_defaults_and_flags():
    assert_close(ember.hann_window(7), torch.hann_window(7))  # periodic by default
    assert_close(ember.hamming_window(6, False, 0.6), torch.hamming_window(6, False, 0.6))
    assert_close(ember.kaiser_window(6, True, 3.0), torch.kaiser_window(6, True, 3.0))
    assert ember.hann_window(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_errors_as_pytorch(name):
    with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes"):
        getattr(ember, name)(4, dtype=ember.int64)
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
        getattr(ember, name)(-1)
