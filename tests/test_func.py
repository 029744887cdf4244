"""``torch.func.functional_call`` and ``stack_module_state``, against PyTorch."""

import numpy as np
import pytest
import torch

import ember
from ember.func import functional_call, stack_module_state


def _pair():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    enet = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    return tnet, enet


def test_functional_call_differentiates_the_given_tensors_and_restores_the_modules_own():
    tnet, enet = _pair()
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    rng = np.random.default_rng(1)
    fast = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32) for k, v in tnet.named_parameters()}
    results = []
    for m, net in ((torch, tnet), (ember, enet)):
        before = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
        weights = {k: m.tensor(v, requires_grad=True) for k, v in fast.items()}
        out = functional_call(net, weights, (m.tensor(x),)) if m is ember else \
            torch.func.functional_call(net, weights, (m.tensor(x),))
        grads = m.autograd.grad(out.pow(2).sum(), list(weights.values()))
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
        for k, v in net.state_dict().items():  # parameters back; BatchNorm's running stats updated as usual
            if "running" not in k and "num_batches" not in k:
                np.testing.assert_array_equal(v.detach().numpy(), before[k])
        results[-1].append(net.state_dict()["1.running_mean"].numpy().copy())
    for a, b in zip(*results):  # (the first bias's gradient is ~0 through training-mode BatchNorm: rounding noise)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_first_order_maml_step_matches_pytorch():
    tnet, enet = _pair()
    tnet.eval(), enet.eval()
    data = np.random.default_rng(2).standard_normal((2, 5, 3)).astype(np.float32)
    results = []
    for m, net in ((torch, tnet), (ember, enet)):
        call = torch.func.functional_call if m is torch else functional_call
        params = dict(net.named_parameters())
        inner = call(net, params, (m.tensor(data[0]),)).pow(2).mean()
        grads = m.autograd.grad(inner, list(params.values()))
        fast = {k: p - 0.1 * g for (k, p), g in zip(params.items(), grads)}
        call(net, fast, (m.tensor(data[1]),)).pow(2).mean().backward()
        results.append([p.grad.numpy().copy() for p in net.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_functional_call_errors_and_tied_weights_as_pytorch():
    _, net = _pair()
    w = ember.zeros(4, 3)
    with pytest.raises(ValueError, match="0.weight appeared in multiple dictionaries"):
        functional_call(net, ({"0.weight": w}, {"0.weight": w}), (ember.ones(2, 3),))
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Sequential:\n\tUnexpected key\(s\): "
                                           r"'nope'.\n\tMissing key\(s\): "):
        functional_call(net, {"nope": w}, (ember.ones(2, 3),), strict=True)
    outputs = []
    for m in (torch, ember):
        first, second = m.nn.Linear(3, 3, bias=False), m.nn.Linear(3, 3, bias=False)
        second.weight = first.weight  # tied: one parameter under two names
        model = m.nn.Sequential(first, second)
        call = torch.func.functional_call if m is torch else functional_call
        eye = m.eye(3)
        tied = call(model, {"0.weight": eye}, (m.ones(1, 3),))
        untied = call(model, {"0.weight": eye}, (m.ones(1, 3),), tie_weights=False)
        assert tied.tolist() == [[1.0, 1.0, 1.0]]  # both uses saw the identity
        assert model[1].weight is model[0].weight and not np.allclose(model[0].weight.detach().numpy(), np.eye(3))
        outputs.append(untied.detach().numpy())
    assert all(not np.allclose(o, [[1.0] * 3]) for o in outputs)  # untied: the second use kept its own weight


def test_stack_module_state_as_pytorch():
    torch.manual_seed(0)
    tmodels = [torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)) for _ in range(4)]
    emodels = [ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3)) for _ in range(4)]
    for t, e in zip(tmodels, emodels):
        e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    tp, tb = torch.func.stack_module_state(tmodels)
    ep, eb = stack_module_state(emodels)
    assert list(ep) == list(tp) and list(eb) == list(tb)
    for mine, theirs in ((ep, tp), (eb, tb)):
        for k in theirs:
            np.testing.assert_array_equal(mine[k].detach().numpy(), theirs[k].detach().numpy())
            assert (mine[k].requires_grad, mine[k].is_leaf) == (theirs[k].requires_grad, theirs[k].is_leaf)
    emodels[0].eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state(emodels)
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])


def test_missing_transforms_are_named():
    with pytest.raises(AttributeError, match="torch.func.functionalize is not implemented in ember"):
        ember.func.functionalize  # noqa: B018
