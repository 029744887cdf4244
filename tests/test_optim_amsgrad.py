"""AMSGrad uses the running maximum of the second moment, not the current one: checked against PyTorch with
gradients that shrink (so the current moment falls below its maximum, where the two differ)."""

import numpy as np
import pytest
import torch

import ember

GRADIENTS = [[10.0, -5.0, 3.0, 0.0]] + [[0.5 ** k, -(0.3 ** k), 0.1, 2.0 * 0.6 ** k] for k in range(1, 12)]


def trajectory(lib, name: str, kwargs: dict) -> list:
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5, 0.0], dtype=lib.float64))
    opt = getattr(lib.optim, name)([p], lr=0.1, amsgrad=True, **kwargs)
    out = []
    for g in GRADIENTS:
        p.grad = lib.tensor(g, dtype=lib.float64)
        opt.step()
        state = opt.state[p]
        out.append((p.detach().numpy().copy(), state["max_exp_avg_sq"].numpy().copy(),
                    state["exp_avg_sq"].numpy().copy()))
    return out


@pytest.mark.parametrize("name,kwargs", [("Adam", {}), ("Adam", {"betas": (0.9, 0.8)}),
                                         ("Adam", {"betas": (0.5, 0.7), "weight_decay": 0.1, "maximize": True}),
                                         ("AdamW", {"betas": (0.9, 0.8), "weight_decay": 0.05}),
                                         ("Adam", {"betas": (0.9, 0.8), "foreach": False})])
def test_amsgrad_with_shrinking_gradients_matches_torch(name, kwargs):
    ours, theirs = trajectory(ember, name, kwargs), trajectory(torch, name, kwargs)
    assert (theirs[-1][1] > theirs[-1][2] * 1.001).any()  # the case that tells max and current moment apart
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for got, want in zip(a, b):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"step {step}")
