"""Embedding's dense gradient built by backward straight in its slot of the gradient store (the optimizer's,
autograd/grad_store.py), and the training that follows equal to PyTorch's."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd.grad_store import flat_grads
from ember.nn._ops.sparse import Embedding
from tests.oracle import assert_close

OPTIMS = {"sgd": ("SGD", dict(lr=0.5)), "momentum": ("SGD", dict(lr=0.5, momentum=0.9, weight_decay=0.01)),
          "adam": ("Adam", dict(lr=0.05))}


def _model(fw, padding_idx=None):
    fw.manual_seed(0)
    return fw.nn.Embedding(20, 4, padding_idx=padding_idx), fw.nn.Linear(4, 3)


def _copy(dst, src):
    for p, q in zip(dst, src):
        p.data = ember.tensor(q.detach().numpy().copy())


def _loss(fw, emb, head, x, y):
    return fw.nn.functional.cross_entropy(head(emb(fw.tensor(x)).mean(dim=1)), fw.tensor(y))


def _data(steps):
    rng = np.random.default_rng(1)
    return [(rng.integers(0, 20, (6, 5)), rng.integers(0, 3, 6)) for _ in range(steps)]


@pytest.mark.parametrize("optim", list(OPTIMS))
@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("backwards", [1, 2])
def test_embedding_grad_lands_in_the_store_and_training_matches_torch(optim, set_to_none, backwards, monkeypatch):
    name, kwargs = OPTIMS[optim]
    emb, head = _model(ember, padding_idx=2)
    temb, thead = _model(torch, padding_idx=2)
    params, tparams = [*emb.parameters(), *head.parameters()], [*temb.parameters(), *thead.parameters()]
    _copy(params, tparams)
    opt, topt = getattr(ember.optim, name)(params, **kwargs), getattr(torch.optim, name)(tparams, **kwargs)
    store = emb.weight._grad_slot[0]
    built_in_place = []  # per backward: did Embedding's backward build the gradient inside the store?
    backward = Embedding.backward
    monkeypatch.setattr(Embedding, "backward", lambda self, g: built_in_place.append(
        np.shares_memory((out := backward(self, g))[0], store.flat)) or out)
    for step, (x, y) in enumerate(_data(5)):
        for fw, e, h, o in ((ember, emb, head, opt), (torch, temb, thead, topt)):
            o.zero_grad(set_to_none=set_to_none)
            for k in range(backwards):
                _loss(fw, e, h, x[:, k:], y).backward()
        grad = emb.weight.grad._data
        assert_close(emb.weight.grad, temb.weight.grad, atol=1e-6)
        # the first backward after zero_grad builds the gradient in place (one after it adds into .grad)
        assert built_in_place[-backwards] == set_to_none or step == 0
        assert np.shares_memory(grad, store.flat) and flat_grads(params) is not None
        del grad
        opt.step()
        topt.step()
        assert np.shares_memory(emb.weight.grad._data, store.flat)  # step reads .grad where it lies
        for p, t in zip(params, tparams):
            assert_close(p, t, atol=1e-5, rtol=1e-4)


def test_a_hook_that_keeps_the_gradient_gets_its_own_copy():
    emb, head = _model(ember)
    params = [*emb.parameters(), *head.parameters()]
    opt = ember.optim.SGD(params, lr=0.1)
    kept = []
    x, y = _data(1)[0]
    for _ in range(2):  # the first step lays the buffer out; the second backward writes into it
        opt.zero_grad()
        _loss(ember, emb, head, x, y).backward()
        opt.step()
    handle = emb.weight.register_hook(kept.append)
    opt.zero_grad()
    _loss(ember, emb, head, x, y).backward()
    assert not np.shares_memory(kept[0]._data, emb.weight.grad._data)
    before = kept[0].numpy().copy()
    handle.remove()
    opt.step()
    opt.zero_grad()
    _loss(ember, emb, head, x, 2 - y).backward()  # another gradient, into the buffer
    assert np.array_equal(kept[0].numpy(), before)


def test_autograd_grad_never_returns_the_buffer():
    emb, head = _model(ember)
    params = [*emb.parameters(), *head.parameters()]
    opt = ember.optim.SGD(params, lr=0.1)
    x, y = _data(1)[0]
    for _ in range(2):
        opt.zero_grad()
        _loss(ember, emb, head, x, y).backward()
        opt.step()
    opt.zero_grad()
    (g,) = ember.autograd.grad(_loss(ember, emb, head, x, y), [emb.weight])
    assert emb.weight.grad is None
    before = g.numpy().copy()
    _loss(ember, emb, head, x, 2 - y).backward()
    assert flat_grads(params) is not None  # this backward used the store ...
    assert np.array_equal(g.numpy(), before)  # ... which autograd.grad's result is not


def test_a_weight_used_by_two_lookups_and_a_tied_layer_in_one_backward():
    models = {}
    for fw in (ember, torch):
        emb, head = _model(fw)
        models[fw] = (emb, head, fw.optim.SGD([*emb.parameters(), *head.parameters()], lr=0.1))
    _copy([*models[ember][0].parameters(), *models[ember][1].parameters()],
          [*models[torch][0].parameters(), *models[torch][1].parameters()])
    for x, y in _data(4):
        for fw, (emb, head, opt) in models.items():
            opt.zero_grad()
            h = emb(fw.tensor(x)).mean(dim=1) + emb(fw.tensor(x[:, :2])).sum(dim=1)
            logits = h @ emb.weight[:3].t()  # tied: the table is also the output layer
            (fw.nn.functional.cross_entropy(logits, fw.tensor(y)) + head(h).square().mean()).backward()
            opt.step()
        assert_close(models[ember][0].weight, models[torch][0].weight, atol=1e-5, rtol=1e-4)


def test_backward_after_the_table_was_freed_does_not_fail():
    # The graph outlives the leaf it reads: its gradient has nowhere to go, and backward still runs.
    weight = ember.randn(10, 3, requires_grad=True)
    out = ember.nn.functional.embedding(ember.tensor([1, 2, 2]), weight).sum()
    del weight
    out.backward()
