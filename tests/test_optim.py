"""ember.optim against torch.optim: the same tiny model, the same data, the same trajectory step by step."""

import tracemalloc
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

SHAPES = [(4, 3), (3,), (3, 2)]
STEPS = 6


def arrays(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def batches(seed=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((5, 4)).astype(dtype), rng.standard_normal((5, 2)).astype(dtype))
            for _ in range(STEPS)]


def loss_fn(m, params, x, y):
    w1, b1, w2 = params
    h = (m.tensor(x) @ w1 + b1).tanh() @ w2
    return ((h - m.tensor(y)) ** 2).mean()


def train(m, opt, params, data):
    for x, y in data:
        opt.zero_grad()
        loss_fn(m, params, x, y).backward()
        opt.step()


def snapshot(opt, params):
    """Parameter values and per-parameter state (as arrays), in parameter order."""
    values = [p.detach().numpy().copy() for p in params]
    state = [{k: (v.detach().numpy().copy() if hasattr(v, "detach") else v) for k, v in opt.state[p].items()}
             if p in opt.state else {} for p in params]
    return values, state


def make_opt(m, name, params, kwargs, groups):
    cls = getattr(m.optim, name)
    if groups is None:
        return cls(params, **kwargs)
    return cls([dict(g, params=[params[i] for i in g["params"]]) for g in groups], **kwargs)


def trajectory(m, name, kwargs, groups=None, dtype=np.float32, steps=STEPS, closure=False):
    params = [m.tensor(a, requires_grad=True) for a in arrays(dtype=dtype)]
    opt = make_opt(m, name, params, kwargs, groups)
    out = []
    for x, y in batches(dtype=dtype)[:steps]:
        def step_closure(x=x, y=y):
            opt.zero_grad()
            loss = loss_fn(m, params, x, y)
            loss.backward()
            return loss

        if closure:
            loss = opt.step(step_closure)
            out.append(loss.item())
        else:
            step_closure()
            opt.step()
        out.append(snapshot(opt, params))
    return out


def assert_same_trajectory(a, b, atol=1e-6, rtol=1e-5):
    assert len(a) == len(b)
    for k, (sa, sb) in enumerate(zip(a, b)):
        if isinstance(sa, float):
            assert sa == pytest.approx(sb, rel=1e-5), f"step {k}: closure loss"
            continue
        (va, sta), (vb, stb) = sa, sb
        for i, (x, y) in enumerate(zip(va, vb)):
            assert_close(x, y, atol, rtol, msg=f"step {k} param {i}")
        for i, (x, y) in enumerate(zip(sta, stb)):
            assert x.keys() == y.keys(), f"step {k} param {i}: state keys {sorted(x)} != {sorted(y)}"
            for key in x:
                assert_close(x[key], y[key], atol, rtol, msg=f"step {k} param {i} state {key}")


CASES = [
    ("SGD", {}),
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.01, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-6, "maximize": True}),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    assert_same_trajectory(trajectory(ember, name, kwargs), trajectory(torch, name, kwargs))


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}),
                                         ("RMSprop", {"centered": True}), ("Adagrad", {"lr": 0.1})])
def test_float64_trajectory(name, kwargs):
    e = trajectory(ember, name, kwargs, dtype=np.float64)
    assert_same_trajectory(e, trajectory(torch, name, kwargs, dtype=np.float64), atol=1e-12, rtol=1e-10)
    assert e[-1][0][0].dtype == np.float64


GROUPS = {
    "SGD": [{"params": [0, 1], "lr": 0.05, "momentum": 0.9}, {"params": [2], "weight_decay": 0.1}],
    "Adam": [{"params": [0], "betas": (0.5, 0.9)}, {"params": [1, 2], "lr": 0.02, "amsgrad": True}],
    "AdamW": [{"params": [2, 0], "weight_decay": 0.5}, {"params": [1], "lr": 0.001}],
    "RMSprop": [{"params": [0], "centered": True}, {"params": [1, 2], "momentum": 0.7, "lr": 0.001}],
    "Adagrad": [{"params": [0, 1], "lr_decay": 0.1}, {"params": [2], "weight_decay": 0.2, "eps": 1e-3}],
}


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_param_groups_with_different_options(name):
    kwargs = {"lr": 0.01}
    e = trajectory(ember, name, kwargs, groups=GROUPS[name])
    assert_same_trajectory(e, trajectory(torch, name, kwargs, groups=GROUPS[name]))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_param_groups_layout_matches_torch(name):
    groups = {}
    for m in (ember, torch):
        params = [m.tensor(a, requires_grad=True) for a in arrays()]
        opt = make_opt(m, name, params, {"lr": 0.5}, GROUPS[name])
        groups[m] = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
        assert [len(g["params"]) for g in opt.param_groups] == [len(g["params"]) for g in GROUPS[name]]
    assert groups[ember] == groups[torch]
    for m in (ember, torch):
        assert getattr(m.optim, name)([m.zeros(1, requires_grad=True)]).defaults == \
            getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults


OPTIMIZERS = sorted(n for n in dir(torch.optim) if isinstance(getattr(torch.optim, n), type)
                    and issubclass(getattr(torch.optim, n), torch.optim.Optimizer) and hasattr(ember.optim, n)
                    and n != "Optimizer")


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_every_optimizers_defaults_match_torch(name):
    # a script that relies on the default lr, eps, betas, ... must get PyTorch's numbers
    assert getattr(ember.optim, name)([ember.zeros(1, requires_grad=True)]).defaults == \
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults


# options other than the defaults, for each optimizer (the key order may not depend on them, and the state's
# may: momentum buffers, amsgrad's max, centered RMSprop's grad average)
KEY_ORDER_OPTIONS = {
    "SGD": {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}, "Adam": {"amsgrad": True},
    "AdamW": {"amsgrad": True, "weight_decay": 0.1}, "RMSprop": {"momentum": 0.9, "centered": True},
    "Adagrad": {"lr_decay": 0.1, "initial_accumulator_value": 0.5}, "Adadelta": {"weight_decay": 0.1},
    "Adamax": {"maximize": True}, "NAdam": {"decoupled_weight_decay": True, "weight_decay": 0.1},
    "RAdam": {"decoupled_weight_decay": True, "weight_decay": 0.1}, "ASGD": {"t0": 1.0},
    "Rprop": {"etas": (0.4, 1.1)}, "LBFGS": {"line_search_fn": "strong_wolfe", "history_size": 3},
    "SparseAdam": {"betas": (0.8, 0.9)},
}


@pytest.mark.parametrize("options", ["default", "other"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_state_dict_key_order_is_torchs(name, options):
    """A printed or diffed state_dict reads as PyTorch's: the keys of its groups (a group's own options first,
    then the defaults, ``params`` last) and of each parameter's state come in PyTorch's order."""
    kwargs = KEY_ORDER_OPTIONS[name] if options == "other" else {}
    orders = [_key_orders(m, name, kwargs) for m in (torch, ember)]
    assert orders[1] == orders[0]


def _key_orders(m, name, kwargs):
    """The key orders of framework ``m``'s optimizer ``name``: its state_dict's, its groups' before and after a
    step (the state_dict's and its own), its defaults', each parameter's state's."""
    if name == "SparseAdam":
        emb = m.nn.Embedding(3, 2, sparse=True)
        groups = [{"params": [emb.weight], "lr": 0.01}]

        def loss_of():
            return emb(m.tensor([0, 2])).sum()
    else:
        p, q = m.nn.Parameter(m.ones(3)), m.nn.Parameter(m.ones(2))
        groups = [{"params": [p]}, {"eps": 1e-6, "params": [q], "lr": 0.01}] if name != "LBFGS" else [p, q]

        def loss_of():
            return (p * p).sum() + (q * q).sum() * 2
    opt = getattr(m.optim, name)(groups, **kwargs)

    def closure():
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss
    before = [list(g) for g in opt.state_dict()["param_groups"]]
    opt.step(closure)
    sd = opt.state_dict()
    return (list(sd), before, [list(g) for g in sd["param_groups"]], [list(g) for g in opt.param_groups],
            list(opt.defaults), {i: list(s) for i, s in sd["state"].items()})


@pytest.mark.parametrize("name,kwargs", CASES[::3])
def test_closure_returns_loss_and_matches(name, kwargs):
    e = trajectory(ember, name, kwargs, closure=True)
    assert_same_trajectory(e, trajectory(torch, name, kwargs, closure=True))


def test_closure_runs_with_grad_enabled():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        assert loss.requires_grad
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
                                         ("Adam", {"lr": 0.1}), ("RMSprop", {"momentum": 0.5}),
                                         ("Adagrad", {})])
def test_none_grad_skipped(name, kwargs):
    """A parameter that gets no gradient is not updated and gets no state (Adagrad's is made at init)."""
    for m in (ember, torch):
        used = m.tensor([1.0, -2.0], requires_grad=True)
        unused = m.tensor([3.0, 4.0], requires_grad=True)
        opt = getattr(m.optim, name)([used, unused], **kwargs)
        init_state = {k: v.clone() for k, v in opt.state[unused].items()}
        for _ in range(3):
            opt.zero_grad()
            (used ** 2).sum().backward()
            opt.step()
        assert unused.grad is None
        np.testing.assert_array_equal(unused.detach().numpy(), [3.0, 4.0])
        assert opt.state[unused].keys() == init_state.keys()
        for k, v in init_state.items():
            np.testing.assert_array_equal(opt.state[unused][k].numpy(), v.numpy())
        assert not np.allclose(used.detach().numpy(), [1.0, -2.0])


def test_zero_grad_set_to_none_and_in_place():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None
    opt.zero_grad()  # no grads: nothing to do


def test_zero_grads_still_step_with_weight_decay_and_momentum():
    """With set_to_none=False a zero gradient is a real gradient: decay and momentum still move the parameter."""
    results = []
    for m in (ember, torch):
        p = m.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1)
        (p ** 3).sum().backward()
        opt.step()
        vals = []
        for _ in range(4):
            opt.zero_grad(set_to_none=False)
            opt.step()
            vals.append(p.detach().numpy().copy())
        results.append(vals)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                                         ("Adam", {"lr": 0.01, "amsgrad": True}), ("AdamW", {"lr": 0.01}),
                                         ("RMSprop", {"centered": True, "momentum": 0.5}),
                                         ("Adagrad", {"lr_decay": 0.1})])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    assert_round_trip_continues(name, kwargs)


def assert_round_trip_continues(name, kwargs):
    """An optimizer loaded from the state dict after 3 steps continues exactly as the one never saved."""
    full = trajectory(ember, name, kwargs)
    params = [ember.tensor(a, requires_grad=True) for a in arrays()]
    opt = getattr(ember.optim, name)(params, **kwargs)
    data = batches()
    train(ember, opt, params, data[:3])
    saved = opt.state_dict()
    params2 = [ember.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    opt2 = getattr(ember.optim, name)(params2, lr=123.0)  # options come from the state dict
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert opt2.param_groups[0]["params"][0] is params2[0]
    rest = []
    for batch in data[3:]:
        train(ember, opt2, params2, [batch])
        rest.append(snapshot(opt2, params2))
    assert_same_trajectory(rest, full[3:], atol=0, rtol=0)
    # as PyTorch's, the loaded optimizer updates the dict's own tensors (they had the parameter's dtype already)
    for key, value in saved["state"][0].items():
        assert value is opt2.state[params2[0]][key]


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                         ("RMSprop", {"centered": True, "momentum": 0.1}), ("Adagrad", {})])
def test_state_dict_layout_matches_torch(name, kwargs):
    dicts = {}
    for m in (ember, torch):
        params = [m.tensor(a, requires_grad=True) for a in arrays()]
        opt = make_opt(m, name, params, kwargs, GROUPS[name])
        loss_fn(m, params, *batches()[0]).backward()
        opt.step()
        dicts[m] = opt.state_dict()
    e, t = dicts[ember], dicts[torch]
    assert_same_state_dict(e, t)


def assert_same_state_dict(e, t):
    """ember's optimizer state_dict ``e`` has PyTorch's ``t`` layout: groups, state keys in order, values."""
    assert e["param_groups"] == t["param_groups"]
    assert e["state"].keys() == t["state"].keys()
    for i in t["state"]:
        assert list(e["state"][i]) == list(t["state"][i])
        for key, tv in t["state"][i].items():
            assert isinstance(e["state"][i][key], ember.Tensor)
            assert_close(e["state"][i][key], tv, msg=f"state {i} {key}")


def test_load_torch_state_dict_converted():
    """A torch state dict (tensors converted) loads into ember and continues torch's trajectory."""
    tp = [torch.tensor(a, requires_grad=True) for a in arrays()]
    topt = torch.optim.Adam(tp, lr=0.01)
    data = batches()
    train(torch, topt, tp, data[:2])
    sd = topt.state_dict()
    converted = {"state": {i: {k: ember.tensor(v.numpy()) for k, v in s.items()} for i, s in sd["state"].items()},
                 "param_groups": sd["param_groups"]}
    ep = [ember.tensor(p.detach().numpy().copy(), requires_grad=True) for p in tp]
    eopt = ember.optim.Adam(ep)
    eopt.load_state_dict(converted)
    for batch in data[2:]:
        train(torch, topt, tp, [batch])
        train(ember, eopt, ep, [batch])
        for a, b in zip(ep, tp):
            assert_close(a, b, atol=1e-6)


def test_load_state_dict_mismatch_errors():
    p = [ember.tensor(a, requires_grad=True) for a in arrays()]
    saved = ember.optim.SGD(p, lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        ember.optim.SGD([{"params": p[:1]}, {"params": p[1:]}]).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size"):
        ember.optim.SGD(p[:2]).load_state_dict(saved)


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop"])
def test_state_of_another_shape_is_refused_at_load(name):
    """A state dict from another model: PyTorch loads it and its next step() fails broadcasting the state against
    the gradient; ember refuses it at load_state_dict, naming the parameter and both shapes."""
    kwargs = {"momentum": 0.9} if name == "SGD" else {}

    def state_of(m, shape):
        w = m.ones(shape, requires_grad=True)
        opt = getattr(m.optim, name)([w], lr=0.1, **kwargs)
        (w * w).sum().backward()
        opt.step()
        return opt.state_dict()

    def load_and_step(m):
        w = m.ones(3, requires_grad=True)
        opt = getattr(m.optim, name)([w], lr=0.1, **kwargs)
        opt.load_state_dict(state_of(m, (2,)))
        (w * w).sum().backward()
        opt.step()

    with pytest.raises(RuntimeError):
        load_and_step(torch)
    with pytest.raises(RuntimeError, match=r"state '\w+' of parameter 0 has shape \[2\], but the parameter has "
                                           r"shape \[3\]"):
        load_and_step(ember)
    # LBFGS's state spans every parameter at once: its flat history loads into a model whose shapes differ
    w = ember.ones(2, 3, requires_grad=True)
    lbfgs = ember.optim.LBFGS([w])
    lbfgs.step(lambda: (w * w).sum().backward() or (w * w).sum())
    other = ember.ones(3, 2, requires_grad=True)
    again = ember.optim.LBFGS([other])
    again.load_state_dict(lbfgs.state_dict())
    assert again.state[other]["d"].shape == (6,)


def test_step_bumps_version_and_keeps_storage():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    data = p._data
    opt = ember.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    v = p._version
    opt.step()
    assert p._version == v + 1
    assert p._data is data
    assert p.grad.numpy().tolist() == [2.0, 4.0]  # the gradient is read, never written


def test_step_detects_saved_tensor_changed():
    """Stepping between forward and backward is caught, as in torch (the version counter moved)."""
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    loss = (p * p).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_adam_step_allocates_no_parameter_sized_temporaries():
    n = 1_000_000
    p = ember.zeros(n, requires_grad=True)
    p.grad = ember.ones(n)
    opt = ember.optim.Adam([p], lr=1e-3, weight_decay=0.1, maximize=True, amsgrad=True)
    opt.step()  # allocates the state and the scratch buffers
    tracemalloc.start()
    opt.step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < n * 4 // 4, f"Adam step allocated {peak} bytes for a {n}-element parameter"


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_validation_errors_match_torch(name):
    for m in (ember, torch):
        cls = getattr(m.optim, name)
        with pytest.raises(ValueError, match=r"^Invalid learning rate: -0.1$"):
            cls([m.zeros(2, requires_grad=True)], lr=-0.1)
        with pytest.raises(ValueError, match=r"^optimizer got an empty parameter list$"):
            cls([])
        with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got torch.FloatTensor$"):
            cls(m.zeros(2, requires_grad=True))
        with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got torch.DoubleTensor$"):
            cls(m.nn.Parameter(m.zeros(2, dtype=m.float64)))


BAD = [
    ("SGD", {"momentum": -0.5}, ValueError, "Invalid momentum value: -0.5"),
    ("SGD", {"weight_decay": -1.0}, ValueError, "Invalid weight_decay value: -1.0"),
    ("SGD", {"nesterov": True}, ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}, ValueError, "Nesterov momentum requires"),
    ("Adam", {"eps": -1e-8}, ValueError, "Invalid epsilon value: -1e-08"),
    ("Adam", {"betas": (1.0, 0.999)}, ValueError, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", {"betas": (0.9, -0.1)}, ValueError, r"Invalid beta parameter at index 1: -0.1"),
    ("AdamW", {"weight_decay": -0.1}, ValueError, "Invalid weight_decay value: -0.1"),
    ("RMSprop", {"alpha": -0.1}, ValueError, "Invalid alpha value: -0.1"),
    ("RMSprop", {"momentum": -0.1}, ValueError, "Invalid momentum value: -0.1"),
    ("Adagrad", {"lr_decay": -0.1}, ValueError, "Invalid lr_decay value: -0.1"),
    ("Adagrad", {"initial_accumulator_value": -1.0}, ValueError, "Invalid initial_accumulator_value value: -1.0"),
]


@pytest.mark.parametrize("name,kwargs,exc,msg", BAD)
def test_option_errors_match_torch(name, kwargs, exc, msg):
    for m in (ember, torch):
        with pytest.raises(exc, match=msg):
            getattr(m.optim, name)([m.zeros(2, requires_grad=True)], **kwargs)


def test_param_group_errors_match_torch():
    for m in (ember, torch):
        a, b = m.zeros(2, requires_grad=True), m.zeros(3, requires_grad=True)
        opt = m.optim.SGD([a], lr=0.1)
        with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
            opt.add_param_group({"params": [b, a]})
        with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
            m.optim.Adam([{"params": [a]}, {"params": a}])
        with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
            m.optim.SGD([{"params": {a, b}}])
        with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
            m.optim.SGD([a, 1.0])
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            m.optim.SGD([a * 2])
        with pytest.warns(UserWarning, match="duplicate parameters"):
            m.optim.SGD([a, a])


def test_add_param_group_uses_defaults_and_steps():
    results = []
    for m in (ember, torch):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0], requires_grad=True)
        opt = m.optim.Adam([a], lr=0.1, betas=(0.8, 0.9))
        opt.add_param_group({"params": b, "lr": 0.5})
        assert opt.param_groups[1]["betas"] == (0.8, 0.9) and opt.param_groups[1]["lr"] == 0.5
        for _ in range(3):
            opt.zero_grad()
            ((a ** 2).sum() + (b ** 3).sum()).backward()
            opt.step()
        results.append([a.detach().numpy().copy(), b.detach().numpy().copy()])
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_named_parameters_and_repr():
    a = ember.zeros(2, requires_grad=True)
    opt = ember.optim.SGD([("w", a)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w"] and opt.param_groups[0]["params"][0] is a
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]
    opt = ember.optim.Adam([{"params": [a]}, {"params": [ember.zeros(1, requires_grad=True)], "lr": 0.5}])
    t = torch.optim.Adam([{"params": [torch.zeros(2, requires_grad=True)]},
                          {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}])
    assert repr(opt) == repr(t)


def test_adagrad_group_initial_accumulator_value():
    """Difference from torch (whose __init__ uses the constructor's value for every group): a group's own
    initial_accumulator_value is honoured."""
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(3, requires_grad=True)
    opt = ember.optim.Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 2.0}],
                              initial_accumulator_value=0.5)
    assert opt.state[a]["sum"].tolist() == [0.5, 0.5] and opt.state[b]["sum"].tolist() == [2.0] * 3


def test_differentiable_not_supported():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        ember.optim.Adam([ember.zeros(2, requires_grad=True)], differentiable=True)


def test_custom_optimizer_subclass():
    """A PyTorch-style optimizer that overrides step() works and counts as having stepped."""

    class SignSGD(ember.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        @ember.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.sub_(group["lr"] * p.grad.sign())

    p = ember.tensor([1.0, -1.0], requires_grad=True)
    opt = SignSGD([p])
    (p * 3).sum().backward()
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, -1.1], rtol=1e-6)
    assert opt._opt_called
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.optim.lr_scheduler.StepLR(opt, 2).step()


@pytest.mark.parametrize("saved, loaded_as", [("float64", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("SGD", {"momentum": 0.9}), ("RMSprop", {"centered": True})])
def test_loaded_state_takes_the_parameters_float_dtype_as_torch(name, kwargs, saved, loaded_as):
    """A state dict saved for parameters of one float dtype, loaded for parameters of another: each floating state
    tensor is cast to the parameter's dtype, "step" kept as saved (float32 either way), as PyTorch's
    load_state_dict."""
    dtypes = {}
    for m in (torch, ember):
        src = m.nn.Linear(2, 1).to(getattr(m, saved))
        opt = getattr(m.optim, name)(src.parameters(), lr=0.1, **kwargs)
        src(m.ones(1, 2, dtype=getattr(m, saved))).sum().backward()
        opt.step()
        dst = m.nn.Linear(2, 1).to(getattr(m, loaded_as))
        loaded = getattr(m.optim, name)(dst.parameters(), lr=0.1, **kwargs)
        loaded.load_state_dict(opt.state_dict())
        dtypes[m] = {k: str(v.dtype).split(".")[-1] for k, v in loaded.state[dst.weight].items()
                     if isinstance(v, m.Tensor)}
    assert dtypes[ember] == dtypes[torch]
    assert any(v == loaded_as for v in dtypes[torch].values())


def test_add_param_group_and_named_params_refuse_as_pytorch():
    """A group that is not a dict, and parameters of which only some are named: PyTorch's errors."""
    for m in (torch, ember):
        opt = m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=0.1)
        with pytest.raises(TypeError, match="param_group must be a dict, but got .*list"):
            opt.add_param_group([m.nn.Parameter(m.ones(1))])
        with pytest.raises(ValueError, match="all optimizer params should be with/without names. Some param names "
                                             "are missing"):
            m.optim.SGD([("a", m.nn.Parameter(m.ones(1))), m.nn.Parameter(m.ones(1))], lr=0.1)


def test_a_pickled_optimizer_keeps_its_state_and_steps_on_as_pytorchs():
    """An optimizer pickled after a step (its momentum buffers, options and hooks' lists restored) continues the
    same trajectory as PyTorch's pickled one."""
    import pickle

    out = {}
    for m in (torch, ember):
        w = m.nn.Parameter(m.tensor([1.0, -2.0, 3.0]))
        opt = m.optim.SGD([w], lr=0.1, momentum=0.9)
        w.grad = m.tensor([0.5, 0.25, -1.0])
        opt.step()
        copy = pickle.loads(pickle.dumps(opt))
        (w2,) = copy.param_groups[0]["params"]
        copy.register_step_post_hook(lambda *a: None)  # the restored object takes hooks
        for _ in range(2):
            w2.grad = m.tensor([0.5, 0.25, -1.0])
            copy.step()
        out[m] = (w2.detach().numpy().copy(), copy.state[w2]["momentum_buffer"].numpy().copy(),
                  w.detach().numpy().copy())
    for e, t in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-6)
    assert not np.allclose(out[ember][0], out[ember][2])  # the copy stepped, the original did not


def test_load_state_dict_keeps_unknown_state_keys_and_the_groups_parameter_names_as_pytorch():
    """State under a key that names no parameter is kept as it is; a saved group without ``param_names`` keeps
    the loading optimizer's names (PyTorch's ``load_state_dict``)."""
    got = {}
    for m in (torch, ember):
        plain = m.optim.Adam([m.nn.Parameter(m.ones(2))], lr=0.1)
        sd = plain.state_dict()
        sd["state"][7] = {"note": 3}
        named = m.optim.Adam([("w", m.nn.Parameter(m.zeros(2)))], lr=0.5)
        named.load_state_dict(sd)
        out = named.state_dict()
        got[m] = (out["state"].get(7), out["param_groups"][0].get("param_names"), out["param_groups"][0]["lr"])
    assert got[ember] == got[torch] == ({"note": 3}, ["w"], 0.1)
