"""ember.distributed.rpc and distributed autograd on 3 workers, checked against PyTorch computing the same locally.
(Run by tests/test_on_ranks.py.) Each rank calls the next one, so every worker is caller and callee at once; the
functions called remotely are this module's, which every rank has imported."""

import os
import threading
import time

import numpy as np
import pytest
import torch

import ember
import ember.distributed.autograd as dist_autograd
import ember.nn as nn
from ember.distributed.optim import DistributedOptimizer
from ember.futures import Future, wait_all


def me() -> int:
    return int(os.environ["RANK"])


def peer(offset: int = 1) -> str:
    return f"worker{(me() + offset) % int(os.environ['WORLD_SIZE'])}"


class Counter:
    def __init__(self, start):
        self.value = start

    def add(self, n=1):
        self.value += n
        return self.value


class NotBuiltin(Exception):
    pass


def scaled_sum(x, *, scale):
    return (x * scale).sum()


def where_am_i():
    return ember.distributed.rpc.get_worker_info().name


def fails(kind):
    if kind == "value":
        raise ValueError("bad value 7")
    if kind == "key":
        return {}["missing"]
    raise NotBuiltin("a module-level exception class")


def hop(x, to):
    """A call that makes a call: x * 2 sent on to ``to`` (multiplied by 3 there), plus x."""
    return ember.distributed.rpc.rpc_sync(to, ember.mul, args=(x * 2, 3)) + x


def context_grads(context_id, module_rref):
    grads = dist_autograd.get_gradients(context_id)
    return [grads.get(p) for p in module_rref.local_value().parameters()]


def parameters_of(module_rref):
    return [p.detach() for p in module_rref.local_value().parameters()]


def parameter_rrefs(module_rref):
    return [ember.distributed.rpc.RRef(p) for p in module_rref.local_value().parameters()]


def seeded_linear(seed, n_in, n_out):
    layer = nn.Linear(n_in, n_out)
    w = np.random.default_rng(seed).standard_normal((n_out, n_in + 1)).astype(np.float32)
    with ember.no_grad():
        layer.weight.copy_(ember.tensor(w[:, :n_in]))
        layer.bias.copy_(ember.tensor(w[:, n_in]))
    return layer


def torch_linear(seed, n_in, n_out):
    w = np.random.default_rng(seed).standard_normal((n_out, n_in + 1)).astype(np.float32)
    layer = torch.nn.Linear(n_in, n_out)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(w[:, :n_in]))
        layer.bias.copy_(torch.tensor(w[:, n_in]))
    return layer


def test_rpc_sync_runs_there_with_args_and_kwargs(rpc):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + me()
    got = rpc.rpc_sync(peer(), ember.add, args=(ember.tensor(x), 1.5))
    np.testing.assert_array_equal(got.numpy(), torch.add(torch.tensor(x), 1.5).numpy())
    assert rpc.rpc_sync(peer(), scaled_sum, args=(ember.tensor(x),), kwargs={"scale": 2.0}).item() == 2 * x.sum()
    assert rpc.rpc_sync(peer(), where_am_i) == peer()
    assert rpc.rpc_sync(me(), where_am_i) == f"worker{me()}"  # a worker may call itself
    ints = rpc.rpc_sync(peer(2), ember.arange, args=(5,))
    assert ints.dtype == ember.int64 and ints.tolist() == [0, 1, 2, 3, 4]
    assert rpc.rpc_sync(rpc.get_worker_info(peer()), max, args=(3, 9)) == 9  # WorkerInfo as destination


def test_tensors_travel_by_value(rpc):
    x = ember.ones(3)
    y = rpc.rpc_sync(peer(), ember.Tensor.add_, args=(x, 1))  # changed in place there, not here
    assert x.tolist() == [1, 1, 1] and y.tolist() == [2, 2, 2]
    leaf = ember.ones(2, requires_grad=True)
    back = rpc.rpc_sync(peer(), ember.mul, args=(leaf, 2))  # outside a context: requires_grad comes back, no graph
    assert back.requires_grad and back.grad_fn is None
    big = np.random.default_rng(me()).standard_normal((1024, 1024)).astype(np.float32)  # 4 MB: MPI's rendezvous
    np.testing.assert_array_equal(rpc.rpc_sync(peer(), ember.mul, args=(ember.tensor(big), 2)).numpy(), big * 2)


def test_rpc_async_returns_futures(rpc):
    futs = [rpc.rpc_async(f"worker{w}", ember.mul, args=(ember.tensor([1.0, 2.0]), w + 1)) for w in range(3)]
    assert all(isinstance(f, Future) for f in futs) and isinstance(futs[0], ember.Future)
    assert [f.wait().tolist() for f in futs] == [[1, 2], [2, 4], [3, 6]]
    chained = rpc.rpc_async(peer(), ember.add, args=(ember.ones(1), 1)).then(lambda f: f.value() * 10)
    assert chained.wait().item() == 20
    assert [v.item() for v in wait_all([rpc.rpc_async(peer(), ember.tensor, args=(k,)) for k in range(4)])] \
        == [0, 1, 2, 3]


def test_remote_exception_comes_back_as_its_type(rpc):
    for kind, exc_type, text in [("value", ValueError, "bad value 7"), ("key", KeyError, "missing"),
                                 ("custom", NotBuiltin, "module-level exception")]:
        with pytest.raises(exc_type) as info:
            rpc.rpc_sync(peer(), fails, args=(kind,))
        message = str(info.value)
        assert f"On WorkerInfo(id={(me() + 1) % 3}, name={peer()}):" in message
        assert text in message and "Traceback (most recent call last)" in message and "in fails" in message
        with pytest.raises(exc_type):
            rpc.rpc_async(peer(), fails, args=(kind,)).wait()


def test_timeout_raises_runtime_error_and_the_agent_goes_on(rpc):
    with pytest.raises(RuntimeError, match=r"RPC ran for more than set timeout \(200 ms\)"):
        rpc.rpc_sync(peer(), time.sleep, args=(1.0,), timeout=0.2)
    fut = rpc.rpc_async(peer(), time.sleep, args=(1.0,), timeout=0.1)
    with pytest.raises(RuntimeError, match="timeout"):
        fut.wait()
    time.sleep(1.0)  # the late replies arrive and are dropped
    assert rpc.rpc_sync(peer(), max, args=(1, 2), timeout=0) == 2  # 0: no timeout


def test_worker_info(rpc):
    info = rpc.get_worker_info()
    assert (info.name, info.id) == (f"worker{me()}", me()) and repr(info) == f"WorkerInfo(id={me()}, name=worker{me()})"
    assert rpc.get_worker_info("worker2") == rpc.WorkerInfo("worker2", 2)
    with pytest.raises(RuntimeError, match="could not find destination name nobody"):
        rpc.get_worker_info("nobody")
    with pytest.raises(RuntimeError, match="could not find destination name nobody"):
        rpc.rpc_sync("nobody", max, args=(1, 2))
    with pytest.raises(TypeError, match="function should be callable"):
        rpc.rpc_sync(peer(), 42)


def test_remote_rref_and_its_proxies(rpc):
    rref = rpc.remote(peer(), Counter, args=(10,))
    assert not rref.is_owner() and rref.owner() == rpc.get_worker_info(peer()) and rref.owner_name() == peer()
    assert rref.rpc_sync().add(5) == 15
    assert rref.rpc_async().add(n=2).wait() == 17
    doubled = rref.remote().add(1)  # an RRef to the result, also kept there
    assert doubled.to_here() == 18 and doubled.owner_name() == peer()
    assert rref.to_here().value == 18  # a copy of the object
    with pytest.raises(RuntimeError, match="Call it on owner"):
        rref.local_value()
    # passed back to its owner, the same RRef is the owner's
    assert rpc.rpc_sync(peer(), rpc.RRef.is_owner, args=(rref,))
    assert rpc.rpc_sync(peer(), rpc.RRef.local_value, args=(rref,)).value == 18
    mine = rpc.RRef(ember.ones(2))
    assert mine.is_owner() and mine.local_value().tolist() == [1, 1] and mine.to_here() is mine.local_value()
    assert rpc.rpc_sync(peer(), rpc.RRef.to_here, args=(mine,)).tolist() == [1, 1]


def test_remote_failure_surfaces_where_the_value_is_used(rpc):
    rref = rpc.remote(peer(), fails, args=("value",))
    with pytest.raises(ValueError, match="bad value 7"):
        rref.to_here()
    with pytest.raises(ValueError):
        rref._get_future().wait()


def test_dist_autograd_gradients_match_pytorch(rpc):
    """x (here) -> Linear on the next worker -> * w (here): the gradients of x, w and the remote layer's
    parameters, each on its own worker, as PyTorch computes them in one process."""
    seed = 100 + me()
    x_np = np.random.default_rng(seed).standard_normal((4, 3)).astype(np.float32)
    w_np = np.random.default_rng(seed + 1).standard_normal((4, 2)).astype(np.float32)
    layer = rpc.remote(peer(), seeded_linear, args=(seed, 3, 2))
    x, w = ember.tensor(x_np, requires_grad=True), ember.tensor(w_np, requires_grad=True)
    with dist_autograd.context() as context_id:
        out = layer.rpc_sync().forward(x)
        assert out.grad_fn.name() == "RecvRpcBackward"
        loss = (out.tanh() * w).sum()
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)
        remote_grads = rpc.rpc_sync(peer(), context_grads, args=(context_id, layer))
    assert set(grads) == {x, w} and x.grad is None and w.grad is None  # .grad is not touched
    tl = torch_linear(seed, 3, 2)
    tx, tw = torch.tensor(x_np, requires_grad=True), torch.tensor(w_np, requires_grad=True)
    (tl(tx).tanh() * tw).sum().backward()
    np.testing.assert_allclose(grads[x].numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[w].numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(remote_grads[0].numpy(), tl.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(remote_grads[1].numpy(), tl.bias.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_dist_autograd_through_nested_calls_and_repeated_use(rpc):
    """x goes to the next worker, which sends 2x on to the one after; x is used twice here (two paths back)."""
    x_np = np.linspace(-1, 1, 5).astype(np.float32) + me()
    x = ember.tensor(x_np, requires_grad=True)
    with dist_autograd.context() as context_id:
        y = rpc.rpc_sync(peer(), hop, args=(x, peer(2)))
        z = rpc.rpc_sync(peer(2), ember.sin, args=(x,))
        dist_autograd.backward(context_id, [(y * z).sum()])
        dist_autograd.backward(context_id, [x.sum() * 2])  # a second backward in the context adds to the first
        got = dist_autograd.get_gradients(context_id)[x]
    tx = torch.tensor(x_np, requires_grad=True)
    ((tx * 2 * 3 + tx) * torch.sin(tx)).sum().backward()
    np.testing.assert_allclose(got.numpy(), tx.grad.numpy() + 2, rtol=1e-5, atol=1e-6)


def test_dist_autograd_context_errors(rpc):
    with dist_autograd.context() as context_id:
        with pytest.raises(RuntimeError, match="Already have an autograd context id"):
            with dist_autograd.context():
                pass
        with pytest.raises(RuntimeError, match="all roots need to be scalar"):
            dist_autograd.backward(context_id, [ember.ones(2, requires_grad=True)])
        with pytest.raises(RuntimeError, match="requires_grad not set on root"):
            dist_autograd.backward(context_id, [ember.ones(())])
        assert context_id >> 48 == me()  # the worker's id in the high bits, as PyTorch's
    with pytest.raises(RuntimeError, match=f"Could not find autograd context with id: {context_id}"):
        dist_autograd.get_gradients(context_id)


def test_distributed_optimizer_matches_pytorch_sgd(rpc):
    seed = 200 + me()
    layer = rpc.remote(peer(), seeded_linear, args=(seed, 3, 1))
    opt = DistributedOptimizer(ember.optim.SGD, rpc.rpc_sync(peer(), parameter_rrefs, args=(layer,)), lr=0.1,
                               momentum=0.9)
    tl = torch_linear(seed, 3, 1)
    topt = torch.optim.SGD(tl.parameters(), lr=0.1, momentum=0.9)
    data = np.random.default_rng(seed).standard_normal((3, 8, 3)).astype(np.float32)
    for batch in data:
        with dist_autograd.context() as context_id:
            loss = (layer.rpc_sync().forward(ember.tensor(batch)) ** 2).mean()
            dist_autograd.backward(context_id, [loss])
            opt.step(context_id)
        topt.zero_grad()
        (tl(torch.tensor(batch)) ** 2).mean().backward()
        topt.step()
    weight, bias = rpc.rpc_sync(peer(), parameters_of, args=(layer,))
    np.testing.assert_allclose(weight.detach().numpy(), tl.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias.detach().numpy(), tl.bias.detach().numpy(), rtol=1e-5, atol=1e-6)


_shared: dict = {}
_shared_lock = threading.Lock()


def shared_weight():
    """On worker0: one parameter every rank trains (made by the first caller)."""
    with _shared_lock:
        if "w" not in _shared:
            _shared["w"] = nn.Parameter(ember.zeros(4))
            _shared["done"] = 0
        return ember.distributed.rpc.RRef(_shared["w"])


def finished():
    with _shared_lock:
        _shared["done"] += 1


def count_finished():
    with _shared_lock:
        return _shared["done"]


def test_concurrent_trainers_on_one_parameter_server(rpc):
    """Every rank steps worker0's parameter at the same time. The loss (a sum of picked entries) has a gradient that
    depends on the batch but not on the parameter, so whatever the order of the steps the result must be the sum
    of every rank's updates. (Its backward reads no saved copy of the parameter, which another rank's step changes
    in place meanwhile.)"""
    w_rref = rpc.rpc_sync("worker0", shared_weight)
    opt = DistributedOptimizer(ember.optim.SGD, [w_rref], lr=0.5)
    batches = np.random.default_rng(7).integers(0, 4, size=(3, 5, 6))  # [rank, step]: entries to pick
    for picks in batches[me()]:
        with dist_autograd.context() as context_id:
            loss = rpc.rpc_sync("worker0", picked_sum, args=(w_rref, ember.tensor(picks)))  # where w lives
            dist_autograd.backward(context_id, [loss])
            opt.step(context_id)
    rpc.rpc_sync("worker0", finished)
    deadline = time.monotonic() + 60
    while rpc.rpc_sync("worker0", count_finished) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    final = rpc.rpc_sync("worker0", detached_value, args=(w_rref,))
    np.testing.assert_allclose(final.numpy(), -0.5 * np.bincount(batches.ravel(), minlength=4), rtol=1e-6)


def picked_sum(rref, picks):
    return rref.local_value()[picks].sum()


def detached_value(rref):
    return rref.local_value().detach()
