"""Optimizers and gradient clipping on complex parameters against PyTorch: each elementwise optimizer treats
real and imaginary parts as separate elements (PyTorch's view_as_real), and keeps its state complex."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
              ("Adam", {"lr": 0.1}), ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
              ("AdamW", {"lr": 0.1}), ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
              ("Adagrad", {"lr": 0.1}), ("Adadelta", {"lr": 1.0}), ("Adamax", {"lr": 0.1}), ("NAdam", {"lr": 0.1}),
              ("RAdam", {"lr": 0.1})]


def _run(m, name, kwargs, w0, b0, x0, clip, foreach=None):
    w = m.nn.Parameter(m.tensor(w0))
    b = m.nn.Parameter(m.tensor(b0))
    opt = getattr(m.optim, name)([w, b], foreach=foreach, **kwargs)
    norms = []
    for step in range(4):
        x = m.tensor(x0 * (step + 1))
        loss = ((x @ w).abs() ** 2).sum() + (b ** 2).sum() * (x @ w).real.sum()
        opt.zero_grad()
        loss.backward()
        if clip:
            norms.append(float(m.nn.utils.clip_grad_norm_([w, b], 1.0)))
        opt.step()
    return w, b, opt, norms


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
@pytest.mark.parametrize("clip", [False, True])
# foreach=False asks for the per-parameter reference loop, which treats complex parameters no differently: a group
# holding one takes the real-view update as PyTorch's single-tensor path does
@pytest.mark.parametrize("foreach", [None, False])
def test_complex_parameters_step_as_pytorch(name, kwargs, clip, foreach):
    rng = np.random.default_rng(0)
    w0 = (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)
    b0 = rng.standard_normal(2).astype(np.float32)
    x0 = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    ew, eb, eopt, enorms = _run(ember, name, kwargs, w0, b0, x0, clip, foreach)
    tw, tb, topt, tnorms = _run(torch, name, kwargs, w0, b0, x0, clip, foreach)
    assert_close(ew, tw, atol=1e-5)
    assert_close(eb, tb, atol=1e-5)
    np.testing.assert_allclose(enorms, tnorms, rtol=1e-5)
    for key, value in topt.state[tw].items():
        if isinstance(value, torch.Tensor) and value.dim():
            assert_close(eopt.state[ew][key], value, atol=1e-5, msg=key)  # complex state, as PyTorch's
