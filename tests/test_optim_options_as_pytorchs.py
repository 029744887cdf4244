"""Every optimizer's ``defaults`` and parameter groups are PyTorch's after construction and after loading a state dict
saved by an older PyTorch (options missing: each class fills in what its PyTorch ``__setstate__`` fills in, SGD's
``fused`` False where ember put None, SparseAdam and LBFGS nothing, and every optimizer's ``defaults`` gain
``differentiable``); ``capturable=True`` is accepted at construction and refused at the first step on the CPU with
PyTorch's AssertionError, as PyTorch's."""

import copy

import pytest
import torch

import ember

NAMES = ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop",
         "SparseAdam", "LBFGS"]
OPTIONAL = ["fused", "capturable", "differentiable", "foreach", "maximize", "decoupled_weight_decay", "nesterov",
            "amsgrad", "momentum", "centered"]


def _make(lib, name, **options):
    p = lib.nn.Parameter(lib.ones(2))
    return getattr(lib.optim, name)([p], **({"lr": 0.1} if name == "SGD" else {}), **options), p


def _plain(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "params"}


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_groups_are_pytorchs(name):
    (t, _), (e, _) = _make(torch, name), _make(ember, name)
    assert e.defaults == t.defaults
    assert list(_plain(e.param_groups[0])) == list(_plain(t.param_groups[0]))
    assert _plain(e.param_groups[0]) == _plain(t.param_groups[0])


@pytest.mark.parametrize("missing", [OPTIONAL, ["fused"], ["maximize"], ["decoupled_weight_decay"]], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_an_older_state_dict_is_filled_in_as_pytorchs(name, missing):
    (t, _), (e, _) = _make(torch, name), _make(ember, name)
    old = t.state_dict()
    for key in missing:
        old["param_groups"][0].pop(key, None)
    if name == "AdamW":
        old["param_groups"][0]["decoupled_weight_decay"] = False  # PyTorch's AdamW makes it True on load
    e.load_state_dict(copy.deepcopy(old))
    t.load_state_dict(copy.deepcopy(old))
    assert _plain(e.param_groups[0]) == _plain(t.param_groups[0])
    assert e.defaults == t.defaults


def test_a_custom_optimizers_defaults_gain_differentiable_on_load_as_pytorchs():
    def custom(lib):
        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.1})

        return Plain([lib.nn.Parameter(lib.ones(1))])

    t, e = custom(torch), custom(ember)
    t.load_state_dict(t.state_dict())
    e.load_state_dict(e.state_dict())
    assert e.defaults == t.defaults == {"lr": 0.1, "differentiable": False}


def test_a_custom_optimizers_numeric_state_is_kept_on_load_as_pytorchs():
    """A user's subclass of the base ``Optimizer`` whose state holds numbers (a ``step`` count, a ``mu``, as optimizers
    written before PyTorch 1.12 do): loading its state dict keeps them numbers, as PyTorch's base ``__setstate__``
    converts nothing (only PyTorch's own optimizers make them 0-d tensors)."""
    def loaded(lib):
        class Counting(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.1})

            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        state["step"] = state.get("step", 0) + 1
                        state["mu"] = 0.5

        p = lib.nn.Parameter(lib.ones(2))
        opt = Counting([p])
        opt.step()
        again = Counting([p])
        again.load_state_dict(opt.state_dict())
        return {k: (type(v).__name__, v) for k, v in again.state[p].items()}, _plain(again.param_groups[0])

    assert loaded(ember) == loaded(torch) == ({"step": ("int", 1), "mu": ("float", 0.5)}, {"lr": 0.1})


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop",
                                  "Rprop"])
@pytest.mark.parametrize("foreach", [None, False])
def test_capturable_on_the_cpu_is_refused_at_the_step_as_pytorchs(name, foreach):
    results = []
    for lib in (torch, ember):
        opt, p = _make(lib, name, capturable=True, foreach=foreach)
        opt.step()  # no gradient: nothing is stepped, nothing refused
        p.grad = lib.ones(2)
        with pytest.raises(AssertionError) as info:
            opt.step()
        results.append((str(info.value), p.tolist(), sorted(opt.state[p])))
    assert results[1] == results[0]


@pytest.mark.parametrize("name", ["SGD", "Adagrad", "SparseAdam", "LBFGS"])
def test_an_optimizer_without_capturable_refuses_the_option_as_pytorchs(name):
    with pytest.raises(TypeError, match="capturable"):
        _make(torch, name, capturable=True)
    with pytest.raises(TypeError, match="capturable"):
        _make(ember, name, capturable=True)


@pytest.mark.parametrize("name, options", [("Adam", {"capturable": True}), ("Adam", {"fused": True}),
                                           ("NAdam", {"capturable": True}), ("Adagrad", {"fused": True})])
def test_an_older_numeric_step_becomes_pytorchs_dtype(name, options):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        steps = []
        for lib in (torch, ember):
            opt, p = _make(lib, name, **options)
            p.grad = lib.ones(2)
            sd = opt.state_dict()
            first = next(iter(sd["state"].values()), None)
            if first is None:  # (capturable: the first step is refused on the CPU; make the state by hand)
                sd = copy.deepcopy(_make(lib, name)[0].state_dict())
                sd["param_groups"][0].update(options)
                p2 = _make(lib, name)[1]
                p2.grad = lib.ones(2)
                plain = getattr(lib.optim, name)([p2], **options_without(options))
                plain.step()
                sd["state"] = plain.state_dict()["state"]
            for s in sd["state"].values():
                s["step"] = 3  # as a state dict from before PyTorch 1.12 holds it
            opt.load_state_dict(sd)
            steps.append(str(opt.state[p]["step"].dtype).rpartition(".")[2])
        assert steps[1] == steps[0]
    finally:
        torch.set_default_dtype(before)
        ember.set_default_dtype(getattr(ember, str(before).rpartition(".")[2]))


def options_without(options: dict) -> dict:
    return {k: v for k, v in options.items() if k != "capturable"}
