"""A plain number in ``state['step']``, as code written for PyTorch before 1.12 stores it (A3C's SharedAdam-style
shared optimizers): PyTorch's ASGD runs with it (its ``step_t += 1`` rebinds a local name, so each step schedules
``eta`` and ``mu`` from the number plus one and the state keeps the number; the foreach step refuses it with a
TypeError). Its other optimizers with a step count raise "API has changed": tests/test_optim_number_step.py."""

import numpy as np
import pytest
import torch

import ember

OPTIONS = [{}, {"foreach": False}, {"t0": 1.0, "weight_decay": 0.1}, {"t0": 2.0, "lambd": 0.1, "maximize": True},
           {"t0": 0.0, "foreach": False, "alpha": 0.5}]


def _run_asgd(lib, options, number, steps=4):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.randn(5, dtype=lib.float64))
    opt = lib.optim.ASGD([w], lr=0.1, **options)
    w.grad = lib.ones(5, dtype=lib.float64)
    opt.step()
    opt.state[w]["step"] = number
    trace = []
    for i in range(steps):
        w.grad = w.detach() * 2 + i
        opt.step()
        state = opt.state[w]
        trace.append((w.tolist(), state["ax"].tolist(), state["eta"].item(), state["mu"].item(), state["step"]))
    return trace


@pytest.mark.parametrize("number", [0, 3, 5.0])
@pytest.mark.parametrize("options", OPTIONS)
def test_asgd_runs_with_a_number_step_as_pytorch(options, number):
    got, want = _run_asgd(ember, options, number), _run_asgd(torch, options, number)
    for (w, ax, eta, mu, step), (tw, tax, teta, tmu, tstep) in zip(got, want):
        np.testing.assert_allclose(w, tw, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(ax, tax, rtol=1e-13, atol=1e-15)
        assert (eta, mu) == (teta, tmu)
        assert type(step) is type(tstep) and step == tstep == number


def test_asgd_foreach_refuses_a_number_step_as_pytorch():
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.randn(3))
        opt = lib.optim.ASGD([w], lr=0.1, foreach=True)
        w.grad = lib.ones(3)
        opt.step()
        opt.state[w]["step"] = 3
        with pytest.raises(TypeError, match=r"_group_tensors_by_device_and_dtype\(\): incompatible function arguments"):
            opt.step()

