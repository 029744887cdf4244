"""LBFGS against torch.optim.LBFGS: the same closure-driven trajectory, with and without the strong-Wolfe line search."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close
from test_data_samplers import raises_like_torch

import ember


def least_squares(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((20, 5)).astype(dtype)
    b = rng.standard_normal((20, 1)).astype(dtype)
    w = rng.standard_normal((5, 1)).astype(dtype)
    return [w], lambda m, ps: ((m.tensor(a) @ ps[0] - m.tensor(b)) ** 2).mean()


def small_network(dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 3)).astype(dtype)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(dtype)
    shapes = [(3, 8), (8,), (8, 1), (1,)]
    init = [(rng.standard_normal(s) * 0.5).astype(dtype) for s in shapes]

    def loss(m, ps):
        w1, b1, w2, b2 = ps
        return (((m.tensor(x) @ w1 + b1).tanh() @ w2 + b2 - m.tensor(y)) ** 2).mean()

    return init, loss


def _closure(m, opt, ps, loss_fn):
    """The closure LBFGS's step calls: zero the gradients, compute the loss, backward."""
    def closure():
        opt.zero_grad()
        loss = loss_fn(m, ps)
        loss.backward()
        return loss

    return closure


def run(m, problem, kwargs, steps=4, dtype=np.float64):
    init, loss_fn = problem(dtype)
    params = [m.tensor(a, requires_grad=True) for a in init]
    opt = m.optim.LBFGS(params, **kwargs)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = loss_fn(m, params)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        out.append((loss.detach().item(), [p.detach().numpy().copy() for p in params], calls[0],
                    state["n_iter"], state["func_evals"], sorted(state)))
    return out


def assert_same_run(e, t, atol, rtol):
    for k, (se, st) in enumerate(zip(e, t)):
        assert se[0] == pytest.approx(st[0], rel=rtol, abs=atol), f"step {k}: loss"
        for i, (a, b) in enumerate(zip(se[1], st[1])):
            assert_close(a, b, atol, rtol, msg=f"step {k} param {i}")
        assert se[2:] == st[2:], f"step {k}: closure calls, n_iter, func_evals, state keys"


CASES = [
    {},
    {"lr": 0.5, "max_iter": 5},
    {"history_size": 3, "max_iter": 10},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 7, "max_eval": 9},
    {"lr": 0.8, "line_search_fn": "strong_wolfe", "tolerance_change": 1e-6},
]


@pytest.mark.parametrize("kwargs", CASES, ids=str)
@pytest.mark.parametrize("problem", [least_squares, small_network])
def test_trajectory_matches_torch(problem, kwargs):
    e = run(ember, problem, kwargs)
    t = run(torch, problem, kwargs)
    assert_same_run(e, t, atol=1e-9, rtol=1e-7)
    assert e[-1][0] < e[0][0]  # it does optimize


@pytest.mark.parametrize("kwargs", [{"max_iter": 4}, {"line_search_fn": "strong_wolfe", "max_iter": 4}], ids=str)
def test_float32_trajectory_close_to_torch(kwargs):
    e = run(ember, small_network, kwargs, steps=3, dtype=np.float32)
    t = run(torch, small_network, kwargs, steps=3, dtype=np.float32)
    assert_same_run(e, t, atol=1e-4, rtol=1e-3)
    assert e[-1][1][0].dtype == np.float32


def test_least_squares_converges_to_the_solution():
    init, loss_fn = least_squares()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((20, 5)), rng.standard_normal((20, 1))
    w = ember.tensor(init[0], requires_grad=True)
    opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe", max_iter=50, tolerance_change=1e-15,
                            tolerance_grad=1e-12)

    def closure():
        opt.zero_grad()
        loss = loss_fn(ember, [w])
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-6)


def test_state_dict_keys_match_torch_and_round_trip():
    dicts, params = {}, {}
    for m in (ember, torch):
        init, loss_fn = small_network()
        ps = [m.tensor(a, requires_grad=True) for a in init]
        opt = m.optim.LBFGS(ps, history_size=5, max_iter=6)
        closure = _closure(m, opt, ps, loss_fn)
        opt.step(closure)
        dicts[m], params[m] = opt.state_dict(), (ps, closure, opt)
    e, t = dicts[ember], dicts[torch]
    assert e["param_groups"] == t["param_groups"]
    assert sorted(e["state"]) == sorted(t["state"]) == [0]
    assert sorted(e["state"][0]) == sorted(t["state"][0])
    for key in ("d", "prev_flat_grad"):
        assert_close(e["state"][0][key], t["state"][0][key], atol=1e-9)
    assert len(e["state"][0]["old_dirs"]) == len(t["state"][0]["old_dirs"])
    # a fresh optimizer loaded from the dict continues exactly as the original
    ps, closure, opt = params[ember]
    init, loss_fn = small_network()
    ps2 = [ember.tensor(p.detach().numpy().copy(), requires_grad=True) for p in ps]
    opt2 = ember.optim.LBFGS(ps2, lr=5.0)
    opt2.load_state_dict(e)
    assert opt2.param_groups[0]["history_size"] == 5

    def closure2():
        opt2.zero_grad()
        loss = loss_fn(ember, ps2)
        loss.backward()
        return loss

    opt.step(closure)
    opt2.step(closure2)
    for a, b in zip(ps, ps2):
        assert_close(a, b, atol=0, rtol=0)


def test_no_training_loop_warnings(monkeypatch):
    # as in a fresh process: PyTorch's once-per-process warnings (float() of a loss that requires grad) not yet given
    monkeypatch.setattr(ember._warnings, "_warned_once", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(ember, small_network, {"line_search_fn": "strong_wolfe"}, steps=2)
        run(ember, small_network, {}, steps=2)


def test_step_returns_first_loss_and_stops_at_optimum():
    p = ember.zeros(3, requires_grad=True)
    opt = ember.optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert len(calls) == 1 and p.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("make", [
    lambda m: m.optim.LBFGS([{"params": [m.zeros(1, requires_grad=True)]},
                             {"params": [m.zeros(1, requires_grad=True)]}]),
    lambda m: m.optim.LBFGS([m.zeros(1, requires_grad=True)], lr=-1),
    lambda m: m.optim.LBFGS([m.zeros(1, requires_grad=True)], momentum=0.9),
])
def test_bad_arguments_raise_like_torch(make):
    raises_like_torch(make)


def test_step_needs_a_closure():
    ember.diagnostics.enable()
    w = ember.zeros(1, requires_grad=True)
    opt = ember.optim.LBFGS([w])
    (w * 2).sum()  # a forward whose backward is missing: the diagnostics report it before the TypeError
    with pytest.raises(TypeError), pytest.warns(ember.diagnostics.TrainingLoopWarning, match="no gradient"):
        opt.step()
    with pytest.raises(TypeError):
        torch.optim.LBFGS([torch.zeros(1, requires_grad=True)]).step()


def test_unknown_line_search_is_refused():
    with pytest.raises(ValueError, match="strong_wolfe"):
        ember.optim.LBFGS([ember.zeros(1, requires_grad=True)], line_search_fn="backtracking")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_state_entries_are_tensors_of_the_parameters_dtype_as_pytorchs(dtype):
    # (a float64 NumPy scalar passes isinstance(v, float): ember kept H_diag and ro's entries as NumPy scalars)
    kinds = []
    for m in (ember, torch):
        init, loss_fn = least_squares(dtype)
        ps = [m.tensor(a, requires_grad=True) for a in init]
        opt = m.optim.LBFGS(ps, max_iter=4)
        closure = _closure(m, opt, ps, loss_fn)
        opt.step(closure)
        state = opt.state[ps[0]]
        kinds.append({k: [(type(v).__name__, str(v.dtype).split(".")[-1]) if isinstance(v, m.Tensor) else type(v).__name__
                          for v in (state[k] if isinstance(state[k], list) else [state[k]])] for k in sorted(state)})
    assert kinds[0] == kinds[1]
