"""DDP's reducer (``ember/distributed/reducer.py``) in this process, on a stand-in communicator: a collective that
does not complete, named with DDP's iteration and the rank; a communication hook's bucket (not divided by the
world size) and its result; a hook registered twice or late. On real ranks, against PyTorch's DDP:
tests/ranks/rank_ddp_vs_torch.py."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

import ember
from ember.distributed.reducer import Reducer


class Twins:
    """A communicator of ``size`` ranks that all compute what this one does (rank 0): a bucket's or the used
    counts' all-reduce multiplies by ``size``, the lockstep table's gives every rank this rank's row; each is
    complete at once, except the ones ``failing`` names ("bucket", "table", "used"), whose wait raises as a
    timed-out collective's does."""

    rank = 0

    def __init__(self, size: int = 1):
        self.size = size
        self.failing: tuple = ()

    def iallreduce_(self, array, op):
        role = "table" if array.ndim == 2 else "used" if array.dtype == np.int32 else "bucket"
        if role == "table":
            array[...] = array[self.rank]
        else:
            array *= self.size

        def wait():
            if role in self.failing:
                raise RuntimeError(f"the {role} collective timed out")

        return SimpleNamespace(is_completed=lambda: role not in self.failing, wait=wait)


class EmberDDP:
    """What ember's DistributedDataParallel does around the reducer on one rank: ``prepare_for_backward`` before
    each forward whose backward is synchronised."""

    def __init__(self, module, comm, **kwargs):
        self.module = module
        named = list(module.named_parameters())
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], comm, **kwargs)

    def __call__(self, *args):
        self.reducer.prepare_for_backward()
        return self.module(*args)


@pytest.mark.parametrize("failing,find_unused,what", [
    (("bucket",), False, "the all-reduce of gradient bucket 0"),
    (("table",), False, "the all-reduce of the lockstep table"),
    (("used",), True, "the all-reduce of which parameters each rank used"),
])
def test_a_collective_that_does_not_complete_is_named_with_the_iteration_and_rank(failing, find_unused, what):
    """A wait that fails (the process group's timeout: another rank stopped or ran other collectives) names the
    collective, DDP's iteration and this rank, and keeps the communicator's own message and exception."""
    ember.manual_seed(0)
    model = ember.nn.Linear(3, 2)
    ddp = EmberDDP(model, Twins(), find_unused_parameters=find_unused)
    for _ in range(2):  # iterations 1 and 2 complete
        model.zero_grad()
        ddp(ember.ones(1, 3)).sum().backward()
    ddp.reducer.comm.failing = failing
    model.zero_grad()
    with pytest.raises(RuntimeError) as raised:
        ddp(ember.ones(1, 3)).sum().backward()
    assert str(raised.value) == (
        f"DistributedDataParallel: {what} (iteration 3) did not complete on rank 0: another rank did not take part "
        f"(it stopped, is stuck, or ran a different number of backward passes). the {failing[0]} collective timed out")
    assert isinstance(raised.value.__cause__, RuntimeError)


def test_a_hook_whose_callback_raises_is_named_as_this_ranks_error_not_another_ranks():
    """A hook's ``then`` callback that raises (a bug in the hook, on this rank) is reported as that: the hook's
    error on this rank, with its type and message, not as a collective another rank did not join."""
    ember.manual_seed(0)
    model = ember.nn.Linear(3, 2)
    ddp = EmberDDP(model, Twins(2))

    def buggy(state, bucket):
        return _future_of(bucket.buffer()).then(lambda fut: fut.value().no_such_method())

    ddp.reducer.register_comm_hook(None, buggy)
    with pytest.raises(RuntimeError) as raised:
        ddp(ember.ones(1, 3)).sum().backward()
    message = str(raised.value)
    assert message.startswith("DistributedDataParallel: the communication hook of gradient bucket 0 (iteration 1) "
                              "failed on rank 0: the communication hook raised AttributeError on this rank"), message
    assert "no_such_method" in message and "another rank" not in message, message


def _future_of(value):
    fut = ember.futures.Future()
    fut.set_result(value)
    return fut


def test_a_communication_hook_sees_the_unscaled_bucket_and_its_result_is_the_gradient():
    """The hook gets the bucket's local gradients, not divided by the world size, and its Future's tensor (a new
    one, or the bucket itself changed in place) becomes the gradients; a Future of anything else is refused."""
    ember.manual_seed(0)
    x = ember.ones(2, 3)
    ref = ember.nn.Linear(3, 2)
    ref(x).sum().backward()
    want = [p.grad.numpy().copy() for p in ref.parameters()]

    for hook, factor in ((lambda state, b: _future_of(b.buffer() * 3.0), 3.0),
                         (lambda state, b: _future_of(b.buffer().mul_(2.0)), 2.0)):
        ember.manual_seed(0)
        model = ember.nn.Linear(3, 2)
        ddp = EmberDDP(model, Twins(2))  # (two ranks' sum, never divided by 2: the hook averages if it wants)
        ddp.reducer.register_comm_hook(None, hook)
        ddp(x).sum().backward()
        for p, w in zip(model.parameters(), want):
            np.testing.assert_allclose(p.grad.numpy(), w * factor, rtol=1e-6)

    for result, held in ((ember.zeros(3), "Tensor"), ([1.0], "list")):
        ember.manual_seed(0)
        model = ember.nn.Linear(3, 2)
        ddp = EmberDDP(model, Twins())
        ddp.reducer.register_comm_hook(None, lambda state, b, result=result: _future_of(result))
        with pytest.raises(RuntimeError, match=rf"^DistributedDataParallel: the communication hook's Future for "
                                               rf"bucket 0 holds {held}, not the bucket's 8 reduced values$"):
            ddp(x).sum().backward()


def test_a_communication_hook_is_registered_once_at_any_point_between_backwards():
    """PyTorch's message for a second hook; as PyTorch, a hook registered after forwards and backwards have run
    is taken by the next backward (PyTorch 2.13 raises nothing there); not while a backward reduces its buckets."""
    model = ember.nn.Linear(3, 2)
    ddp = EmberDDP(model, Twins())
    ddp.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))
    with pytest.raises(RuntimeError, match=r"^register_comm_hook or register_builtin_comm_hook can only be called "
                                           r"once\.$"):
        ddp.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))
    with pytest.raises(TypeError, match=r"^Communication hook must be callable\.$"):  # (PyTorch's, before any use)
        ember.nn.parallel.DistributedDataParallel.register_comm_hook(SimpleNamespace(reducer=None), None, 3)
    ember.manual_seed(0)
    late_model = ember.nn.Linear(3, 2)
    late = EmberDDP(late_model, Twins(2))
    x = ember.ones(1, 3)
    late(x).sum().backward()  # the built-in all-reduce: two equal ranks' mean, the local gradient
    want = [p.grad.numpy().copy() for p in late_model.parameters()]
    out = late(x)  # after a forward too
    late.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer() * 3))  # (the hook's own result)
    late_model.zero_grad()
    out.sum().backward()
    for p, w in zip(late_model.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), 3 * w, rtol=1e-6)
    busy = EmberDDP(ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.Linear(3, 2)), Twins(), bucket_cap_mb=1e-6)
    busy.reducer._next_launch = 1  # (as in the middle of a backward's bucket launches)
    with pytest.raises(RuntimeError, match="^register_comm_hook cannot be called while a backward"):
        busy.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))


def test_a_gradient_made_final_twice_in_one_backward_is_pytorchs_error():
    """A parameter used inside and outside a reentrant checkpoint gets its gradient made final by the checkpoint's
    inner backward, then by the outer one: PyTorch's error (the first may be all-reduced already), naming the
    parameter and its index; a non-reentrant checkpoint makes it final once."""
    from ember.utils.checkpoint import checkpoint

    for reentrant in (True, False):
        ember.manual_seed(0)
        model = ember.nn.ModuleDict({"a": ember.nn.Linear(3, 3), "b": ember.nn.Linear(3, 1)})
        ddp = EmberDDP(model, Twins())
        x = ember.randn(2, 3, requires_grad=True)
        ddp.reducer.prepare_for_backward()  # (DDP's forward)
        loss = model["b"](model["a"](checkpoint(model["a"], x, use_reentrant=reentrant))).sum()
        if reentrant:
            with pytest.raises(RuntimeError, match=r"^Expected to mark a variable ready only once\.(.|\n)*Parameter "
                                                   r"at index [01] with name a\.(weight|bias) has been marked as "
                                                   r"ready twice\. This means that multiple autograd engine  hooks"):
                loss.backward()
        else:
            loss.backward()
            assert all(all(r) for r in ddp.reducer._ready)


class SlowTwins(Twins):
    """Twins whose bucket all-reduces take ``seconds`` to wait for (another rank arriving late), counted as a
    blocked communication wait of this thread, as ``Work.wait`` counts one."""

    def __init__(self, seconds: float):
        super().__init__()
        self.seconds = seconds

    def iallreduce_(self, array, op):
        work = super().iallreduce_(array, op)
        if array.ndim == 2 or array.dtype == np.int32:  # (the lockstep table, the used counts: at once)
            return work

        def wait():  # (blocked as a real Work's wait is: counted where the straggler rule reads it)
            from ember.distributed import _waits

            began = _waits.begin()
            time.sleep(self.seconds)
            _waits.end(began)
            work.wait()

        return SimpleNamespace(is_completed=lambda: False, wait=wait)


def test_each_bucket_is_traced_and_the_wait_rides_in_the_next_backwards_lockstep_row():
    """Under a trace recording every bucket's launch is spanned in bucket order (its gradients gathered and
    scaled, its non-finite scan, the start of its all-reduce, then the all-reduce to its wait), and the backward's
    wait for its all-reduces is one span; that wait, in microseconds, is stamped into the next backward's lockstep
    row, the straggler monitor's input (a wait of at least 20 ms per bucket: at least 20,000)."""
    from ember.diagnostics import trace

    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(32, 32), ember.nn.Linear(32, 32), ember.nn.Linear(32, 1))
    ddp = EmberDDP(model, SlowTwins(0.02), bucket_cap_mb=0.005)
    n = len(ddp.reducer.buckets)
    assert n >= 2
    with trace.record() as tr:
        ddp(ember.ones(2, 32)).sum().backward()
    for name in ("scale", "non-finite scan", "start all-reduce", "all-reduce"):
        assert [e["args"]["bucket"] for e in tr.spans("ddp", name)] == list(range(n)), name
    (waited,) = tr.spans("ddp", "wait all-reduces")
    assert waited["dur"] >= 0.02e6 * n
    assert ddp.reducer.table[0][4] == 0  # (the first backward's row: no wait before it)
    model.zero_grad()
    ddp(ember.ones(2, 32)).sum().backward()
    assert 0.02e6 * n <= ddp.reducer.table[0][4] <= waited["dur"] + 1  # (the traced wait, measured inside its span)
