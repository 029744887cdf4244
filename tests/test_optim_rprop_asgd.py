"""Rprop and ASGD against torch.optim: trajectories (gradients that flip sign and vanish), float32 and float64,
options, groups, state_dict layout and round trip, argument errors."""

import numpy as np
import pytest
import torch
from test_data_samplers import raises_like_torch
from test_optim import (
    arrays,
    assert_round_trip_continues,
    assert_same_state_dict,
    assert_same_trajectory,
    batches,
    loss_fn,
    make_opt,
    snapshot,
    trajectory,
)

import ember

CASES = [
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5)}),
    ("Rprop", {"lr": 0.05, "step_sizes": (1e-2, 0.08)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
    ("Rprop", {"lr": 0.05, "foreach": False}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.1, "lambd": 0.1, "alpha": 0.5, "t0": 2}),
    ("ASGD", {"lr": 0.1, "t0": 0, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 3, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {"lr": 0.1, "t0": 1, "lambd": 0.5, "foreach": False}),
]
NAMES = ["Rprop", "ASGD"]
GROUPS = {  # also run through tests/test_optim_more.py's parameter-group and implementation-switch tests
    "Rprop": [{"params": [0], "etas": (0.2, 1.3)}, {"params": [1, 2], "lr": 0.02, "step_sizes": (0, 0.05)}],
    "ASGD": [{"params": [0, 2], "t0": 2}, {"params": [1], "lr": 0.05, "weight_decay": 0.1, "maximize": True}],
}
# gradients that flip sign, vanish (0) and shrink, element by element: Rprop's three cases and its clamp
SCALES = (1.0, -2.0, 0.0, 0.5, -0.5, 3.0, 0.0, -1e-3, 2.0, 2.0)


def scripted(m, name, kwargs, dtype):
    """Steps on set gradients: random signs times SCALES, with some elements exactly zero at every step."""
    rng = np.random.default_rng(7)
    params = [m.tensor(a, requires_grad=True) for a in arrays(dtype=dtype)]
    opt = getattr(m.optim, name)(params, **kwargs)
    out = []
    for scale in SCALES:
        for p in params:
            g = rng.standard_normal(tuple(p.shape)) * scale
            g[rng.random(g.shape) < 0.2] = 0
            p.grad = m.tensor(g.astype(dtype))
        opt.step()
        out.append(snapshot(opt, params))
    return out


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    assert_same_trajectory(trajectory(ember, name, kwargs), trajectory(torch, name, kwargs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_sign_flips_and_zero_gradients_match_torch(name, kwargs, dtype):
    e, t = scripted(ember, name, kwargs, dtype), scripted(torch, name, kwargs, dtype)
    assert_same_trajectory(e, t, atol=1e-6, rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert e[-1][0][0].dtype == dtype


def test_rprop_skips_the_step_after_a_sign_change():
    """A sign change shrinks the step size and leaves the element where it is, remembering a 0 gradient."""
    p = ember.tensor([1.0, 1.0, 1.0], requires_grad=True)
    opt = ember.optim.Rprop([p], lr=0.1)
    for g in ([1.0, 1.0, 1.0], [1.0, -1.0, 0.0]):
        p.grad = ember.tensor(g)
        opt.step()
    assert p.tolist() == pytest.approx([1.0 - 0.1 - 0.12, 0.9, 0.9])
    assert opt.state[p]["step_size"].tolist() == pytest.approx([0.12, 0.05, 0.1])
    assert opt.state[p]["prev"].tolist() == [1.0, 0.0, 0.0]


def test_asgd_averages_from_t0():
    """ax copies the parameter while mu is 1 (through step t0 + 2), then is its running mean."""
    p = ember.tensor([0.0], requires_grad=True)
    opt = ember.optim.ASGD([p], lr=1.0, lambd=0.0, t0=2)
    values = []
    for _ in range(5):
        p.grad = ember.tensor([-1.0])
        opt.step()
        values.append(p.item())
    assert values == [1.0, 2.0, 3.0, 4.0, 5.0]
    # mu after step t is 1 / max(1, t - t0): 1 through step 4 (ax = theta = 4), 1/2 at step 5: ax = 4 + (5 - 4) / 2
    assert opt.state[p]["ax"].item() == pytest.approx(4.5)
    assert opt.state[p]["mu"].item() == pytest.approx(1 / 3)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_and_defaults_match_torch(name):
    dicts, defaults = {}, {}
    for m in (ember, torch):
        params = [m.tensor(a, requires_grad=True) for a in arrays()]
        opt = make_opt(m, name, params, {}, GROUPS[name])
        for x, y in batches()[:2]:
            opt.zero_grad()
            loss_fn(m, params, x, y).backward()
            opt.step()
        dicts[m] = opt.state_dict()
        defaults[m] = getattr(m.optim, name)([m.zeros(1, requires_grad=True)]).defaults
    assert defaults[ember] == defaults[torch]
    assert_same_state_dict(dicts[ember], dicts[torch])
    for i, state in dicts[torch]["state"].items():  # 0-d scalars keep PyTorch's dtype (float32)
        for key, value in state.items():
            assert dicts[ember]["state"][i][key].dtype == getattr(ember, str(value.dtype)[6:])


@pytest.mark.parametrize("name,kwargs", [("Rprop", {"lr": 0.05}), ("ASGD", {"lr": 0.1, "t0": 2})])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    assert_round_trip_continues(name, kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_complex_parameters_step_as_pytorch(name):
    """A complex parameter steps as its real and imaginary parts, each a real element (PyTorch's view_as_real)."""
    rng = np.random.default_rng(3)
    values = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    grads = [(rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64) for _ in range(4)]
    out = {}
    for m in (ember, torch):
        p = m.tensor(values, requires_grad=True)
        opt = getattr(m.optim, name)([p], lr=0.1)
        for g in grads:
            p.grad = m.tensor(g)
            opt.step()
        out[m] = p.detach().numpy()
    np.testing.assert_allclose(out[ember], out[torch], atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda m: m.optim.Rprop([m.zeros(1, requires_grad=True)], lr=-1),
    lambda m: m.optim.Rprop([m.zeros(1, requires_grad=True)], etas=(1.0, 1.2)),
    lambda m: m.optim.Rprop([m.zeros(1, requires_grad=True)], etas=(0.0, 1.2)),
    lambda m: m.optim.Rprop([m.zeros(1, requires_grad=True)], etas=(0.5, 1.0)),
    lambda m: m.optim.ASGD([m.zeros(1, requires_grad=True)], lr=-0.1),
    lambda m: m.optim.ASGD([m.zeros(1, requires_grad=True)], weight_decay=-1),
    lambda m: m.optim.ASGD([]),
])
def test_bad_arguments_raise_like_torch(make):
    ember_message, torch_message = raises_like_torch(make)
    assert ember_message == torch_message

