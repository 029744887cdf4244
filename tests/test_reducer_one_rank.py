"""DDP's reducer (``ember/distributed/reducer.py``) in this process, on a communicator of ranks that all compute the same, against
PyTorch's DistributedDataParallel on a gloo group of one rank in the same process: PyTorch's rule for parameters
a backward did not use (``find_unused_parameters=True``: a ``.grad`` left from before is kept, None stays None),
through gradients reduced in place, gradients assigned by hand (reduced through a staging copy, or adopted by
the bucket view), several buckets; and the reducer's errors (a collective that does not complete, a
communication hook's wrong result, a hook registered late). The same on several ranks: tests/ranks/rank_ddp.py
and tests/programs/ddp_unused_params.py."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.distributed as tdist
from torch.nn.parallel import DistributedDataParallel as TorchDDP

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


@pytest.fixture(scope="module")
def torch_group():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    yield
    tdist.destroy_process_group()


def heads(m):
    """A trunk and three heads; ``use`` picks the heads a forward goes through (the others get no gradient)."""

    class Heads(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = m.nn.Linear(3, 4)
            self.a, self.b, self.c = m.nn.Linear(4, 2), m.nn.Linear(4, 2), m.nn.Linear(4, 2)

        def forward(self, x, use):
            h = self.trunk(x).tanh()
            return sum((getattr(self, k)(h) for k in use), m.zeros(x.shape[0], 2, dtype=x.dtype))

    return Heads().double()


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


def x_of(step):
    return np.random.default_rng(step).standard_normal((5, 3))


# each step: (the heads the forward uses, what happens to the gradients before it)
STEPS = [
    (("a", "b"), None),
    (("a",), "zero_grad(set_to_none=False)"),  # b and c unused: b's zeros kept, c stays None
    (("a",), "add to b's grad"),  # a held gradient of an unused parameter keeps its values
    (("a", "c"), "zero_grad()"),  # b, set to None, stays None
    (("b",), "assign a's and c's grads"),  # assigned by hand: a (unused) keeps it, c (unused) too
    (("a", "b", "c"), "assign b's grad"),  # an assigned gradient of a used parameter: the sum
    (("c",), None),  # accumulated over the step before (no zero_grad)
]


def _prepare(m, model, what):
    if what == "zero_grad(set_to_none=False)":
        model.zero_grad(set_to_none=False)
    elif what == "zero_grad()":
        model.zero_grad()
    elif what == "add to b's grad":
        with m.no_grad():
            model.b.weight.grad.add_(3.0)
    elif what == "assign a's and c's grads":
        model.a.weight.grad = m.full((2, 4), 2.0, dtype=m.float64)
        model.c.bias.grad = m.full((2,), -1.0, dtype=m.float64)
    elif what == "assign b's grad":
        model.b.weight.grad = m.full((2, 4), 0.5, dtype=m.float64)


def _run(m, ddp, model, optimizer):
    """Each step: the gradients after backward (None or values, by name), then the parameters after the step."""
    seen = []
    for step, (use, what) in enumerate(STEPS):
        _prepare(m, model, what)
        ddp(m.tensor(x_of(step)), use).pow(2).sum().backward()
        seen.append({n: None if p.grad is None else p.grad.detach().numpy().copy()
                     for n, p in model.named_parameters()})
        optimizer.step()
        seen.append({n: p.detach().numpy().copy() for n, p in model.named_parameters()})
    return seen


@pytest.mark.filterwarnings("ignore:find_unused_parameters=True was specified")
@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])  # one bucket; four
def test_unused_held_and_assigned_gradients_step_as_pytorchs_ddp(torch_group, as_view, cap_mb):
    ember_model, torch_model = heads(ember), heads(torch)
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    theirs = _run(torch, TorchDDP(torch_model, find_unused_parameters=True, gradient_as_bucket_view=as_view,
                                  bucket_cap_mb=cap_mb),
                  torch_model, torch.optim.SGD(torch_model.parameters(), lr=0.1, momentum=0.9))
    ddp = EmberDDP(ember_model, Twins(), find_unused_parameters=True, gradient_as_bucket_view=as_view,
                   bucket_cap_mb=cap_mb)
    assert (len(ddp.reducer.buckets) == 1) == (cap_mb == 25.0)
    mine = _run(ember, ddp, ember_model, ember.optim.SGD(ember_model.parameters(), lr=0.1, momentum=0.9))
    for k, (got, want) in enumerate(zip(mine, theirs)):
        where = f"step {k // 2} ({STEPS[k // 2]}), {'gradients' if k % 2 == 0 else 'parameters'}"
        assert [n for n, v in got.items() if v is None] == [n for n, v in want.items() if v is None], where
        for n, v in want.items():
            if v is not None:
                np.testing.assert_allclose(got[n], v, rtol=1e-12, atol=1e-12, err_msg=f"{where}: {n}")


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


def test_a_communication_hook_is_registered_once_before_the_first_forward():
    """PyTorch's message for a second hook; a hook after DDP's first forward is refused (PyTorch's documentation
    asks for it before backward; ember keeps every bucket of every backward on one hook)."""
    model = ember.nn.Linear(3, 2)
    ddp = EmberDDP(model, Twins())
    ddp.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))
    with pytest.raises(RuntimeError, match=r"^register_comm_hook or register_builtin_comm_hook can only be called "
                                           r"once\.$"):
        ddp.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))
    late = EmberDDP(ember.nn.Linear(3, 2), Twins())
    late(ember.ones(1, 3)).sum().backward()
    with pytest.raises(RuntimeError, match="^register_comm_hook must be called before the first forward"):
        late.reducer.register_comm_hook(None, lambda state, b: _future_of(b.buffer()))
