"""nn.utils.weight_norm / spectral_norm (the hook-based API) against torch: values, gradients, state_dict keys,
buffers, several SGD steps, eval mode, removal and errors."""

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close

import ember
import ember.nn as nn


def pair(factory, wrap, **kw):
    """The same layer in both frameworks, wrapped by ``wrap`` (a function of the nn namespace), with torch's
    weights (and spectral-norm start vectors) loaded into ember."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm = wrap(torch.nn, factory(torch.nn), **kw)
        em = wrap(nn, factory(nn), **kw)
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict(ember_state(tm))
    return em, tm


def train_both(em, tm, shape, steps=4, lr=0.1, train=True):
    """SGD steps on the same batches; compares outputs, every parameter's gradient, buffers and the final state."""
    em.train(train)
    tm.train(train)
    eopt, topt = ember.optim.SGD(em.parameters(), lr=lr), torch.optim.SGD(tm.parameters(), lr=lr)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        x = rng.standard_normal(shape).astype(np.float32)
        eo, to = em(ember.tensor(x)), tm(torch.tensor(x))
        assert_close(eo, to, msg="output")
        eopt.zero_grad()
        topt.zero_grad()
        (eo * eo).sum().backward()
        (to * to).sum().backward()
        t_params = dict(tm.named_parameters())
        for name, p in em.named_parameters():
            assert_close(p.grad, t_params[name].grad, msg=f"grad of {name}")
        eopt.step()
        topt.step()
    t_state = tm.state_dict()
    for k, v in em.state_dict().items():
        assert_close(v, t_state[k], msg=k)


LAYERS = {
    "linear": (lambda m: m.Linear(5, 4), (3, 5)),
    "conv1d": (lambda m: m.Conv1d(3, 4, 3, padding=1), (2, 3, 7)),
    "conv2d": (lambda m: m.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    "convT1d": (lambda m: m.ConvTranspose1d(3, 2, 3), (2, 3, 5)),
}


@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_weight_norm_trains_as_torch(layer, dim):
    factory, shape = LAYERS[layer]
    em, tm = pair(factory, lambda m, mod, **kw: m.utils.weight_norm(mod, **kw), dim=dim)
    assert [k for k, _ in em.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert tuple(em.weight_g.shape) == tuple(tm.weight_g.shape)
    assert "weight" not in em._parameters and isinstance(em.weight, ember.Tensor)
    train_both(em, tm, shape)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_weight_norm_remove_and_errors():
    em, tm = pair(LAYERS["linear"][0], lambda m, mod: m.utils.weight_norm(mod))
    train_both(em, tm, (3, 5), steps=2)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
        nn.utils.weight_norm(em)
    nn.utils.remove_weight_norm(em)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    assert isinstance(em.weight, nn.Parameter) and not em._forward_pre_hooks
    assert_close(em.weight.detach(), tm.weight.detach())
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(em)
    g = nn.utils.weight_norm(nn.Linear(3, 2, bias=False), name="weight", dim=None).weight_g
    assert g.shape == () and not em._forward_pre_hooks


@pytest.mark.parametrize("n_power_iterations", [1, 3])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_spectral_norm_trains_as_torch(layer, n_power_iterations):
    factory, shape = LAYERS[layer]
    em, tm = pair(factory, lambda m, mod, **kw: m.utils.spectral_norm(mod, **kw),
                  n_power_iterations=n_power_iterations)
    assert list(em.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [k for k, _ in em.named_buffers()] == ["weight_u", "weight_v"]
    assert tuple(em.weight_u.shape) == tuple(tm.weight_u.shape)  # dim 1 for ConvTranspose, as PyTorch
    train_both(em, tm, shape)
    train_both(em, tm, shape, steps=2, train=False)  # eval: no power iteration, buffers unchanged


def test_spectral_norm_eval_keeps_buffers_and_remove():
    em, tm = pair(LAYERS["conv1d"][0], lambda m, mod: m.utils.spectral_norm(mod, eps=1e-6))
    em.eval()
    u = em.weight_u.clone()
    em(ember.ones(1, 3, 4))
    assert np.array_equal(u.numpy(), em.weight_u.numpy())
    em.train()
    em(ember.ones(1, 3, 4))
    assert not np.array_equal(u.numpy(), em.weight_u.numpy())
    tm(torch.ones(1, 3, 4))
    assert_close(em.weight_u, tm.weight_u)
    nn.utils.remove_spectral_norm(em)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    assert_close(em.weight.detach(), tm.weight.detach())
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(em)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got n_power_iterations=0"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    twice = nn.utils.spectral_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
        nn.utils.spectral_norm(twice)
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        nn.utils.spectral_norm(nn.Linear(2, 2, bias=False), name="bias")
