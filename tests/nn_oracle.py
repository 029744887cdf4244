"""Helpers for nn tests: run the same layer in ember and torch (same weights) and compare everything."""

from __future__ import annotations

import numpy as np
import torch
from oracle import assert_close

import ember


def ember_state(torch_module) -> dict:
    """torch state_dict -> ember tensors (same keys, same values)."""
    return {k: ember.tensor(v.detach().numpy().copy()) for k, v in torch_module.state_dict().items()}


def compare_module(em, tm, *arrays, train=True, atol=1e-5, rtol=1e-4, seed=1, steps=1):
    """Load tm's weights into em, run both on ``arrays`` (float arrays require grad), back-propagate the same
    random upstream gradient, and compare outputs, input grads, parameter grads and buffers."""
    em.load_state_dict(ember_state(tm))
    em.train(train)
    tm.train(train)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        e_in = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        eo, to = em(*e_in), tm(*t_in)
        assert_close(eo, to, atol, rtol, msg="output")
        g = rng.standard_normal(tuple(to.shape)).astype(to.detach().numpy().dtype)
        em.zero_grad()
        tm.zero_grad()
        eo.backward(ember.tensor(g))
        to.backward(torch.tensor(g))
        for i, (ei, ti) in enumerate(zip(e_in, t_in)):
            if ti.grad is not None:
                assert_close(ei.grad, ti.grad, atol, rtol, msg=f"grad of input {i}")
        t_params = dict(tm.named_parameters())
        for name, p in em.named_parameters():
            tg = t_params[name].grad
            if tg is None:
                assert p.grad is None, name
            else:
                assert_close(p.grad, tg, atol, rtol, msg=f"grad of {name}")
        t_bufs = dict(tm.named_buffers())
        for name, b in em.named_buffers():
            assert_close(b, t_bufs[name], atol, rtol, msg=f"buffer {name}")
    return eo, to


def batch_last(x: np.ndarray) -> np.ndarray:
    """x (N, C, *spatial) stored in memory as (C, *spatial, N): the layout ember's convolutions hand each other."""
    order = (*range(1, x.ndim), 0)
    return np.ascontiguousarray(x.transpose(order)).transpose(np.argsort(order))
