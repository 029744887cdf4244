"""DistributedDataParallel on every rank (run at 2 ranks by tests/test_reducer_on_ranks.py, 3 by
tests/test_on_ranks.py).

Each test compares DDP with what one process computes on the whole global batch: every rank computes that
reference itself, since all data comes from fixed seeds. Full-batch equivalence (SGD+momentum, Adam), no_sync,
sum reduction, buckets overlapping backward, bucket views and assigned gradients, parameter groups, buffers,
unused parameters, a backward without DDP's forward after one with it, mismatched models.
"""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.diagnostics import trace
from ember.nn.parallel import DistributedDataParallel as DDP


def make_model(seed=0, width=16):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 3))


def batch(step, n):
    rng = np.random.default_rng(1000 + step)
    return ember.tensor(rng.standard_normal((n, 8)).astype(np.float32)), \
        ember.tensor(rng.standard_normal((n, 3)).astype(np.float32))


def params_of(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def grads_of(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def train(model, optimizer, steps, per_rank, rank, world, shard, first=0):
    for step in range(first, first + steps):
        x, y = batch(step, per_rank * world)
        if shard:
            x, y = x[rank * per_rank:(rank + 1) * per_rank], y[rank * per_rank:(rank + 1) * per_rank]
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def gather(process_group, t):
    out = [ember.zeros_like(t) for _ in range(process_group.get_world_size())]
    process_group.all_gather(out, t)
    return out


def all_close(a, b, atol):
    return all(np.allclose(p, q, atol=atol) for p, q in zip(a, b))


@pytest.fixture
def data(rank, world):
    """The global batch of step 0 (8 rows per rank) and this rank's rows of it."""
    x, y = batch(0, 8 * world)
    return x, y, slice(rank * 8, (rank + 1) * 8)


def local_grads(model, data):
    x, y, mine = data
    model.zero_grad()
    nn.functional.mse_loss(model(x[mine]), y[mine]).backward()
    return grads_of(model)


OPTIMIZERS = {"SGD": lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9),
              "Adam": lambda ps: ember.optim.Adam(ps, lr=0.01),
              "Adam foreach=False": lambda ps: ember.optim.Adam(ps, lr=0.01, foreach=False)}


@pytest.mark.parametrize("label", list(OPTIMIZERS))
def test_world_ranks_of_batch_b_equal_one_process_on_the_whole_batch(label, rank, world, process_group):
    # The gradients lie end to end in the buffer DDP laid out at construction and are reduced in place, whichever
    # path the optimizer takes (flat, or per-parameter with foreach=False).
    make_opt = OPTIMIZERS[label]
    reference = make_model()
    train(reference, make_opt(reference.parameters()), 5, 4, rank, world, shard=False)
    ember.manual_seed(rank)  # different initial weights per rank: DDP must broadcast rank 0's
    ddp = DDP(make_model(seed=0 if rank == 0 else 99))
    opt = make_opt(ddp.parameters())
    train(ddp, opt, 1, 4, rank, world, shard=True)
    first_in_place = [b.in_place for b in ddp.reducer.buckets]
    train(ddp, opt, 4, 4, rank, world, shard=True, first=1)
    flat = ember.cat([p.detach().reshape(-1) for p in ddp.parameters()])
    gathered = gather(process_group, flat)
    assert all(first_in_place), f"the first step's buckets reduced in place: {first_in_place}"
    assert all(b.in_place for b in ddp.reducer.buckets), "later steps' buckets not reduced in place"
    assert all_close(params_of(reference), params_of(ddp), 1e-5), "DDP's parameters differ from the full batch's"
    assert all(ember.equal(gathered[0], g) for g in gathered), "replicas differ"


@pytest.mark.min_world(2)
def test_no_sync_accumulation_equals_the_same_batch_without_it(rank, world, data):
    x, y, mine = data
    ddp = DDP(make_model())
    ddp.zero_grad()
    with ddp.no_sync():
        (nn.functional.mse_loss(ddp(x[mine][:4]), y[mine][:4]) / 2).backward()
    local_after_no_sync = grads_of(ddp)
    (nn.functional.mse_loss(ddp(x[mine][4:]), y[mine][4:]) / 2).backward()
    accumulated = grads_of(ddp)
    in_place = [(b.in_place, b.staging is None) for b in ddp.reducer.buckets]
    whole = local_grads(ddp, data)
    reference = make_model()
    nn.functional.mse_loss(reference(x), y).backward()
    assert all(a and s for a, s in in_place), f"accumulation not reduced in place (in place, no staging): {in_place}"
    assert all_close(accumulated, whole, 1e-6), "no_sync accumulation differs from the whole local batch"
    assert all_close(grads_of(reference), whole, 1e-6), "DDP's gradient is not the global mean"
    assert not all_close(local_after_no_sync, whole, 1e-6), "no_sync communicated: its gradient is already global"


def test_sum_reduction_gives_world_times_the_mean(world, data):
    mean = local_grads(DDP(make_model()), data)
    summed = local_grads(DDP(make_model(), grad_reduction="sum"), data)
    assert all(np.allclose(world * m, s, atol=1e-5) for m, s in zip(mean, summed)), "sum != world x mean"


def test_several_buckets_are_launched_in_order_while_backward_runs(data):
    x, y, mine = data
    wide = DDP(make_model(width=256), bucket_cap_mb=0.05)
    with trace.record() as tr:
        nn.functional.mse_loss(wide(x[mine]), y[mine]).backward()
    reduces = tr.spans("ddp", "all-reduce")
    backward = tr.spans("autograd", "backward")
    assert len(wide.bucket_sizes) >= 3, f"several buckets expected, got {wide.bucket_sizes}"
    assert len(reduces) == len(wide.bucket_sizes), f"{len(reduces)} all-reduces for {len(wide.bucket_sizes)} buckets"
    assert backward and reduces[0]["ts"] < backward[0]["ts"] + backward[0]["dur"], \
        "the first all-reduce must start before backward ends"
    assert [e["args"]["bucket"] for e in reduces] == list(range(len(reduces))), "buckets launched out of order"


def test_gradient_as_bucket_view_gives_the_same_gradients(data):
    expected = local_grads(DDP(make_model()), data)
    viewed = DDP(make_model(), gradient_as_bucket_view=True)
    for _ in range(2):
        got = local_grads(viewed, data)
    assert all_close(expected, got, 1e-6), "gradient_as_bucket_view changed the gradients"


@pytest.mark.parametrize("as_view", [False, True])
def test_a_held_grad_across_zero_grad_behaves_as_in_pytorch(as_view, data):
    # by default a .grad held across zero_grad() keeps its values; with gradient_as_bucket_view=True it is the
    # bucket's memory, so it sees the next step's values
    x, y, mine = data
    m = DDP(make_model(), gradient_as_bucket_view=as_view)
    nn.functional.mse_loss(m(x[mine]), y[mine]).backward()
    held = m.module[0].weight.grad
    before = held.numpy().copy()
    m.zero_grad()
    nn.functional.mse_loss(m(x[mine]), 3 * y[mine]).backward()
    now = m.module[0].weight.grad.numpy()
    assert not np.allclose(before, now), "the second step must change the gradient"
    if as_view:
        assert np.array_equal(held.numpy(), now), "bucket view: a held grad must see the next step"
    else:
        assert np.array_equal(held.numpy(), before), "separate: a held grad must keep its values"
    assert all(b.in_place for b in m.reducer.buckets), "not reduced in place"


@pytest.mark.parametrize("as_view", [False, True])
def test_an_assigned_grad_is_reduced(as_view, data):
    # backward adds into a .grad the user assigned and DDP reduces it through a copy (PyTorch copies too); it stays
    # the user's tensor by default and becomes the bucket's view with gradient_as_bucket_view=True
    x, y, mine = data
    local_ref = make_model()
    nn.functional.mse_loss(local_ref(x), y).backward()  # the global mean gradient (whole batch, one process)
    m = DDP(make_model(), gradient_as_bucket_view=as_view)
    mine_grad = ember.ones(*m.module[0].weight.shape)
    m.module[0].weight.grad = mine_grad
    nn.functional.mse_loss(m(x[mine]), y[mine]).backward()
    got = m.module[0].weight.grad
    assert (got is not mine_grad) == as_view, f"the assigned tensor {'kept' if as_view else 'replaced'}"
    assert np.allclose(got.numpy(), 1 + local_ref[0].weight.grad.numpy(), atol=1e-5), \
        "the assigned grad plus the global mean expected"


def two_groups(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    return ember.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0}],
                             lr=0.01)


def test_two_parameter_groups_step_on_the_reduced_grads_where_they_lie(rank, world):
    # weight decay on matrices only, as nanoGPT: every bucket is reduced in place, the optimizer steps each
    # parameter on the reduced .grad where it lies (no copy), and the result is one process's on the whole batch
    reference = make_model(width=64)
    train(reference, two_groups(reference), 3, 4, rank, world, shard=False)
    grouped = DDP(make_model(width=64), bucket_cap_mb=0.01)
    grouped_opt = two_groups(grouped)
    stores = {p._grad_slot[0] for p in grouped.parameters()}
    train(grouped, grouped_opt, 3, 4, rank, world, shard=True)
    buckets = grouped.reducer.buckets
    regions = [(b, b.store.region(b.lo, b.hi)) for b in buckets]
    assert len(stores) == 1 and len(buckets) >= 2, f"{len(stores)} stores, {len(buckets)} buckets"
    assert all(r is not None for _, r in regions), "a bucket is not a slice of the store"
    assert all(np.shares_memory(p.grad._data, r) for b, r in regions for p in b.params), \
        "a gradient does not lie in its bucket's slice"
    assert all(b.in_place and b.staging is None for b in buckets), "not reduced in place"
    assert all_close(params_of(reference), params_of(grouped), 1e-5), "DDP's parameters differ from the full batch's"


def with_batchnorm(**kwargs):
    ember.manual_seed(0)
    return DDP(nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)), **kwargs)


@pytest.mark.min_world(2)
def test_buffers_follow_rank_0_in_grad_mode_forwards(process_group, data):
    x, _, mine = data
    bn = with_batchnorm()
    bn(x[mine])  # in training mode each rank updates the running stats from its own shard
    before = gather(process_group, bn.module[1].running_mean.detach().clone())
    bn.eval()
    with ember.no_grad():
        bn(x[mine])  # as in PyTorch, a no_grad forward after a synchronised one copies rank 0's buffers (changed)
    evaluated = gather(process_group, bn.module[1].running_mean.detach().clone())
    bn.train()
    bn(x[mine])  # grad mode on: the forward first copies rank 0's buffers to every rank
    after = gather(process_group, bn.module[1].running_mean.detach().clone())
    with ember.no_grad():
        bn.eval()
        bn(x[mine])  # the training forward changed them: copied again
        bn(x[mine])  # (at the first no_grad forward only)
    again = gather(process_group, bn.module[1].running_mean.detach().clone())
    assert not ember.equal(before[0], before[1]), "the shards must give different local statistics"
    assert all(ember.equal(a, before[0]) for a in evaluated), "a no_grad forward must copy rank 0's buffers"
    assert not ember.equal(after[0], after[1]), "a training forward updates each rank's statistics from its shard"
    assert all(ember.equal(a, after[0]) for a in again), "the next no_grad forward must copy rank 0's buffers"
    assert list(bn.state_dict())[0] == "module.0.weight" and list(bn.module.state_dict())[0] == "0.weight", \
        "state_dict keys as PyTorch's"


@pytest.mark.min_world(2)
def test_buffers_are_copied_at_the_first_forward_of_each_accumulation_cycle(process_group, data):
    """PyTorch copies rank 0's buffers at a grad-mode forward that follows a synchronised one: with gradient
    accumulation, the first no_sync() forward of each cycle, not the synchronised last one; a rank's statistics
    after a cycle are its own two updates of rank 0's statistics at the cycle's start."""
    x, _, mine = data
    ddp = with_batchnorm()
    ember.manual_seed(0)
    local = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4))  # the same weights, run alone
    bn, local_bn = ddp.module[1], local[1]
    for cycle in range(2):
        start = [gather(process_group, t.detach().clone())[0] for t in (bn.running_mean, bn.running_var)]
        with ember.no_grad():
            local_bn.running_mean.copy_(start[0])
            local_bn.running_var.copy_(start[1])
        with ddp.no_sync():
            ddp(x[mine]).sum().backward()
        ddp(x[mine] * 2 + cycle).sum().backward()
        local(x[mine])
        local(x[mine] * 2 + cycle)
        stats = gather(process_group, bn.running_mean.detach().clone())
        assert not ember.equal(stats[0], stats[1]), "the shards must give different local statistics"
        assert ember.allclose(bn.running_mean, local_bn.running_mean, atol=1e-6), \
            f"cycle {cycle}: the buffers were not rank 0's at the cycle's first forward only"
        assert ember.allclose(bn.running_var, local_bn.running_var, atol=1e-6)


@pytest.mark.min_world(2)
def test_forward_sync_buffers_false_keeps_buffers_local(process_group, data):
    x, _, mine = data
    quiet = with_batchnorm(forward_sync_buffers=False)
    quiet(x[mine])
    quiet(x[mine])  # forward_sync_buffers=False: forwards never copy rank 0's buffers
    stats = gather(process_group, quiet.module[1].running_mean.detach().clone())
    assert not ember.equal(stats[0], stats[1]), "rank 0's buffers were copied"


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(8, 3)
        self.unused = nn.Linear(8, 3)

    def forward(self, inp):
        return self.used(inp)


def test_a_parameter_without_gradient_is_named(data):
    x, y, mine = data
    strict = DDP(TwoHeads())
    with pytest.raises(RuntimeError) as raised:
        nn.functional.mse_loss(strict(x[mine]), y[mine]).backward()
    assert "unused.weight" in str(raised.value) and "find_unused_parameters" in str(raised.value), raised.value


def test_find_unused_parameters_leaves_a_parameter_no_rank_used_without_grad(data):
    """PyTorch's rule: a parameter no rank used keeps .grad None (the optimizer then skips it); the others are
    still reduced in place (the unused one's slot holds zeros meanwhile). tests/programs/ddp_unused_params.py
    compares the whole rule with PyTorch's."""
    x, y, mine = data
    lenient = DDP(TwoHeads(), find_unused_parameters=True)
    nn.functional.mse_loss(lenient(x[mine]), y[mine]).backward()
    assert lenient.module.unused.weight.grad is None and lenient.module.unused.bias.grad is None
    assert all(b.in_place for b in lenient.reducer.buckets), "not reduced in place"
    optimizer = ember.optim.SGD(lenient.parameters(), lr=0.1, momentum=0.9)
    optimizer.step()
    optimizer.zero_grad()
    nn.functional.mse_loss(lenient(x[mine]), y[mine]).backward()  # the freed slot is filled again next time
    assert lenient.module.unused.weight.grad is None and lenient.module.used.weight.grad is not None
    assert all(b.in_place for b in lenient.reducer.buckets), "not reduced in place after a step"




def test_device_ids_of_a_gpu_script_are_pytorchs_value_error_on_every_rank(rank):
    """``DDP(model, device_ids=[local_rank])`` on a CPU module is PyTorch's ValueError, on every rank (ember
    accepted it on rank 0 and refused it on the others)."""
    for ids, out in (([rank], None), ([rank], rank), (["cpu"], None), (None, 1)):
        with pytest.raises(ValueError, match="device_ids and output_device arguments only work with"):
            DDP(nn.Linear(2, 2), device_ids=ids, output_device=out)
    assert isinstance(DDP(nn.Linear(2, 2), device_ids=[], output_device=0), DDP)


@pytest.mark.min_world(2)
def test_ranks_that_disagree_on_find_unused_parameters_are_told_not_left_waiting(data):
    """find_unused_parameters adds an all-reduce behind the lockstep table: ranks that disagree on it must learn it
    from the table (every rank, the same error) rather than wait for a collective the others never start."""
    x, y, mine = data
    model = DDP(make_model(), find_unused_parameters=ember.distributed.get_rank() == 0)
    with pytest.raises(RuntimeError, match="find_unused_parameters differ between ranks"):
        nn.functional.mse_loss(model(x[mine]), y[mine]).backward()


class WithTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear, self.table = nn.Linear(8, 3), nn.Embedding(10, 3)

    def forward(self, inp, idx):
        return self.linear(inp) + self.table(idx).sum()


def test_a_backward_after_ddps_without_its_forward_keeps_gradients_local(rank, data):
    """Once a DDP backward has ended, a backward with no DDP forward before it leaves its gradients alone, as
    PyTorch's: even a sparse one, which a DDP backward would refuse."""
    x, y, mine = data
    model = DDP(WithTable())
    nn.functional.mse_loss(model(x[mine], ember.tensor([rank])), y[mine]).backward()
    model.zero_grad()
    weight = model.module.table.weight
    nn.functional.embedding(ember.tensor([rank, rank]), weight, sparse=True).sum().backward()
    assert weight.grad.is_sparse
    dense = weight.grad.to_dense()
    assert dense[rank].tolist() == [2.0] * 3 and float(dense.sum()) == 6.0

@pytest.mark.min_world(2)
def test_different_models_on_different_ranks_name_rank_and_parameter(rank):
    with pytest.raises(RuntimeError) as raised:
        DDP(nn.Linear(8, 3 if rank == 0 else 4))
    assert "rank 1" in str(raised.value) and "'weight'" in str(raised.value), raised.value


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        ember.manual_seed(3)
        self.a, self.b, self.c, self.never = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 3), nn.Linear(8, 3)

    def forward(self, inp, use_b):
        h = self.a(inp).tanh()
        return self.c(self.b(h) if use_b else h)


def test_static_graph_counts_the_used_parameters_in_its_first_backward_only(rank, data):
    """PyTorch's static_graph: the first synchronised backward finds the parameters the graph does not use (one
    extra all-reduce, as find_unused_parameters makes every backward); later ones communicate only the gradient
    buckets and the lockstep table. The gradients are find_unused_parameters': ``b``, used on rank 0 only, is
    averaged on every rank; ``never``, used by no rank, keeps .grad None."""
    x, y, mine = data
    model, reference = DDP(Branches(), static_graph=True), DDP(Branches(), find_unused_parameters=True)
    issued, differ = [], []
    for step in range(3):
        grads = []
        for m in (model, reference):
            m.zero_grad()
            before = m.reducer.comm.issued
            nn.functional.mse_loss(m(x[mine] * (step + 1), rank == 0), y[mine]).backward()
            if m is model:
                issued.append(m.reducer.comm.issued - before)
            grads.append([None if p.grad is None else p.grad.numpy().copy() for p in m.parameters()])
        differ += [(step, i) for i, (g, r) in enumerate(zip(*grads))
                   if (g is None) != (r is None) or (g is not None and not np.array_equal(g, r))]
    buckets = len(model.reducer.buckets)
    assert issued == [buckets + 2, buckets + 1, buckets + 1] and not differ, (issued, buckets, differ)
    assert model.module.never.weight.grad is None and model.module.b.weight.grad is not None


@pytest.mark.parametrize("change", ["used_later", "unused_later", "rank_1_only"])
def test_a_static_graph_that_changes_raises_pytorchs_error_on_every_rank(rank, data, change):
    """A backward whose parameters differ from the first's (``b`` used later, or no longer used; on every rank or
    on rank 1 only) raises PyTorch's error at the end of that backward on every rank, rather than leave the ranks
    that did not change waiting for a bucket (PyTorch raises on the changed ranks, and only at the next forward
    for a parameter no longer used)."""
    x, y, mine = data
    model = DDP(Branches(), static_graph=True)
    uses_b = {"used_later": lambda step: step >= 1, "unused_later": lambda step: step < 1,
              "rank_1_only": lambda step: step >= 1 and rank == 1}[change]
    errors = []
    for step in range(2):
        model.zero_grad()
        try:
            nn.functional.mse_loss(model(x[mine], uses_b(step)), y[mine]).backward()
        except RuntimeError as err:
            errors.append((step, str(err)))
    assert [step for step, _ in errors] == [1], errors
    text = errors[0][1]
    assert text.startswith("Your training graph has changed in this iteration") and "static_graph" in text, text
    changed = [0, 1, 2][:ember.distributed.get_world_size()] if change != "rank_1_only" else [1]
    assert f"the graph changed on rank(s) {changed}" in text, text
    if rank in changed:
        assert ("b.weight got a gradient, which it did not" if change != "unused_later" else
                "b.weight got no gradient, which it did in the first iteration") in text, text


@pytest.mark.parametrize("used", [True, False], ids=["used", "unused"])
def test_a_parameter_reshaped_after_wrapping_is_named(data, used):
    """``p.data = ...`` with another shape after wrapping: the parameter no longer fits its gradient bucket. Every
    rank names it at that backward, whether it got a gradient (which could not be copied into the bucket) or not
    (find_unused_parameters: zeros of its old shape were set as its .grad)."""
    x, y, mine = data
    model = DDP(Branches(), find_unused_parameters=True)
    model.module.b.weight.data = ember.zeros(4, 8)
    model.module.b.bias.data = ember.zeros(4)
    if used:
        model.module.c.weight.data = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"parameter b\.(weight|bias) has shape \[4(, 8)?\], but it had shape "
                                           r"\[8(, 8)?\] when the model was wrapped"):
        nn.functional.mse_loss(model(x[mine], used), y[mine]).backward()


def test_a_parameter_reshaped_after_wrapping_is_named_in_a_later_bucket(data):
    """The same error when the reshaped parameter's bucket does not start at the first parameter (a small
    ``bucket_cap_mb``: b.weight sits second in a bucket of slots 1..7), so its name is read at its place in that
    bucket, not in the whole model."""
    x, y, mine = data
    model = DDP(Branches(), find_unused_parameters=True, bucket_cap_mb=0.0006)
    (holder,) = [b for b in model.reducer.buckets if "b.weight" in b.names]
    assert holder.lo > 0 and holder.names[0] != "b.weight", [(b.lo, b.names) for b in model.reducer.buckets]
    model.module.b.weight.data = ember.zeros(4, 8)
    with pytest.raises(RuntimeError, match=r"parameter b\.weight has shape \[4, 8\], but it had shape \[8, 8\] "
                                           r"when the model was wrapped"):
        nn.functional.mse_loss(model(x[mine], False), y[mine]).backward()


@pytest.mark.min_world(2)
def test_a_parameter_whose_dtype_changed_after_wrapping_gets_a_gradient_of_its_dtype(rank, world, data):
    """model.double() after wrapping: the gradients are reduced in the buckets' float32 and copied back, as PyTorch
    does; a parameter only rank 0 used gets, on the other ranks too, the average in its own dtype (it got the
    bucket's float32 zeros-slot before)."""
    x, y, mine = data
    model = DDP(Branches(), find_unused_parameters=True)
    model.double()
    nn.functional.mse_loss(model(x[mine].double(), rank == 0), y[mine].double()).backward()
    b = model.module.b.weight.grad
    every = gather(ember.distributed, b)
    assert b.dtype == ember.float64 and b.shape == (8, 8), (b.dtype, b.shape)
    assert all(np.array_equal(g.numpy(), every[0].numpy()) for g in every) and float(b.abs().sum()) > 0


class SharedAcrossCheckpoint(nn.Module):
    """``a`` used inside a checkpointed part and again outside it."""

    def __init__(self, reentrant):
        super().__init__()
        self.a, self.b, self.reentrant = nn.Linear(8, 8), nn.Linear(8, 3), reentrant

    def forward(self, x):
        from ember.utils.checkpoint import checkpoint

        h = checkpoint(self.a, x, use_reentrant=self.reentrant)
        return self.b(self.a(h).tanh())


@pytest.mark.parametrize("static_graph", [False, True])
def test_a_parameter_shared_across_a_reentrant_checkpoint_is_pytorchs_error_on_every_rank(rank, data, static_graph):
    # The reentrant checkpoint's inner backward makes a.weight's and a.bias's gradients final once, the outer
    # backward again: reducing the first would leave the replicas apart, so every rank raises PyTorch's error
    x, y, mine = data
    ember.manual_seed(0)
    ddp = DDP(SharedAcrossCheckpoint(reentrant=True), static_graph=static_graph)
    xs = x[mine].clone().requires_grad_()
    with pytest.raises(RuntimeError, match=r"^Expected to mark a variable ready only once\.(.|\n)*Parameter at index "
                                           r"[01] with name a\.(weight|bias) has been marked as ready twice"):
        nn.functional.mse_loss(ddp(xs), y[mine]).backward()


def test_a_parameter_shared_across_a_non_reentrant_checkpoint_equals_one_process(rank, world, data):
    x, y, mine = data
    ember.manual_seed(0)
    reference = SharedAcrossCheckpoint(reentrant=False)
    nn.functional.mse_loss(reference(x), y).backward()
    ember.manual_seed(0)
    ddp = DDP(SharedAcrossCheckpoint(reentrant=False))
    nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
    assert all_close(grads_of(reference), grads_of(ddp), 1e-6), "DDP's gradients differ from the whole batch's"


@pytest.mark.parametrize("assigned_on_rank_0", [False, True])
@pytest.mark.parametrize("as_view", [False, True])
def test_a_channels_last_conv_is_reduced_in_its_layout(rank, world, as_view, assigned_on_rank_0):
    # each slot of the gradient store is laid out as its parameter (channels-last here), as PyTorch's bucket views
    # are; with a .grad assigned on rank 0 only, that rank reduces a staging copy while the others reduce their slots
    # in place: the copy must be laid out as the slots are, or different elements are summed
    def conv_model():
        ember.manual_seed(0)
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 1)).to(memory_format=ember.channels_last)

    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((2 * world, 3, 5, 5)).astype(np.float32))
    local_ref = conv_model()
    local_ref(x).square().mean().backward()  # the global mean gradient
    m = DDP(conv_model(), gradient_as_bucket_view=as_view)
    if assigned_on_rank_0 and rank == 0:
        m.module[0].weight.grad = ember.zeros(*m.module[0].weight.shape).to(memory_format=ember.channels_last)
    m(x[2 * rank:2 * rank + 2]).square().mean().backward()
    for p, q in zip(m.module.parameters(), local_ref.parameters()):
        assert np.allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5), "not the global mean gradient"
        assert p.grad.stride() == q.grad.stride() == p.stride()
