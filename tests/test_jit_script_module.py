"""A subclass of torch.jit.ScriptModule (pytorch-cifar100's stochastic-depth blocks) builds and runs as PyTorch's:
an nn.Module whose ``@script_method`` methods ember runs as Python (it has no TorchScript)."""

import warnings

import numpy as np
import pytest
import torch

import ember


def stochastic_depth_block(lib):
    """pytorch-cifar100's StochasticDepthBasicBlock, in small: a residual branch kept with probability ``p``."""

    class Block(lib.jit.ScriptModule):
        def __init__(self, p, channels):
            super().__init__()
            self.p = p
            self.residual = lib.nn.Sequential(lib.nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                              lib.nn.BatchNorm2d(channels))
            self.register_buffer("scale", lib.tensor(2.0))

        def survival(self):
            var = lib.bernoulli(lib.tensor(self.p).float())
            return lib.equal(var, lib.tensor(1).float())

        @lib.jit.script_method
        def forward(self, x):
            if self.training:
                if self.survival():
                    return lib.relu(self.residual(x) + x) * self.scale
                return lib.relu(x)
            return lib.relu(self.residual(x) * self.p + x)

    return Block


def build(lib, seed):
    lib.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # script_method's, checked in test_heldout_names
        return stochastic_depth_block(lib)(0.5, 3)


def test_a_script_module_subclass_is_a_module_run_as_its_python():
    models = {lib: build(lib, 0) for lib in (ember, torch)}
    models[ember].load_state_dict({k: ember.from_numpy(v.numpy()) for k, v in models[torch].state_dict().items()})
    for lib, model in models.items():
        assert isinstance(model, lib.jit.ScriptModule) and isinstance(model, lib.nn.Module)
        assert [name for name, _ in model.named_parameters()] == ["residual.0.weight", "residual.1.weight",
                                                                  "residual.1.bias"]
        assert list(model.state_dict()) == list(models[torch].state_dict())
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for seed in range(4):  # training: the bernoulli draw decides the branch, the same draws in both
        outs = []
        for lib, model in models.items():
            lib.manual_seed(seed)
            outs.append(model(lib.from_numpy(x.copy())).detach().numpy())
        np.testing.assert_allclose(outs[0], outs[1], atol=1e-5)
    for model in models.values():
        model.eval()
    np.testing.assert_allclose(models[ember](ember.from_numpy(x)).detach().numpy(),
                               models[torch](torch.from_numpy(x)).detach().numpy(), atol=1e-5)
    grad = ember.from_numpy(x).requires_grad_()
    models[ember](grad).sum().backward()
    assert grad.grad is not None and models[ember].residual[0].weight.grad is not None


def test_script_module_without_forward_and_script_function():
    with pytest.raises(NotImplementedError, match="forward"):
        ember.jit.ScriptModule()(ember.ones(1))
    assert not isinstance(ember.nn.Linear(1, 1), ember.jit.ScriptModule)
    for m in (torch, ember):  # (PyTorch's binding defines no constructor)
        with pytest.raises(TypeError, match="^ScriptFunction: No constructor defined!$"):
            m.jit.ScriptFunction()
