"""nn.utils.parametrize and nn.utils.parametrizations against torch: state_dict keys, values, gradients, several
SGD steps, right_inverse on assignment, caching, removal and errors."""

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close
from test_nn_utils_norms import LAYERS, train_both

import ember
import ember.nn as nn


def symmetric(m):
    class Symmetric(m.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def scaled(m, factor=2.0):
    class Scale(m.nn.Module):
        def forward(self, X):
            return X * factor

        def right_inverse(self, A):
            return A / factor

    return Scale()


def split(m):
    class Split(m.nn.Module):  # two originals: a sum of two tensors
        def forward(self, a, b):
            return a + b

        def right_inverse(self, w):
            return w * 0.25, w * 0.75

    return Split()


CHAINS = {"symmetric": [symmetric], "symmetric-then-scale": [symmetric, scaled], "two-originals": [split],
          "two-originals-then-scale": [split, scaled]}


def build(m, chain, layer=lambda m: m.nn.Linear(4, 4)):
    torch.manual_seed(0)
    mod = layer(m)
    for make in chain:
        m.nn.utils.parametrize.register_parametrization(mod, "weight", make(m))
    return mod


@pytest.mark.parametrize("chain", list(CHAINS))
def test_register_parametrization_trains_as_torch(chain):
    tm, em = build(torch, CHAINS[chain]), build(ember, CHAINS[chain])
    assert list(em.state_dict()) == list(tm.state_dict())
    assert type(em).__name__ == type(tm).__name__ == "ParametrizedLinear"
    em.load_state_dict(ember_state(tm))
    assert_close(em.weight, tm.weight)
    train_both(em, tm, (3, 4))
    value = np.arange(16, dtype=np.float32).reshape(4, 4)
    value = value + value.T
    em.weight = ember.tensor(value)  # through right_inverse
    tm.weight = torch.tensor(value)
    for k, v in tm.state_dict().items():
        assert_close(em.state_dict()[k], v, msg=k)
    assert_close(em.weight, tm.weight)


def test_parametrize_registry_cache_and_removal():
    p = nn.utils.parametrize
    em = build(ember, [symmetric])
    other = nn.Linear(4, 4)
    assert p.is_parametrized(em) and p.is_parametrized(em, "weight") and not p.is_parametrized(em, "bias")
    assert not p.is_parametrized(other) and type(other) is nn.Linear  # the class change is per instance
    assert p.type_before_parametrizations(em) is nn.Linear and isinstance(em, nn.Linear)
    assert isinstance(em.parametrizations.weight, p.ParametrizationList)
    calls = []
    em.parametrizations.weight.register_forward_hook(lambda *a: calls.append(1))
    assert em.weight is not em.weight  # computed on each access
    assert len(calls) == 2
    with p.cached():
        a, b = em.weight, em.weight
        assert a is b
    assert len(calls) == 3 and em.weight is not a
    original = em.parametrizations.weight.original
    opt = ember.optim.SGD(em.parameters(), lr=0.1)
    p.remove_parametrizations(em, "weight")
    assert type(em) is nn.Linear and "parametrizations" not in em._modules
    assert em.weight is original and isinstance(em.weight, nn.Parameter)  # the optimiser's tensor lives on
    w = em.weight.detach().numpy()
    assert np.allclose(w, w.T)
    em(ember.ones(1, 4)).sum().backward()
    before = w.copy()
    opt.step()
    assert not np.array_equal(before, em.weight.detach().numpy())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        p.remove_parametrizations(em, "weight")


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_as_torch(leave):
    tm, em = build(torch, [symmetric, scaled]), build(ember, [symmetric, scaled])
    em.load_state_dict(ember_state(tm))
    torch.nn.utils.parametrize.register_parametrization(tm, "bias", scaled(torch, 3.0))
    nn.utils.parametrize.register_parametrization(em, "bias", scaled(ember, 3.0))
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight", leave_parametrized=leave)
    nn.utils.parametrize.remove_parametrizations(em, "weight", leave_parametrized=leave)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        assert_close(em.state_dict()[k], v, msg=k)
    assert type(em).__name__ == "ParametrizedLinear"  # bias is still parametrized
    nn.utils.parametrize.remove_parametrizations(em, "bias")
    assert type(em) is nn.Linear
    two = build(ember, [split])
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        nn.utils.parametrize.remove_parametrizations(two, "weight", leave_parametrized=False)
    w = two.weight.detach().numpy().copy()
    nn.utils.parametrize.remove_parametrizations(two, "weight")
    assert isinstance(two.weight, nn.Parameter) and np.allclose(two.weight.detach().numpy(), w)


def test_parametrize_buffer_and_errors():
    p = nn.utils.parametrize
    bn = nn.BatchNorm1d(3)
    p.register_parametrization(bn, "running_var", scaled(ember))
    assert "parametrizations.running_var.original" in bn.state_dict()
    assert not isinstance(bn.parametrizations.running_var.original, nn.Parameter)
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name"):
        p.register_parametrization(m, "nope", scaled(ember))

    class Flatten(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless"):
        p.register_parametrization(m, "weight", Flatten())
    p.register_parametrization(m, "weight", Flatten(), unsafe=True)
    assert m.weight.shape == (6,)
    with pytest.raises(RuntimeError, match="parametrization Flatten does not implement right_inverse."):
        m.weight = ember.zeros(2, 3)
    with pytest.raises(ValueError, match="ParametrizationList requires one or more modules."):
        p.ParametrizationList([], ember.zeros(2))


@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("layer", ["linear", "conv1d", "convT1d"])
def test_parametrizations_weight_norm(layer, dim):
    factory, shape = LAYERS[layer]
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.weight_norm(factory(torch.nn), dim=dim)
    em = nn.utils.parametrizations.weight_norm(factory(nn), dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert list(em.state_dict())[-2:] == ["parametrizations.weight.original0", "parametrizations.weight.original1"]
    em.load_state_dict(ember_state(tm))
    train_both(em, tm, shape)
    nn.utils.parametrize.remove_parametrizations(em, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert_close(em.weight.detach(), tm.weight.detach())


@pytest.mark.parametrize("n_power_iterations", [1, 2])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_parametrizations_spectral_norm(layer, n_power_iterations):
    factory, shape = LAYERS[layer]
    torch.manual_seed(0)
    ember.manual_seed(0)  # (ember's draws are PyTorch's for a seed: the same start vectors, whatever ran before)
    tm, em = factory(torch.nn), factory(nn)
    em.load_state_dict(ember_state(tm))
    tm = torch.nn.utils.parametrizations.spectral_norm(tm, n_power_iterations=n_power_iterations)
    em = nn.utils.parametrizations.spectral_norm(em, n_power_iterations=n_power_iterations)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert tuple(em.parametrizations.weight[0]._u.shape) == tuple(tm.parametrizations.weight[0]._u.shape)
    # the same start vectors and 15 start-up iterations: PyTorch's spectral norm
    assert_close(em.weight.detach(), tm.weight.detach(), atol=1e-5, rtol=1e-4)
    em.load_state_dict(ember_state(tm))
    train_both(em, tm, shape)
    train_both(em, tm, shape, steps=2, train=False)
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.utils.parametrizations.spectral_norm(factory(nn), dim=5)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        nn.utils.parametrizations.spectral_norm(factory(nn), name="nope")


def batched(m):
    class Batched(m.nn.Module):  # a batch of matrices: (2, 4, 3)
        def __init__(self):
            super().__init__()
            self.weight = m.nn.Parameter(m.randn(2, 4, 3))

        def forward(self, x):
            return x @ self.weight

    return Batched()


ORTHO = {"square": (lambda m: m.nn.Linear(4, 4), (3, 4)), "tall": (lambda m: m.nn.Linear(3, 5), (3, 3)),
         "wide": (lambda m: m.nn.Linear(6, 3), (3, 6)), "batch": (batched, (2, 5, 4))}


@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", list(ORTHO))
def test_parametrizations_orthogonal(shape, orthogonal_map):
    factory, x_shape = ORTHO[shape]
    torch.manual_seed(0)
    tm, em = factory(torch), factory(ember)
    em.load_state_dict(ember_state(tm))
    tm = torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map)
    em = nn.utils.parametrizations.orthogonal(em, orthogonal_map=orthogonal_map)
    assert list(em.state_dict()) == list(tm.state_dict())
    if shape in ("square", "batch"):  # no random completion: the same base from the same weight
        assert_close(em.weight.detach(), tm.weight.detach(), atol=1e-5)
    em.load_state_dict(ember_state(tm))
    train_both(em, tm, x_shape, steps=3, lr=0.05)
    w = em.weight.detach().numpy()
    w = w if w.shape[-2] >= w.shape[-1] else np.swapaxes(w, -1, -2)
    assert np.allclose(np.swapaxes(w, -1, -2) @ w, np.eye(w.shape[-1]), atol=1e-5)  # still orthogonal


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), name="bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder"'):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(RuntimeError, match="householder orthogonal map needs use_trivialization=True"):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 3), use_trivialization=False)
    m = nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential"):
        m.weight = ember.eye(2)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_without_trivialization(orthogonal_map):
    torch.manual_seed(0)
    tm, em = torch.nn.Linear(4, 4), nn.Linear(4, 4)
    em.load_state_dict(ember_state(tm))
    kw = dict(orthogonal_map=orthogonal_map, use_trivialization=False)
    tm = torch.nn.utils.parametrizations.orthogonal(tm, **kw)
    em = nn.utils.parametrizations.orthogonal(em, **kw)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert_close(em.weight.detach(), tm.weight.detach())
    train_both(em, tm, (3, 4), steps=3, lr=0.05)
