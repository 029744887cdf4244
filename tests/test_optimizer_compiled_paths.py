"""The optimizers' scaled update ``y += alpha * x`` (``optimizer.add_scaled``) runs the compiled kernel wherever its
dispatch takes it (float32/float64 arrays of one shape, contiguous, past the size threshold) and never on the NumPy
run, with the same bits either way: a slip in the dispatch's conditions that sends every update to the NumPy path
leaves every value right and only shows here."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember._kernels import optim as k_optim
from ember._kernels import policy

pytestmark = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")

# each optimizer whose step adds a scaled array in place: SGD's parameter (and momentum buffer), Adagrad's, Adamax's
# and RMSprop's parameter or averages
_OPTIMIZERS = [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1}),
               ("Adagrad", {"lr": 0.1}), ("Adamax", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "centered": True})]


def _steps(name, kwargs, dtype, calls):
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((40, 30)).astype(dtype), rng.standard_normal(7).astype(dtype)]
    params = [ember.tensor(v, requires_grad=True) for v in values]
    opt = getattr(ember.optim, name)(params, **kwargs)
    for _ in range(3):
        for p in params:
            p.grad = ember.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
        opt.step()
    return [p.detach().numpy().copy() for p in params], len(calls)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, kwargs", _OPTIMIZERS)
def test_scaled_updates_run_the_compiled_kernel_with_numpys_bits(monkeypatch, name, kwargs, dtype):
    calls: list[int] = []
    kernel = k_optim.add_scaled
    monkeypatch.setattr(k_optim, "add_scaled", lambda y, x, alpha: calls.append(y.size) or kernel(y, x, alpha))
    with policy.override(compiled=True, min_compiled_elements=0):
        fast, compiled_calls = _steps(name, kwargs, dtype, calls)
    calls.clear()
    with policy.override(compiled=False, min_compiled_elements=0):
        ref, numpy_calls = _steps(name, kwargs, dtype, calls)
    assert compiled_calls > 0 and numpy_calls == 0
    for a, r in zip(fast, ref):
        np.testing.assert_array_equal(a, r)


def test_a_half_precision_update_takes_the_numpy_path(monkeypatch):
    """float16 has no compiled kernel: its update is NumPy's whatever the policy."""
    calls: list[int] = []
    kernel = k_optim.add_scaled
    monkeypatch.setattr(k_optim, "add_scaled", lambda y, x, alpha: calls.append(y.size) or kernel(y, x, alpha))
    with policy.override(compiled=True, min_compiled_elements=0):
        _steps("SGD", {"lr": 0.1}, np.float16, calls)
    assert not calls


# Adam's and AdamW's update of a parameter as one compiled pass (``_kernels.optim.adam``); amsgrad, maximize and an
# L2 weight decay keep the NumPy passes
_ADAMS = [("Adam", {"lr": 0.01}, True), ("AdamW", {"lr": 0.01}, True), ("AdamW", {"lr": 0.01, "weight_decay": 0.0}, True),
          ("Adam", {"lr": 1.0, "betas": (0.8, 0.9)}, True), ("Adam", {"lr": 0.01, "weight_decay": 0.1}, False),
          ("Adam", {"lr": 0.01, "amsgrad": True}, False), ("AdamW", {"lr": 0.01, "maximize": True}, False)]


def _adam_steps(name, kwargs, dtype, fw=ember, shapes=((40, 30), (7,)), steps=3):
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    params = [fw.tensor(v, requires_grad=True) for v in values]
    opt = getattr(fw.optim, name)(params, **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = fw.tensor(g)
        opt.step()
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, kwargs, one_pass", _ADAMS)
def test_adam_updates_run_the_compiled_pass_with_numpys_bits_and_torchs_values(monkeypatch, name, kwargs, one_pass,
                                                                               dtype):
    import torch

    calls: list[int] = []
    kernel = k_optim.adam
    monkeypatch.setattr(k_optim, "adam", lambda p, *rest: calls.append(p.size) or kernel(p, *rest))
    with policy.override(compiled=True, min_compiled_elements=0):
        fast = _adam_steps(name, kwargs, dtype)
    assert calls == ([1200, 7] * 3 if one_pass else [])
    calls.clear()
    with policy.override(compiled=False, min_compiled_elements=0):
        ref = _adam_steps(name, kwargs, dtype)
    assert calls == []
    want = _adam_steps(name, kwargs, dtype, fw=torch)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    for a, r, t in zip(fast, ref, want):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, r)
        np.testing.assert_allclose(a, t, **tol)


def test_adam_compiled_pass_below_the_threshold_and_split_over_threads(monkeypatch, threads):
    """A parameter under ``min_compiled_elements`` keeps the NumPy passes (numba not loaded for a tiny model); one of
    ``min_elementwise_elements`` or more is cut into chunks of elements over ember's threads: the same bits."""
    calls: list[int] = []
    kernel = k_optim.adam
    monkeypatch.setattr(k_optim, "adam", lambda p, *rest: calls.append(p.size) or kernel(p, *rest))
    with policy.override(compiled=True, min_compiled_elements=100):
        _adam_steps("AdamW", {"lr": 0.01}, np.float32, steps=1)
    assert calls == [1200]  # the (7,) parameter under 100 elements: NumPy's passes
    calls.clear()
    ember.set_num_threads(2)
    with policy.override(compiled=True, min_compiled_elements=0, min_elementwise_elements=1 << 10):
        split = _adam_steps("AdamW", {"lr": 0.01}, np.float32, shapes=((64, 50),), steps=2)
    assert sorted(calls) == [1600] * 4  # two chunks of 1,600 a step
    with policy.override(compiled=False):
        ref = _adam_steps("AdamW", {"lr": 0.01}, np.float32, shapes=((64, 50),), steps=2)
    np.testing.assert_array_equal(split[0], ref[0])
