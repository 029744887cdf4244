"""Tensors shared between processes, against PyTorch's semantics: ``share_memory_`` / ``is_shared`` /
``Module.share_memory`` (every view follows its storage), children that write what the parent reads (fork and
spawn, ``Process`` args, ``Queue``, ``spawn``), the memory released afterwards, and Hogwild training."""

import gc
import os
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch
from autodiff_oracle import same_error

import ember
import ember.multiprocessing as mp
import ember.nn as nn
import ember.nn.functional as F

START_METHODS = ["fork", "spawn"]


def ember_memfds() -> list[str]:
    """This process's descriptors of shared tensor memory."""
    return [fd for fd in os.listdir("/proc/self/fd")
            if "ember-shared-tensor" in os.path.realpath(f"/proc/self/fd/{fd}")]


def shm_files() -> set[str]:
    # ember's shared memory is memory files, never named files; other programs on the machine (MPI, queue locks)
    # come and go in /dev/shm, so only a name of ours would be a leak.
    return {f for f in os.listdir("/dev/shm") if "ember" in f}


@pytest.fixture
def no_leaks():
    """The test leaves no shared tensor memory behind, here or in /dev/shm."""
    gc.collect()
    before_fds, before_files = set(ember_memfds()), shm_files()
    yield
    gc.collect()
    assert set(ember_memfds()) <= before_fds
    assert shm_files() <= before_files


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "bool"])
def test_share_memory_keeps_values_and_moves_every_view(dtype, no_leaks):
    for lib in (ember, torch):
        x = lib.arange(12).reshape(3, 4).to(getattr(lib, dtype))
        before = x.float().tolist()
        row, col, alias, detached = x[1], x[:, 2], x.data, x.detach()
        assert not x.is_shared()
        assert x.share_memory_() is x
        assert all(t.is_shared() for t in (x, row, col, alias, detached)), lib.__name__
        assert x.float().tolist() == before
        assert x.untyped_storage().data_ptr() == row.untyped_storage().data_ptr() == col.untyped_storage().data_ptr()
        assert (row.storage_offset(), col.stride()) == (4, (4,))
        x[1, 2] = 1
        assert row[2].item() == col[1].item() == alias[1, 2].item() == detached[1, 2].item() == 1, lib.__name__
        ptr = x.data_ptr()
        x.share_memory_()  # already shared: nothing moves
        assert x.data_ptr() == ptr
        assert not x.clone().is_shared()
    del x, row, col, alias, detached


def test_moving_a_view_moves_every_tensor_of_its_storage():
    lone = ember.ones(4)
    lone.share_memory_()
    assert lone.is_shared()
    base = ember.ones(4)
    view = base[1:]
    view.share_memory_()  # moving a view moves its base too: found by the search of the heap
    assert base.is_shared()
    base[1] = 5.0
    assert view[0].item() == 5.0


def test_module_share_memory_shares_parameters_buffers_and_grads(no_leaks):
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        m[0].weight.grad = lib.ones(2, 3)
        w = m[0].weight
        values = [t.detach().clone() for t in m.state_dict().values()]
        assert m.share_memory() is m
        assert all(t.is_shared() for t in m.state_dict().values()), lib.__name__
        assert m[0].weight is w and w.grad.is_shared() and isinstance(w, lib.nn.Parameter) and w.requires_grad
        for v, t in zip(values, m.state_dict().values()):
            assert v.tolist() == t.tolist()
    del m, w


def _write_args(t, view, param):
    t[0] = 42.0
    view.add_(1.0)  # a view of t: the write lands in t's storage
    with ember.no_grad():
        param.mul_(2.0)


@pytest.mark.parametrize("method", START_METHODS)
def test_child_writes_shared_tensors_passed_as_process_args(method, no_leaks):
    ctx = mp.get_context(method)
    t = ember.zeros(4).share_memory_()
    param = nn.Parameter(ember.ones(2))
    param.share_memory_()
    p = ctx.Process(target=_write_args, args=(t, t[2:], param))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert t.tolist() == [42.0, 0.0, 1.0, 1.0] and param.tolist() == [2.0, 2.0]
    del t, param


def _fill_from_queue(inbox, outbox):
    a, part, param = inbox.get(), inbox.get(), inbox.get()
    a.fill_(7.0)  # a was not shared when it was put: sending it moved it into shared memory
    part[0] = -1.0
    outbox.put((type(param).__name__, param.requires_grad, part.data_ptr() - a.data_ptr(), a.is_shared()))
    outbox.put(ember.full((2,), 5.0))  # from the child: the parent maps what the child made
    inbox.get()  # the sender stays alive until the receiver has its memory (as PyTorch's docs ask)


@pytest.mark.parametrize("method", START_METHODS)
def test_tensors_through_a_queue_are_shared_both_ways(method, no_leaks):
    ctx = mp.get_context(method)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_fill_from_queue, args=(inbox, outbox))
    p.start()
    a = ember.zeros(3)
    inbox.put(a)
    inbox.put(a[1:])  # a second message: the child finds the storage mapped and gives a view of it
    inbox.put(nn.Parameter(ember.ones(1), requires_grad=False))
    assert outbox.get(timeout=60) == ("Parameter", False, 4, True)
    from_child = outbox.get(timeout=60)
    inbox.put("received")
    p.join(60)
    assert p.exitcode == 0
    assert a.is_shared() and a.tolist() == [7.0, -1.0, 7.0]
    assert from_child.is_shared() and from_child.tolist() == [5.0, 5.0]
    inbox.close(), outbox.close()
    del a, from_child


def test_views_in_one_message_arrive_as_views_of_one_storage():
    x = ember.arange(6.0)
    a, b = ForkingPickler.loads(ForkingPickler.dumps([x, x.view(2, 3).t()]))
    assert x.is_shared() and a.data_ptr() == b.data_ptr() == x.data_ptr()  # mapped once in this process
    assert b.stride() == (1, 3) and b.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_a_non_leaf_that_requires_grad_is_refused_as_torch():
    same_error(lambda lib: ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2))
    leaf = ForkingPickler.loads(ForkingPickler.dumps(ember.ones(2, requires_grad=True)))
    assert leaf.requires_grad and leaf.is_leaf and leaf.is_shared()


def test_memory_is_released_when_the_last_tensor_goes():
    gc.collect()
    before = len(ember_memfds())
    x = ember.ones(1000).share_memory_()
    view = x[10:]
    assert len(ember_memfds()) > before
    del x
    assert len(ember_memfds()) > before and view.sum().item() == 990.0  # the view still uses the memory
    del view
    gc.collect()
    assert len(ember_memfds()) == before


def _big_op(queue):
    queue.put(float(F.gelu(ember.ones(1 << 20)).sum()))


def test_a_forked_child_runs_ops_after_the_parent_used_its_thread_pool():
    saved = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        F.gelu(ember.ones(1 << 20)).sum()  # large enough for ember's intra-op threads
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        p = ctx.Process(target=_big_op, args=(queue,))
        p.start()
        assert queue.get(timeout=60) == pytest.approx(float(torch.nn.functional.gelu(torch.ones(1 << 20)).sum()))
        p.join(60)
    finally:
        ember.set_num_threads(saved)


# ----------------------------------------------------------------------------- Hogwild
def _regression_data():
    g = np.random.default_rng(0)
    x = g.standard_normal((256, 8)).astype(np.float32)
    y = x @ g.standard_normal((8, 1)).astype(np.float32) + 0.5
    return ember.from_numpy(x), ember.from_numpy(y)


def _full_loss(model, x, y) -> float:
    with ember.no_grad():
        return F.mse_loss(model(x), y).item()


def _hogwild_train(rank, model, x, y, steps):
    """PyTorch's examples/mnist_hogwild train(): each process runs SGD on the shared parameters in place."""
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (16,))
        opt.zero_grad()
        F.mse_loss(model(x[idx]), y[idx]).backward()
        opt.step()


@pytest.mark.parametrize("start", ["fork Process", "spawn"])  # spawn: ember.multiprocessing.spawn pickles the model
def test_hogwild_two_processes_train_one_shared_model(start, no_leaks):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    model.share_memory()
    x, y = _regression_data()
    start_loss, start_weights = _full_loss(model, x, y), [p.detach().clone() for p in model.parameters()]
    if start == "spawn":
        mp.spawn(_hogwild_train, args=(model, x, y, 60), nprocs=2)
    else:
        ctx = mp.get_context("fork")
        workers = [ctx.Process(target=_hogwild_train, args=(rank, model, x, y, 60)) for rank in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(120)
        assert [w.exitcode for w in workers] == [0, 0]
    # Only the children trained: the parent's parameters changed because they are the children's.
    for before, after in zip(start_weights, model.parameters()):
        assert not np.allclose(before.numpy(), after.detach().numpy())
    assert _full_loss(model, x, y) < 0.5 * start_loss
    del model, x, y
