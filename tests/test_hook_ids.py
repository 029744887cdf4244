"""ember's own hooks take no ids from RemovableHandle's counter: a program's hooks are numbered as in PyTorch (the
pruning tutorial prints a module's _forward_pre_hooks, whose keys are those ids). Under ``python -m ember.compat``
the training-loop diagnostics watch every parameter's gradient and every optimizer step: neither may take one."""

import inspect

import pytest
import torch
import torch.utils.hooks

import ember
import ember.utils.hooks


def ids_taken(lib, handle_cls, make_scheduler: bool):
    """How many handle ids building a model, an optimizer (and a scheduler) and one training step take, then the
    keys of the model's first layer's forward pre-hooks and the id of the handle after one is registered."""
    start = handle_cls.next_id
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.ReLU(), lib.nn.Flatten(),
                              lib.nn.Linear(8, 3))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 1) if make_scheduler else None
    model(lib.randn(2, 1, 4, 4)).sum().backward()
    opt.step()
    if sched is not None:
        sched.step()
    taken = handle_cls.next_id - start
    handle = model[0].register_forward_pre_hook(lambda *args: None)
    return taken, [k - start for k in model[0]._forward_pre_hooks], handle.id - start


@pytest.mark.parametrize("make_scheduler", [False, True])
def test_training_takes_no_hook_ids_like_torch(make_scheduler):
    assert ids_taken(ember, ember.utils.hooks.RemovableHandle, make_scheduler) == \
        ids_taken(torch, torch.utils.hooks.RemovableHandle, make_scheduler) == (0, [0], 0)


def test_the_compat_runners_diagnostics_take_no_hook_ids(tmp_path):
    from conftest import run_under_compat

    source = "import torch\nimport torch.utils.hooks\n\n" + inspect.getsource(ids_taken) + (
        "\nprint(ids_taken(torch, torch.utils.hooks.RemovableHandle, True))\n")
    out = run_under_compat(source, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(0, [0], 0)"
