"""The gradient store lays each slot out as its parameter (ember/autograd/grad_store.py): a channels-last or
transposed parameter stepped by an optimizer gets a ``.grad`` with PyTorch's strides, step after step, whatever
``zero_grad`` does. (Under DDP on real ranks: tests/ranks/rank_ddp.py.)"""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def _conv_pair(fw_first_layout=True):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Conv2d(4, 2, 1))
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Conv2d(4, 2, 1))
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    return model, tmodel


X = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)


def _layouts(model):
    return [(p.grad.stride(), p.grad.is_contiguous(memory_format=ember.channels_last)) for p in model.parameters()]


def _tlayouts(model):
    return [(p.grad.stride(), p.grad.is_contiguous(memory_format=torch.channels_last)) for p in model.parameters()]


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("opt", ["Adam", "SGD"])
def test_a_channels_last_conv_weight_keeps_its_layout_in_grad_step_after_step(opt, set_to_none):
    model, tmodel = _conv_pair()
    model.to(memory_format=ember.channels_last)
    tmodel.to(memory_format=torch.channels_last)
    o = getattr(ember.optim, opt)(model.parameters(), lr=0.01)
    to = getattr(torch.optim, opt)(tmodel.parameters(), lr=0.01)
    x = ember.tensor(X).to(memory_format=ember.channels_last)
    tx = torch.tensor(X).to(memory_format=torch.channels_last)
    for _ in range(3):
        o.zero_grad(set_to_none=set_to_none)
        to.zero_grad(set_to_none=set_to_none)
        model(x).square().sum().backward()
        tmodel(tx).square().sum().backward()
        assert _layouts(model) == _tlayouts(tmodel)
        for p, q in zip(model.parameters(), tmodel.parameters()):
            assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)
        o.step()
        to.step()
    for p, q in zip(model.parameters(), tmodel.parameters()):
        assert_close(p, q, atol=1e-4, rtol=1e-4)


def test_the_store_still_holds_the_channels_last_gradients_end_to_end():
    model, _ = _conv_pair()
    model.to(memory_format=ember.channels_last)
    params = list(model.parameters())
    ember.optim.Adam(params)
    model(ember.tensor(X)).sum().backward()
    store = params[0]._grad_slot[0]
    assert all(store.holds(i, p.grad) for i, p in enumerate(params))
    assert np.shares_memory(store.flat, params[0].grad.numpy())
    from ember.autograd.grad_store import flat_grads
    flat = flat_grads(params)
    assert flat is store.flat and flat.flags.c_contiguous
    # the flat buffer's stretch of the weight is its gradient in channels-last order
    w = params[0].grad.numpy()
    assert np.array_equal(flat[:w.size], w.transpose(0, 2, 3, 1).reshape(-1))


@pytest.mark.parametrize("shape", [(3, 5), (4, 4)])
def test_a_transposed_parameter_gets_a_transposed_grad_from_the_store(shape):
    # (a square one too: its strides (1, n) are the row-major ones, (n, 1), read back to front)
    base = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    p = ember.nn.Parameter(ember.tensor(base).t())
    q = torch.nn.Parameter(torch.tensor(base).t())
    o, to = ember.optim.Adam([p]), torch.optim.Adam([q])
    for _ in range(2):
        (p * ember.arange(float(shape[0]))).sum().backward()
        (q * torch.arange(float(shape[0]))).sum().backward()
        assert p.grad.stride() == q.grad.stride()
        assert_close(p.grad, q.grad)
        o.step(), to.step()
        o.zero_grad(), to.zero_grad()


def test_a_layout_changed_after_the_optimizer_was_built_is_followed():
    # module.to(memory_format=...) after the optimizer: the gradient follows the parameter's new layout
    model, tmodel = _conv_pair()
    o, to = ember.optim.Adam(model.parameters()), torch.optim.Adam(tmodel.parameters())
    model.to(memory_format=ember.channels_last)
    tmodel.to(memory_format=torch.channels_last)
    for _ in range(2):
        o.zero_grad(), to.zero_grad()
        model(ember.tensor(X)).sum().backward()
        tmodel(torch.tensor(X)).sum().backward()
        assert _layouts(model) == _tlayouts(tmodel)
        for p, q in zip(model.parameters(), tmodel.parameters()):
            assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)
        o.step(), to.step()


def test_a_grad_buckets_gradients_are_laid_out_as_the_store_lays_the_slots_out():
    # (a DDP communication hook's view of a bucket: its gradients() are views of the flat buffer, each as its slot)
    from ember.distributed.grad_bucket import GradBucket

    model, _ = _conv_pair()
    model.to(memory_format=ember.channels_last)
    params = list(model.parameters())
    ember.optim.SGD(params, lr=0.1)
    model(ember.tensor(X)).sum().backward()
    store = params[0]._grad_slot[0]
    bucket = GradBucket(0, ember.Tensor._make(store.flat), params, store.offsets[:-1], True)
    for g, p in zip(bucket.gradients(), params):
        assert g.stride() == p.stride() == p.grad.stride()
        assert np.shares_memory(g.numpy(), store.flat)
        assert np.array_equal(g.numpy(), p.grad.numpy())


@pytest.mark.parametrize("make", ["randn(1, 3).t()", "randn(2, 1, 3, 3).to(memory_format={m}.channels_last)",
                                  "randn(2, 3, 1, 1).to(memory_format={m}.channels_last)",
                                  "randn(3, 1, 2).permute(1, 0, 2)"])
@pytest.mark.parametrize("opt", ["Adam", "SGD", None])
def test_a_size_one_dimension_steps_in_grad_as_the_incoming_gradient_does(make, opt):
    # (a channels-last conv weight of one input channel: PyTorch's AccumulateGrad keeps a gradient whose dimensions
    # longer than 1 step as the parameter's, whatever its size-1 dimensions' steps; the store's slots too)
    got = []
    for m in (ember, torch):
        m.manual_seed(0)
        w = m.nn.Parameter(eval(make.format(m="m"), {"m": m, **vars(m)}))
        o = getattr(m.optim, opt)([w], lr=0.1) if opt else None
        strides = [w.stride()]
        for set_to_none in (True, False, True):
            if o is not None:
                o.zero_grad(set_to_none=set_to_none)
            elif set_to_none:
                w.grad = None
            w.exp().sum().backward()
            strides.append(w.grad.stride())
            if o is not None:
                o.step()
        got.append(strides)
    assert got[0] == got[1]


@pytest.mark.parametrize("make, loss", [(make, loss) for make in ("zeros(1, 1)", "zeros(1)", "zeros(1, 1, 1).permute(2, 0, 1)")
                                         for loss in ("sum", "mean", "mul")] + [("zeros(5, 1).t()", "sum"),
                                                                                ("zeros(5, 1).t()", "mul")])
@pytest.mark.parametrize("opt", ["SGD", None])
def test_an_expanded_gradient_is_laid_out_as_the_parameter_in_the_store_too(make, loss, opt):
    # (p.sum()'s gradient of a one-element p steps by 0 in its size-1 dimensions: PyTorch's layout contract refuses
    # a 0 step there, so AccumulateGrad lays .grad out as the parameter; the store gave it the strides 0)
    got = []
    for m in (ember, torch):
        w = m.nn.Parameter(eval(make, {"m": m, **vars(m)}))
        o = m.optim.SGD([w], lr=0.1) if opt else None
        strides = []
        for _ in range(2):
            (w * 2).sum().backward() if loss == "mul" else getattr(w, loss)().backward()
            strides.append(w.grad.stride())
            if o is not None:
                o.step()
                o.zero_grad()
        got.append(strides)
    assert got[0] == got[1]
