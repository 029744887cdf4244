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
