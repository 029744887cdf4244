"""A ``state['step']`` that is a number, as optimizers written for PyTorch before 1.12 store it (A3C's SharedAdam
fills each parameter's state in its ``__init__`` with ``state['step'] = 0``), against torch: the optimizers whose
step counts in a tensor refuse it with PyTorch's "API has changed" RuntimeError (ember failed on ``int._data``)."""

import pytest
import torch

import ember

NAMES = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta", "RMSprop", "Rprop"]


def error_of(lib, name):
    p = lib.nn.Parameter(lib.ones(3))
    opt = getattr(lib.optim, name)([p], lr=0.1)
    p.grad = lib.ones(3)
    opt.step()
    opt.state[p]["step"] = 1
    with pytest.raises(RuntimeError) as caught:
        opt.step()
    return str(caught.value), p.detach().clone()


@pytest.mark.parametrize("name", NAMES)
def test_number_step_refused_as_torch(name):
    (ours, ours_p), (theirs, theirs_p) = error_of(ember, name), error_of(torch, name)
    assert ours == theirs
    assert ours_p.tolist() == pytest.approx(theirs_p.tolist())  # refused before any update


def shared_adam(lib):
    class SharedAdam(lib.optim.Adam):  # pytorch-A3C's shared_adam.py, in its idiom
        def __init__(self, params, lr=1e-3):
            super().__init__(params, lr=lr)
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["step"] = 0
                    state["exp_avg"] = lib.zeros_like(p.data)
                    state["exp_avg_sq"] = lib.zeros_like(p.data)
                    state["exp_avg"].share_memory_()
                    state["exp_avg_sq"].share_memory_()

    return SharedAdam


def test_a3c_shared_adam_refused_as_torch():
    messages = []
    for lib in (ember, torch):
        net = lib.nn.Linear(2, 1)
        opt = shared_adam(lib)(net.parameters())
        net(lib.ones(1, 2)).sum().backward()
        with pytest.raises(RuntimeError) as caught:
            opt.step()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_tensor_steps_still_step():
    """The check passes optimizers whose state came from a state dict (tensor steps), as PyTorch's."""
    for name in NAMES:
        p = ember.nn.Parameter(ember.ones(3))
        opt = getattr(ember.optim, name)([p], lr=0.1)
        p.grad = ember.ones(3)
        opt.step()
        opt.load_state_dict(opt.state_dict())
        opt.step()
        assert float(opt.state[p]["step"]) == 2.0
