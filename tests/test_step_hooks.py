"""Public hooks the training-loop diagnostics use, checked against PyTorch: optimizer step pre/post hooks
(per optimizer and global) and module registration hooks."""

import pytest
import torch
import torch.nn.modules.module as torch_module
import torch.optim.optimizer as torch_optimizer

import ember
import ember.nn.modules.module as ember_module
import ember.optim.optimizer as ember_optimizer

FRAMEWORKS = [(torch, torch_optimizer, torch_module), (ember, ember_optimizer, ember_module)]


def step_events(fw, opt_mod):
    """The order in which global and per-optimizer hooks and the step run, and what the hooks receive."""
    fw.manual_seed(0)
    lin = fw.nn.Linear(2, 1)
    opt = fw.optim.SGD(lin.parameters(), lr=0.1)
    events = []

    def seen(name):  # what a hook got: the optimizer, args (starting with the optimizer), kwargs
        return lambda o, a, k: events.append((name, o is opt, a[0] is opt, len(a), k))

    handles = [opt_mod.register_optimizer_step_pre_hook(seen("global pre")),
               opt_mod.register_optimizer_step_post_hook(seen("global post")),
               opt.register_step_pre_hook(seen("pre")), opt.register_step_post_hook(seen("post"))]
    try:
        lin(fw.ones(3, 2)).sum().backward()
        opt.step()
        events.append("--")
        handles[2].remove()
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    return events


def test_step_hooks_run_in_pytorchs_order_with_its_arguments():
    assert step_events(ember, ember_optimizer) == step_events(torch, torch_optimizer)


@pytest.mark.parametrize("fw", [torch, ember])
def test_pre_hook_may_replace_the_arguments_and_must_return_a_pair(fw):
    fw.manual_seed(0)
    lin = fw.nn.Linear(2, 1)
    opt = fw.optim.SGD(lin.parameters(), lr=0.1)
    calls = []
    h = opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: calls.append(1) or fw.tensor(2.0)}))
    assert float(opt.step()) == 2.0 and calls == [1]
    h.remove()
    for bad in ("nonsense", "ab", [(), {}], ((), {}, None)):  # a pair must be a tuple, a tuple must be a pair
        h = opt.register_step_pre_hook(lambda o, a, k, bad=bad: bad)
        with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
            opt.step()
        h.remove()


def test_overriding_step_calling_super_runs_the_hooks_once():
    class Counting(ember.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    lin = ember.nn.Linear(2, 1)
    opt = Counting(lin.parameters(), lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: seen.append("post"))
    lin(ember.ones(1, 2)).sum().backward()
    opt.step()
    assert seen == ["pre", "post"]


def registrations(fw, mod_mod):
    seen = []
    handles = [mod_mod.register_module_parameter_registration_hook(lambda m, n, p: seen.append(("param", n))),
               mod_mod.register_module_module_registration_hook(lambda m, n, c: seen.append(("module", n)))]
    try:
        net = fw.nn.Sequential(fw.nn.Linear(2, 3))
        net.add_module("head", fw.nn.Linear(3, 1))
        net.extra = fw.nn.Parameter(fw.zeros(1))
    finally:
        for h in handles:
            h.remove()
    fw.nn.Linear(1, 1)  # after remove(): not seen
    return seen


def test_module_registration_hooks_see_what_pytorchs_see():
    assert registrations(ember, ember_module) == registrations(torch, torch_module)


@pytest.mark.parametrize("fw,mod_mod", [(torch, torch_module), (ember, ember_module)])
def test_parameter_registration_hook_may_replace_the_parameter(fw, mod_mod):
    replacement = fw.nn.Parameter(fw.ones(2, 1))
    h = mod_mod.register_module_parameter_registration_hook(lambda m, n, p: replacement if n == "weight" else None)
    try:
        lin = fw.nn.Linear(1, 2)
    finally:
        h.remove()
    assert lin.weight is replacement
