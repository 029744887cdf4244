"""``Optimizer.load_state_dict`` casts the loaded state as PyTorch's ``_cast`` does, against torch.

A floating parameter's state tensors take its dtype without a copy where they have it already (so the loaded
optimizer updates the dict's tensors in place, which the test suites of optimizer collections observe), ``step``
keeps its own, integer and float64 tensors become the parameter's dtype, lists, tuples and dicts are rebuilt
around their cast entries, the saved param_groups are copied, and the optimizer's ``__setstate__`` receives the
new state and groups (custom optimizers fill in options an older dict lacks there).
"""

from copy import deepcopy

import torch

import ember


def _load(m, extra_state):
    """Adam on two parameters after one step, its state dict (with ``extra_state`` added) loaded into a new Adam."""
    params = [m.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True), m.tensor([0.25, -1.0], requires_grad=True)]
    opt = m.optim.Adam(params, lr=0.1)
    (params[0].pow(2).sum() + params[1].sum()).backward()
    opt.step()
    saved = opt.state_dict()
    for k, make in extra_state.items():
        saved["state"][0][k] = make(m)
    copies = [p.detach().clone().requires_grad_() for p in params]
    opt2 = m.optim.Adam(copies, lr=1.0)
    opt2.load_state_dict(saved)
    return saved, opt2, copies


EXTRA = {
    "counts": lambda m: m.tensor([[1, 2], [3, 4]]),  # int64: the float parameter's dtype
    "wide": lambda m: m.tensor([[1.5, 2.5], [0.0, 1.0]], dtype=m.float64),
    "pair": lambda m: [m.tensor([1.0], dtype=m.float64), 3],
    "tup": lambda m: (m.tensor([2.0], dtype=m.float64),),
    "nested": lambda m: {"a": m.tensor([0.5], dtype=m.float64), "step": m.tensor(4.0, dtype=m.float64)},
}


def _name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _describe(saved, opt2, copies):
    """For each loaded entry: whether it is the dict's own object, its dtype (or the same for its entries)."""
    out = {}
    for k, v in opt2.state[copies[0]].items():
        orig = saved["state"][0][k]
        if isinstance(v, (list, tuple)):
            out[k] = (type(v).__name__, v is orig, [_name(x.dtype) if hasattr(x, "dtype") else x for x in v])
        elif isinstance(v, dict):
            out[k] = ("dict", v is orig, {a: (_name(x.dtype), x is orig[a]) for a, x in v.items()})
        else:
            out[k] = (v is orig, _name(v.dtype))
    return out


def test_loaded_state_is_cast_and_shared_as_torch():
    e, t = _describe(*_load(ember, EXTRA)), _describe(*_load(torch, EXTRA))
    assert e == t
    assert t["exp_avg"] == (True, "float32") and t["counts"] == (False, "float32")


def test_stepping_the_loaded_optimizer_updates_the_dict_as_torch():
    for m in (ember, torch):
        saved, opt2, copies = _load(m, {})
        before = deepcopy(saved["state"][0]["exp_avg"])
        copies[0].sum().backward()
        opt2.step()
        assert not m.equal(before, saved["state"][0]["exp_avg"]), m.__name__
        assert saved["state"][0]["exp_avg"] is opt2.state[copies[0]]["exp_avg"]


def test_saved_param_groups_are_copied():
    for m in (ember, torch):
        saved, opt2, _ = _load(m, {})
        assert opt2.param_groups[0] is not saved["param_groups"][0]
        assert opt2.param_groups[0]["betas"] == saved["param_groups"][0]["betas"]
        opt2.param_groups[0]["lr"] = 7.0
        assert saved["param_groups"][0]["lr"] == 0.1


def test_fused_group_step_becomes_float32():
    for m in (ember, torch):
        p = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1)
        saved = {"state": {0: {"step": m.tensor(3.0, dtype=m.float64), "momentum_buffer": m.zeros(2)}},
                 "param_groups": [dict(opt.state_dict()["param_groups"][0], fused=True)]}
        opt.load_state_dict(saved)
        assert opt.state[p]["step"].dtype == m.float32, m.__name__
        assert opt.state[p]["momentum_buffer"].dtype == m.float64, m.__name__


def _custom_optimizer(m):
    class WithDefaults(m.optim.Optimizer):
        """A custom optimizer filling in an option an older state dict lacks, as optimizer collections do."""

        def __init__(self, params, lr=0.1, amsgrad=False):
            super().__init__(params, {"lr": lr, "amsgrad": amsgrad})

        def __setstate__(self, state):
            super().__setstate__(state)
            self.calls = getattr(self, "calls", 0) + 1
            for group in self.param_groups:
                group.setdefault("amsgrad", False)

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data.add_(p.grad, alpha=-group["lr"])

    return WithDefaults


def test_load_state_dict_calls_setstate_as_torch():
    for m in (ember, torch):
        cls = _custom_optimizer(m)
        p = m.tensor([1.0, 2.0], requires_grad=True)
        opt = cls([p])
        old = opt.state_dict()
        del old["param_groups"][0]["amsgrad"]  # a dict saved before the option existed
        opt.load_state_dict(old)
        assert opt.calls == 1, m.__name__
        assert opt.param_groups[0]["amsgrad"] is False, m.__name__
        assert opt.param_groups[0]["params"][0] is p


OLDER = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "Adadelta"]


def _older_dict_loaded(m, name, fused):
    """``name`` after a step, its state dict made as an older PyTorch saved it (numbers for step, eta, mu and
    mu_product; no maximize, foreach, differentiable, capturable, fused, decoupled_weight_decay), loaded into a
    new optimizer built with other options, stepped again."""
    p = m.nn.Parameter(m.tensor([1.0, -2.0, 3.0]))
    extra = {"fused": True} if fused else {}
    opt = getattr(m.optim, name)([p], lr=0.1, **extra)
    p.grad = m.tensor([0.5, 0.5, -1.0])
    opt.step()
    saved = opt.state_dict()
    for state in saved["state"].values():
        for k in ("step", "eta", "mu", "mu_product"):
            if k in state:
                state[k] = state[k].item() if k != "step" else int(state[k].item())
    for k in ("differentiable", "foreach", "maximize", "capturable", "fused", "decoupled_weight_decay"):
        saved["param_groups"][0].pop(k, None)
    new = getattr(m.optim, name)([p], lr=0.5, maximize=True, **extra)
    new.load_state_dict(saved)
    p.grad = m.tensor([0.5, 0.5, -1.0])
    new.step()
    state = {k: (type(v).__name__, str(v.dtype).split(".")[-1], round(v.item(), 5)) if k in ("step", "eta", "mu")
             else type(v).__name__ for k, v in new.state[p].items()}
    group = {k: v for k, v in new.param_groups[0].items() if k not in ("params", "fused")}
    return group, state, [round(v, 5) for v in p.tolist()]


def test_a_state_dict_from_an_older_pytorch_is_filled_in_as_pytorchs():
    # (PyTorch's optimizers' __setstate__: missing options at their defaults, numeric steps as tensors; ember's
    # step read group["maximize"] (KeyError) or the int step's ._data)
    for name in OLDER:
        for fused in (False, True) if name in ("SGD", "Adam", "AdamW", "Adagrad") else (False,):
            assert _older_dict_loaded(ember, name, fused) == _older_dict_loaded(torch, name, fused), (name, fused)
