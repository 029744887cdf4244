"""Adadelta, Adamax, NAdam, RAdam against torch.optim: trajectories step by step, options, groups, state_dict."""

import numpy as np
import pytest
import torch
from test_data_samplers import raises_like_torch
from test_optim import (
    arrays,
    assert_same_state_dict,
    assert_same_trajectory,
    batches,
    loss_fn,
    make_opt,
    snapshot,
    train,
    trajectory,
)
from test_optim_rprop_asgd import GROUPS as RPROP_ASGD_GROUPS

import ember

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"rho": 1.0}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-4}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.99), "momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "maximize": True, "weight_decay": 0.05}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9)}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "maximize": True}),
]
NAMES = ["Adadelta", "Adamax", "NAdam", "RAdam"]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    assert_same_trajectory(trajectory(ember, name, kwargs), trajectory(torch, name, kwargs))


def long_trajectory(m, name, kwargs, dtype=np.float32, rounds=3):
    """The 6 batches ``rounds`` times over: 18 steps, enough for RAdam to switch its adaptive step on."""
    params = [m.tensor(a, requires_grad=True) for a in arrays(dtype=dtype)]
    opt = getattr(m.optim, name)(params, **kwargs)
    out = []
    for batch in batches(dtype=dtype) * rounds:
        train(m, opt, params, [batch])
        out.append(snapshot(opt, params))
    return out


@pytest.mark.parametrize("name,kwargs", [("RAdam", {"lr": 0.01}), ("RAdam", {"lr": 0.01, "betas": (0.9, 0.99)}),
                                         ("NAdam", {"lr": 0.01}), ("Adadelta", {}), ("Adamax", {"lr": 0.01})])
def test_long_trajectory_matches_torch(name, kwargs):
    assert_same_trajectory(long_trajectory(ember, name, kwargs), long_trajectory(torch, name, kwargs),
                           atol=2e-6, rtol=2e-5)


@pytest.mark.parametrize("foreach", [None, False])  # the fast update and the reference single-tensor step
def test_radam_rectifies_only_past_five(foreach):
    """PyTorch rectifies RAdam's step only when rho_t > 5 (strictly): with this beta2, rho_t is exactly 5.0 at
    step 6, so that step must be the un-rectified momentum step, as torch's."""
    kwargs = {"lr": 0.05, "betas": (0.9, 0.8397685748659791), "foreach": foreach}  # rho_6 == 5.0 exactly
    assert_same_trajectory(trajectory(ember, "RAdam", kwargs), trajectory(torch, "RAdam", kwargs))


@pytest.mark.parametrize("name", NAMES)
def test_float64_trajectory(name):
    kwargs = {"lr": 0.05, "weight_decay": 0.01}
    e = long_trajectory(ember, name, kwargs, dtype=np.float64, rounds=2)
    assert_same_trajectory(e, long_trajectory(torch, name, kwargs, dtype=np.float64, rounds=2), atol=1e-12,
                           rtol=1e-10)
    assert e[-1][0][0].dtype == np.float64


GROUPS = {
    "Adadelta": [{"params": [0, 1], "rho": 0.5}, {"params": [2], "weight_decay": 0.2, "lr": 0.3}],
    "Adamax": [{"params": [0], "betas": (0.5, 0.9)}, {"params": [1, 2], "lr": 0.02, "maximize": True}],
    "NAdam": [{"params": [2, 0], "momentum_decay": 0.01}, {"params": [1], "decoupled_weight_decay": True,
                                                            "weight_decay": 0.1}],
    "RAdam": [{"params": [0], "betas": (0.8, 0.9)}, {"params": [1, 2], "lr": 0.001, "weight_decay": 0.1}],
}


@pytest.mark.parametrize("name", NAMES + list(RPROP_ASGD_GROUPS))
def test_param_groups_with_different_options(name):
    groups = {**GROUPS, **RPROP_ASGD_GROUPS}[name]
    e = trajectory(ember, name, {"lr": 0.01}, groups=groups)
    assert_same_trajectory(e, trajectory(torch, name, {"lr": 0.01}, groups=groups))


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_and_defaults_match_torch(name):
    dicts, groups = {}, {}
    for m in (ember, torch):
        params = [m.tensor(a, requires_grad=True) for a in arrays()]
        opt = make_opt(m, name, params, {}, GROUPS[name])
        loss_fn(m, params, *batches()[0]).backward()
        opt.step()
        dicts[m] = opt.state_dict()
        groups[m] = getattr(m.optim, name)([m.zeros(1, requires_grad=True)]).defaults
    assert groups[ember] == groups[torch]
    e, t = dicts[ember], dicts[torch]
    assert_same_state_dict(e, t)


@pytest.mark.parametrize("name,kwargs", [("Adadelta", {"weight_decay": 0.1}), ("Adamax", {"lr": 0.01}),
                                         ("NAdam", {"lr": 0.01}), ("RAdam", {"lr": 0.01})])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    full = long_trajectory(ember, name, kwargs, rounds=2)
    params = [ember.tensor(a, requires_grad=True) for a in arrays()]
    opt = getattr(ember.optim, name)(params, **kwargs)
    data = batches() * 2
    train(ember, opt, params, data[:4])
    saved = opt.state_dict()
    params2 = [ember.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    opt2 = getattr(ember.optim, name)(params2, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    rest = []
    for batch in data[4:]:
        train(ember, opt2, params2, [batch])
        rest.append(snapshot(opt2, params2))
    assert_same_trajectory(rest, full[4:], atol=0, rtol=0)


@pytest.mark.parametrize("name", NAMES)
def test_none_grad_skipped_and_closure_returns_loss(name):
    e = trajectory(ember, name, {"lr": 0.01}, closure=True)
    assert_same_trajectory(e, trajectory(torch, name, {"lr": 0.01}, closure=True))
    ember.diagnostics.enable()
    ember.diagnostics.set_warnings(True, "missing_grad")  # opt-in
    p, q = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    opt = getattr(ember.optim, name)([p, q], lr=0.1)
    (p * 2).sum().backward()
    try:
        with pytest.warns(ember.diagnostics.TrainingLoopWarning, match="received no gradient"):
            opt.step()
    finally:
        ember.diagnostics.set_warnings(False, "missing_grad")
    assert q.tolist() == [1.0, 1.0] and q not in opt.state
    assert p.tolist() != [1.0, 1.0]


@pytest.mark.parametrize("make", [
    lambda m: m.optim.Adadelta([m.zeros(1, requires_grad=True)], lr=-1),
    lambda m: m.optim.Adadelta([m.zeros(1, requires_grad=True)], rho=1.5),
    lambda m: m.optim.Adadelta([m.zeros(1, requires_grad=True)], eps=-1),
    lambda m: m.optim.Adadelta([m.zeros(1, requires_grad=True)], weight_decay=-1),
    lambda m: m.optim.Adamax([m.zeros(1, requires_grad=True)], betas=(1.0, 0.9)),
    lambda m: m.optim.Adamax([m.zeros(1, requires_grad=True)], betas=(0.9, -0.1)),
    lambda m: m.optim.Adamax([m.zeros(1, requires_grad=True)], eps=-1),
    lambda m: m.optim.NAdam([m.zeros(1, requires_grad=True)], momentum_decay=-1),
    lambda m: m.optim.NAdam([m.zeros(1, requires_grad=True)], betas=(0.9, 1.0)),
    lambda m: m.optim.RAdam([m.zeros(1, requires_grad=True)], lr=-0.1),
    lambda m: m.optim.RAdam([m.zeros(1, requires_grad=True)], weight_decay=-1),
    lambda m: m.optim.RAdam([m.zeros(1, requires_grad=True)], nesterov=True),
])
def test_bad_arguments_raise_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("name", NAMES + list(RPROP_ASGD_GROUPS))
def test_implementation_switches(name):
    cls = getattr(ember.optim, name)
    opt = cls([ember.zeros(1, requires_grad=True)], foreach=False, capturable=False)
    assert opt.param_groups[0]["foreach"] is False and opt.param_groups[0]["differentiable"] is False
    with pytest.raises(NotImplementedError):
        cls([ember.zeros(1, requires_grad=True)], differentiable=True)


def test_group_tensors_by_device_and_dtype_as_pytorch():
    """Optimizer._group_tensors_by_device_and_dtype (timm's foreach optimizers call it)."""
    results = []
    for m in (torch, ember):
        a = [m.ones(2), m.ones(2, dtype=m.float64), m.zeros(1)]
        b = [m.ones(2) * 2, None, m.zeros(1) + 3]
        for with_indices in (True, False):
            groups = m.optim.Optimizer._group_tensors_by_device_and_dtype([a, b], with_indices=with_indices)
            results.append({str(dtype)[6:]: ([[None if t is None else t.tolist() for t in lst] for lst in lists], idx)
                            for (device, dtype), (lists, idx) in groups.items()})
    assert results[:2] == results[2:]
