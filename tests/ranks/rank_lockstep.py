"""Lockstep safety under DDP that ends normally on every rank (run at 2 ranks by tests/test_reducer_on_ranks.py, 3 by
tests/test_on_ranks.py):
non-finite gradients on one rank, uneven inputs under Join, the periodic replica checksum. The scenarios that must
end the job (a rank out of step, one that never arrives) are tests/dist_scripts/lockstep_hangs.py's."""

import re
import warnings

import numpy as np
import pytest

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed.algorithms import Join, Joinable, JoinHook
from ember.nn.parallel import DistributedDataParallel as DDP

criterion = nn.MSELoss()


def build():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def batch(step, rank):
    rng = np.random.default_rng(100 * step + rank)
    return ember.tensor(rng.standard_normal((8, 4)).astype(np.float32)), \
        ember.tensor(rng.standard_normal((8, 1)).astype(np.float32))


def flat(model):
    return ember.cat([p.detach().reshape(-1) for p in model.parameters()])


def replicas_identical(model, process_group, world):
    mine = flat(model)
    every = [ember.zeros_like(mine) for _ in range(world)]
    process_group.all_gather(every, mine)
    return all(ember.equal(every[0], t) for t in every)


@pytest.mark.parametrize("by_hand", [False, True], ids=["in_store", "by_hand"])
def test_nonfinite_gradients_on_one_rank_skip_the_step_on_every_rank(rank, world, process_group, by_hand):
    """``by_hand``: each ``.grad`` assigned before backward, so that the buckets are reduced in a staging copy
    (copied back into the gradients at the end of backward, which a skipped step must not do)."""
    model = DDP(build(), nonfinite_grads="skip")
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    facts = []
    for step in range(3):
        x, y = batch(step, rank)
        if step == 1 and rank == 1:
            x[0, 0] = float("nan")  # a bad sample on one rank only
        before = flat(model).clone()
        optimizer.zero_grad()
        if by_hand:
            for p in model.parameters():
                p.grad = ember.zeros_like(p)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            criterion(model(x), y).backward()
        optimizer.step()
        messages = [str(w.message) for w in caught if "non-finite" in str(w.message)]
        facts.append((step, messages, [p.grad is None for p in model.parameters()], ember.equal(before, flat(model)),
                      replicas_identical(model, process_group, world)))
    for step, messages, no_grads, unchanged, identical in facts:
        if step == 1:
            assert len(messages) == 1 and "rank(s) [1]" in messages[0], f"step 1 warnings: {messages}"
            assert all(no_grads), "the skipped step must leave every .grad None"
            assert unchanged, "the step was not skipped"
        else:
            assert not messages, f"step {step} warned: {messages}"
            assert not unchanged, f"a good step ({step}) must update"
        assert identical, f"replicas differ after step {step}"


def test_nonfinite_gradients_on_one_rank_raise_on_every_rank(rank):
    model = DDP(build(), nonfinite_grads="raise")
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x, y = batch(step, rank)
        if step == 1 and rank == 1:
            x[0, 0] = float("nan")
        optimizer.zero_grad()
        if step == 1:
            with pytest.raises(RuntimeError) as raised:
                criterion(model(x), y).backward()
            assert "rank(s) [1]" in str(raised.value) and "non-finite" in str(raised.value), raised.value
        else:  # a good step neither raises nor warns (a warning fails the test)
            criterion(model(x), y).backward()
            optimizer.step()


@pytest.mark.parametrize("bad", ["first", "last"])
def test_nonfinite_gradients_in_one_bucket_of_several_raise_on_every_rank(rank, bad):
    """Buckets of one parameter each: the non-finite gradient is in the bucket reduced first (the last layer's
    bias) or last (the first layer's weight), the others finite; no later bucket may clear what an earlier one
    found."""
    model = DDP(build(), nonfinite_grads="raise", bucket_cap_mb=1e-5)
    assert len(model.reducer.buckets) == 4
    target = model.module[2].bias if bad == "first" else model.module[0].weight
    if rank == 1:
        target.register_hook(lambda g: g * float("nan"))
    x, y = batch(0, rank)
    with pytest.raises(RuntimeError) as raised:
        criterion(model(x), y).backward()
    assert "rank(s) [1]" in str(raised.value) and "non-finite" in str(raised.value), raised.value


def test_uneven_inputs_under_join_match_a_replay_of_every_rank(rank, world):
    # rank r has 2 + r batches; the joined ranks contribute zeros, gradients divided by the world size
    model = DDP(build())
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    reference.load_state_dict(model.module.state_dict())
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1)
    with Join([model]):
        for step in range(2 + rank):
            x, y = batch(step, rank)
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    # the reference replays every rank's batches: step s averages the ranks that still had data
    for step in range(2 + world - 1):
        ref_opt.zero_grad()
        total = sum(criterion(reference(x), y) / world for x, y in (batch(step, r) for r in range(world)
                                                                      if step < 2 + r))
        total.backward()
        ref_opt.step()
    # the rank that trained every step took every update; at the end of the block every rank takes its parameters,
    # as PyTorch's DDP does (tests/programs/ddp_join_uneven.py compares with PyTorch)
    assert all(np.allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-6)
               for p, q in zip(model.parameters(), reference.parameters())), "Join's result differs from a replay"


class _CounterJoinHook(JoinHook):
    """PyTorch's Join tutorial's hook: a joined rank shadows the counter's all-reduce with a zero; afterwards the
    last joiner's count is broadcast to every rank."""

    def __init__(self, counter, sync_max_count):
        self.counter, self.sync_max_count = counter, sync_max_count

    def main_hook(self):
        self.counter.shadowed += 1
        dist.all_reduce(ember.zeros(1))

    def post_hook(self, is_last_joiner):
        self.counter.was_last_joiner = is_last_joiner
        if self.sync_max_count:
            common = ember.tensor([dist.get_rank() if is_last_joiner else -1])
            dist.all_reduce(common, op=dist.ReduceOp.MAX)
            if dist.get_rank() == common.item():
                self.counter.max_count = self.counter.count.clone()
            dist.broadcast(self.counter.max_count, src=int(common.item()))


class _Counter(Joinable):
    """PyTorch's Join tutorial's joinable (no model): each call counts the ranks still counting."""

    def __init__(self):
        super().__init__()
        self.count, self.max_count, self.shadowed, self.was_last_joiner = ember.zeros(1), ember.zeros(1), 0, None

    def __call__(self):
        Join.notify_join_context(self)
        ones = ember.ones(1)
        dist.all_reduce(ones)
        self.count += ones

    def join_hook(self, **kwargs):
        return _CounterJoinHook(self, kwargs.get("sync_max_count", False))

    @property
    def join_device(self):
        return ember.device("cpu")

    @property
    def join_process_group(self):
        return dist.group.WORLD


def test_join_takes_any_joinable_as_pytorchs_does(rank, world):
    """Rank r counts 2 + r times; each count adds the ranks still counting (the joined ones shadow with zeros), the
    last joiner's total reaches every rank; with throw_on_early_termination every rank raises PyTorch's error in
    the round after the first one ran out."""
    counter = _Counter()
    with Join([counter], sync_max_count=True):
        for _ in range(2 + rank):
            counter()
    expected = sum(sum(1 for r in range(world) if i < 2 + r) for i in range(2 + rank))
    outcome = [counter.count.item(), counter.max_count.item(), counter.shadowed, counter.was_last_joiner]
    thrower, raised = _Counter(), None
    try:
        with Join([thrower], throw_on_early_termination=True):
            for _ in range(2 + rank):
                thrower()
    except RuntimeError as e:
        raised = str(e)
    assert outcome == [expected, sum(2 + r for r in range(world)), world - 1 - rank, rank == world - 1]
    assert raised == ("Rank 0 exhausted all inputs." if rank == 0 else
                      "Detected at least one rank that exhausted inputs. Throwing across all ranks."), raised


def test_the_periodic_replica_check_names_the_parameter_and_rank_that_drifted(rank):
    checked = DDP(nn.Linear(4, 2), replica_check_interval=2)
    x, _ = batch(0, rank)
    checked(x)
    if rank == 1:
        with ember.no_grad():
            checked.module.bias.add_(1.0)  # an update on one rank only
    with pytest.raises(RuntimeError) as raised:
        checked(x)  # the second forward runs the periodic check
    assert "'bias' differs from rank 0's on rank(s) [1]" in str(raised.value), raised.value


class _RaisesInBackward(ember.autograd.Function):
    """Identity whose backward raises: placed between two layers, it stops backward after the later layer's
    gradient bucket has started its all-reduce."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise FloatingPointError("a check inside backward failed")


def test_a_forward_after_a_backward_that_raised_partway_and_was_caught_says_so(rank, world):
    """Every rank (so that the started all-reduces pair up) raises inside backward after the last layer's bucket
    started, catches it and runs the next forward: PyTorch's error, saying what happened, on every rank (not an
    internal error from the abandoned all-reduce at the next backward)."""
    first, last = nn.Linear(4, 64), nn.Linear(64, 64)  # 16 KiB of weight: its own bucket at bucket_cap_mb=0.01
    ember.manual_seed(0)
    model = DDP(nn.Sequential(first, nn.Tanh(), last), bucket_cap_mb=0.01)
    x, _ = batch(0, rank)
    hidden = model.module[1](model.module[0](x))
    model(x)  # a DDP forward arms the reducer; the graph below is the same model's, with the raising identity
    with pytest.raises(FloatingPointError):
        last(_RaisesInBackward.apply(hidden)).sum().backward()
    with pytest.raises(RuntimeError, match=r"Expected to have finished reduction in the prior iteration .* on rank "
                                           rf"{rank}, the backward of iteration 1 stopped partway") as raised:
        model(x)
    started, buckets = map(int, re.search(r"all-reduces of (\d+) of its (\d+) gradient", str(raised.value)).groups())
    assert 0 < started < buckets, str(raised.value)
