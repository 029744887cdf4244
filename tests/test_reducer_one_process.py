"""DDP's reducer (``ember/distributed/reducer.py``) on one process through a recording communicator, path by path:
every collective it starts, in order, with what it hands over (a bucket's scaled gradients, the lockstep table's
row, the used counts), and the gradients it leaves. The other ranks are twins of this one (they compute the same),
so PyTorch's DDP would leave each parameter the plain backward's gradient (the mean of equal gradients), or the
world size times it for a sum; a joined rank's part is zeros.

Paths: one bucket and several, the bucket view, mean and sum, world sizes 1 and 3, no_sync() accumulation, a
backward without DDP's forward, find_unused_parameters and static_graph (the used counts' all-reduce: every
synchronised backward, the first only), join()'s divisor and shadow backward, the non-finite policies, a
communication hook's arguments, and the lockstep table's rows (iteration, buckets, layout, step and wait times).
On real ranks against PyTorch's DDP: tests/ranks/rank_reducer_battery.py (tests/test_reducer_on_ranks.py)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import ember
from ember.distributed import lockstep
from ember.distributed.reducer import Reducer

ITERATION, BUCKETS, LAYOUT, NONFINITE, WAIT_US, STEP_US, GRAPH_CHANGED, QUEUED_US = range(lockstep.FIELDS)


class Recorder:
    """A communicator of ``size`` twin ranks that records each all-reduce it is asked to start: (role, a copy of
    the array as handed over, the op). A bucket's or the used counts' sum is ``size`` times this rank's (a bucket's
    plus ``offset``: the other ranks' gradients then differ from this one's by that much in all; the used counts'
    plus 1 with ``used_elsewhere``: another rank used every parameter); the lockstep table's gives every rank this
    rank's row (with ``nonfinite_elsewhere``, rank 1's flagging non-finite gradients)."""

    rank = 0

    def __init__(self, size: int = 1, offset: float = 0.0, used_elsewhere: bool = False,
                 nonfinite_elsewhere: bool = False):
        self.size, self.offset = size, offset
        self.used_elsewhere, self.nonfinite_elsewhere = used_elsewhere, nonfinite_elsewhere
        self.calls: list = []

    def iallreduce_(self, array, op):
        role = "table" if array.ndim == 2 else "used" if array.dtype == np.int32 else "bucket"
        self.calls.append((role, array.copy(), op))
        if role == "table":
            array[...] = array[self.rank]
            if self.nonfinite_elsewhere:
                array[1, NONFINITE] = 1
        else:
            array *= self.size
            if role == "bucket":
                array += array.dtype.type(self.offset)
            elif self.used_elsewhere:
                array += 1
        return _Done()

    def roles(self) -> list[str]:
        return [role for role, _, _ in self.calls]


class _Done:
    def is_completed(self) -> bool:
        return True

    def wait(self) -> None:
        return None


class Net(ember.nn.Module):
    """Three layers; ``skip`` names those the forward leaves out (their parameters get no gradient)."""

    def __init__(self):
        super().__init__()
        ember.manual_seed(0)
        self.a, self.b, self.c = ember.nn.Linear(6, 5), ember.nn.Linear(5, 5), ember.nn.Linear(5, 2)
        self.skip = ""

    def forward(self, x):
        for name in "abc":
            if name not in self.skip:
                x = getattr(self, name)(x).tanh()
        return x


def wrapped(size=1, offset=0.0, used_elsewhere=False, nonfinite_elsewhere=False, **kwargs):
    model = Net()
    named = list(model.named_parameters())
    comm = Recorder(size, offset, used_elsewhere, nonfinite_elsewhere)
    return model, Reducer([p for _, p in named], [n for n, _ in named], comm, **kwargs), comm


def batch(step):
    return ember.tensor(np.random.default_rng(step).standard_normal((4, 6)).astype(np.float32))


def plain_grads(steps, skips=None, keep=()):
    """The plain model's gradients after each backward of ``steps`` (zero_grad() before each but those in
    ``keep``)."""
    model = Net()
    out = []
    for step in steps:
        if step not in keep:
            model.zero_grad()
        model.skip = (skips or {}).get(step, "")
        model(batch(step)).sum().backward()
        out.append([None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()])
    return out


def assert_grads(model, want, factor=1.0, where=""):
    for (n, p), w in zip(model.named_parameters(), want):
        if w is None:
            assert p.grad is None, (where, n)
        else:
            assert p.grad is not None, (where, n)
            np.testing.assert_allclose(p.grad.numpy(), w * factor, rtol=1e-6, atol=1e-7, err_msg=f"{where} {n}")


def bucket_values(reducer, bucket, grads):
    """``grads`` (the plain model's, by parameter) laid out as ``bucket``'s slice of the gradient store."""
    index = {id(p): i for i, p in enumerate(p for b in reversed(reducer.buckets) for p in b.params)}
    flat = np.zeros(bucket.numel, bucket.dtype)
    for i, p in enumerate(bucket.params, bucket.lo):
        bucket.piece(flat, i)[...] = grads[index[id(p)]]
    return flat


@pytest.mark.parametrize("size", [1, 3])
@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])
@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_each_bucket_is_handed_over_scaled_in_order_then_the_table(size, cap_mb, as_view, reduction):
    """Every synchronised backward starts one all-reduce (a SUM) per bucket, in bucket order, of the bucket's
    gradients times 1/world (mean) or 1 (sum), then one of the lockstep table; each parameter is left the mean (the
    plain gradient) or the sum (world times it), backward after backward, in place in the store."""
    model, r, comm = wrapped(size, bucket_cap_mb=cap_mb, gradient_as_bucket_view=as_view, grad_reduction=reduction)
    assert (len(r.buckets) > 1) == (cap_mb < 1)
    factor = 1.0 if reduction == "mean" else float(size)
    want = plain_grads(range(3))
    for step in range(3):
        model.zero_grad()
        comm.calls.clear()
        r.prepare_for_backward()
        model(batch(step)).sum().backward()
        assert comm.roles() == ["bucket"] * len(r.buckets) + ["table"], step
        assert all(op == ember.distributed.ReduceOp.SUM for _, _, op in comm.calls)
        for bucket, (_, handed, _) in zip(r.buckets, comm.calls):
            scale = 1.0 / size if reduction == "mean" else 1.0
            np.testing.assert_allclose(handed, bucket_values(r, bucket, want[step]) * scale, rtol=1e-6, atol=1e-8,
                                       err_msg=f"step {step}, bucket {bucket.index}")
        assert all(b.in_place and b.staging is None for b in r.buckets)
        assert_grads(model, want[step], factor, f"step {step}")


def test_no_sync_backwards_stay_local_and_the_next_synchronised_one_reduces_their_sum():
    """A backward after no DDP forward (no_sync(), or none at all) starts no collective and accumulates locally;
    the next synchronised backward reduces the accumulated gradients (twins: their mean is the sum itself)."""
    model, r, comm = wrapped(3, bucket_cap_mb=1e-4)
    want = plain_grads(range(3), keep=(1, 2))
    model(batch(0)).sum().backward()  # (no prepare_for_backward: DDP's forward under no_sync())
    model(batch(1)).sum().backward()
    assert comm.calls == []
    r.prepare_for_backward()
    model(batch(2)).sum().backward()
    assert comm.roles() == ["bucket"] * len(r.buckets) + ["table"]
    assert_grads(model, want[2])
    model(batch(3)).sum().backward()  # after the synchronised one, without a forward of DDP's: local again
    assert len(comm.calls) == len(r.buckets) + 1


@pytest.mark.parametrize("as_view", [False, True])
def test_find_unused_counts_every_synchronised_backward_and_static_graph_its_first_only(as_view):
    """find_unused_parameters: behind the table, every synchronised backward all-reduces which parameters this rank
    used since the last one (1 each, 0 unused; a no_sync() backward's use counts); static_graph: only its first
    backward does, the later ones trust it."""
    for kwargs, counted in (({"find_unused_parameters": True}, [True] * 4), ({"static_graph": True},
                                                                              [True, False, False, False])):
        model, r, comm = wrapped(2, bucket_cap_mb=1e-4, gradient_as_bucket_view=as_view, **kwargs)
        names = [n for b in r.buckets for n in b.names]
        for step in range(4):
            skip = "b" if kwargs.get("find_unused_parameters") and step in (1, 2) else ""
            if step == 2:  # a no_sync() backward using b, before the synchronised one that does not
                model.skip = ""
                model(batch(9)).sum().backward()
            comm.calls.clear()
            model.zero_grad()
            model.skip = skip
            r.prepare_for_backward()
            model(batch(step)).sum().backward()
            roles = comm.roles()
            assert roles == ["bucket"] * len(r.buckets) + ["table"] + ["used"] * counted[step], (kwargs, step)
            if counted[step]:
                used = comm.calls[-1][1]
                unused = {n for n, u in zip(names, used) if u == 0}
                assert unused == ({"b.weight", "b.bias"} if skip and step == 1 else set()), (kwargs, step, unused)


def test_the_lockstep_rows_carry_the_iteration_the_buckets_and_the_previous_step_and_wait():
    """Each synchronised backward's row, handed to the table's all-reduce: this iteration, the bucket count, the
    layout hash, no non-finite flag, and the previous iteration's wait and forward-to-forward time (0 at first)."""
    model, r, comm = wrapped(2, bucket_cap_mb=1e-4)
    rows, spans = [], []  # (the interval around each forward's prepare_for_backward)
    for step in range(3):
        comm.calls.clear()
        before = time.perf_counter()
        r.prepare_for_backward()
        spans.append((before, time.perf_counter()))
        model(batch(step)).sum().backward()
        (table,) = [a for role, a, _ in comm.calls if role == "table"]
        assert not table[1:].any()  # (only this rank's row)
        rows.append(table[0])
        time.sleep(0.02)
    assert [int(row[ITERATION]) for row in rows] == [1, 2, 3]
    assert all(int(row[BUCKETS]) == len(r.buckets) and int(row[LAYOUT]) == r.layout for row in rows)
    assert not any(int(row[NONFINITE]) or int(row[GRAPH_CHANGED]) for row in rows)
    assert int(rows[0][STEP_US]) == 0 and int(rows[0][WAIT_US]) == 0 and int(rows[0][QUEUED_US]) == 0
    for k in (1, 2):  # the forward-to-forward time, in microseconds, within what was measured around it
        shortest, longest = spans[k][0] - spans[k - 1][1], spans[k][1] - spans[k - 1][0]
        assert 20_000 <= shortest * 1e6 - 1 <= int(rows[k][STEP_US]) <= longest * 1e6 + 1, (k, rows[k], spans)


@pytest.mark.parametrize("find_unused", [False, True])
def test_a_joined_rank_reduces_zeros_and_the_divisor_counts_the_active_ranks(find_unused):
    """join(): a rank out of data takes part with zeros in every bucket (and zero used counts), in bucket order,
    then the table (a backward after it without DDP's forward stays local); with the divisor set to the ranks still
    training, a bucket is handed over times 1/that, and
    ``reset_divisor`` brings back 1/world."""
    model, r, comm = wrapped(3, bucket_cap_mb=1e-4, find_unused_parameters=find_unused)
    model(batch(5)).sum().backward()  # (gradients this rank holds from before it joined: not its part)
    held = [p.grad.numpy().copy() for p in model.parameters()]
    r.shadow_backward()
    assert comm.roles() == ["bucket"] * len(r.buckets) + ["table"] + ["used"] * find_unused
    assert all(not a.any() for role, a, _ in comm.calls if role != "table")
    assert [a.size for role, a, _ in comm.calls if role == "bucket"] == [b.numel for b in r.buckets]
    for p, h in zip(model.parameters(), held):  # (a joined rank's own gradients are not touched)
        np.testing.assert_array_equal(p.grad.numpy(), h)
    comm.calls.clear()
    model.skip = "b"
    model(batch(0)).sum().backward()  # after the shadow backward, one without DDP's forward: local, b unused
    model.skip = ""
    assert comm.calls == []
    want = plain_grads([0])[0]
    for divisor, scale in ((2, 0.5), (None, 1 / 3)):
        if divisor:
            r.set_divisor(divisor)
        else:
            r.reset_divisor()
        comm.calls.clear()
        model.zero_grad()
        r.prepare_for_backward()
        model(batch(0)).sum().backward()
        for bucket, (_, handed, _) in zip(r.buckets, comm.calls):
            np.testing.assert_allclose(handed, bucket_values(r, bucket, want) * scale, rtol=1e-6, atol=1e-8)
        assert_grads(model, want, 3 * scale)


class NaNAt(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


@pytest.mark.parametrize("policy", ["skip", "raise", "off"])
def test_a_non_finite_gradient_is_flagged_in_the_row_and_handled_by_the_policy(policy):
    """A NaN gradient in one bucket (on both twin ranks): the row's flag (not scanned with "off"), then every gradient None and a
    warning ("skip"), PyTorch-style RuntimeError ("raise") or the NaN kept ("off")."""
    model, r, comm = wrapped(2, bucket_cap_mb=1e-4, nonfinite_grads=policy)
    r.prepare_for_backward()
    y = model.b(NaNAt.apply(model.a(batch(0)))).sum() + model.c(ember.ones(5)).sum()
    if policy == "skip":
        with pytest.warns(RuntimeWarning, match=r"non-finite \(NaN or inf\) gradients on rank\(s\) \[0, 1\] at DDP "
                                                r"iteration 1; every rank skips"):
            y.backward()
        assert all(p.grad is None for p in model.parameters())
    elif policy == "raise":
        with pytest.raises(RuntimeError, match=r"rank\(s\) \[0, 1\] at DDP iteration 1 \(nonfinite_grads='raise'\)"):
            y.backward()
    else:
        y.backward()
        assert np.isnan(model.a.weight.grad.numpy()).all() and np.isfinite(model.c.weight.grad.numpy()).all()
    (table,) = [a for role, a, _ in comm.calls if role == "table"]
    assert int(table[0][NONFINITE]) == (policy != "off")


def test_a_communication_hook_is_given_each_bucket_in_order_unscaled_with_its_parameters():
    """The hook is called once per bucket, in bucket order, with its index, is_last on the last only, the
    bucket's local gradients (not divided by the world size) as its buffer and as gradients() shaped like its
    parameters (in slot order), and its state; the built-in all-reduce then starts no bucket collective."""
    model, r, comm = wrapped(3, bucket_cap_mb=1e-4)
    want = plain_grads([0])[0]
    calls = []

    def hook(state, bucket):
        calls.append((state, bucket.index(), bucket.is_last(), bucket.buffer().numpy().copy(),
                      [g.numpy().copy() for g in bucket.gradients()], bucket.parameters()))
        fut = ember.futures.Future()
        fut.set_result(bucket.buffer() * 2.0)
        return fut

    r.register_comm_hook("state", hook)
    r.prepare_for_backward()
    model(batch(0)).sum().backward()
    assert comm.roles() == ["table"]
    assert [c[1] for c in calls] == list(range(len(r.buckets)))
    assert [c[2] for c in calls] == [False] * (len(r.buckets) - 1) + [True]
    position = {id(p): i for i, p in enumerate(model.parameters())}
    for (state, _, _, buffer, grads, params), bucket in zip(calls, r.buckets):
        assert state == "state" and [id(p) for p in params] == [id(p) for p in bucket.params]
        np.testing.assert_allclose(buffer, bucket_values(r, bucket, want), rtol=1e-6, atol=1e-8)
        for g, p in zip(grads, params):
            np.testing.assert_allclose(g, want[position[id(p)]], rtol=1e-6, atol=1e-8)
    assert_grads(model, want, 2.0)


@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])
def test_a_static_graph_with_a_layer_never_used_reduces_as_the_plain_model(cap_mb):
    """static_graph with a layer no backward uses (the same graph every iteration): no error, the used layers'
    gradients the plain model's, the unused ones' None (PyTorch's), the used counts all-reduced in the first
    backward only."""
    model, r, comm = wrapped(2, bucket_cap_mb=cap_mb, static_graph=True)
    skips = {step: "b" for step in range(3)}
    want = plain_grads(range(3), skips)
    for step in range(3):
        comm.calls.clear()
        model.zero_grad()
        model.skip = "b"
        r.prepare_for_backward()
        model(batch(step)).sum().backward()
        assert comm.roles().count("used") == (step == 0), step
        assert_grads(model, want[step], where=f"step {step}")


@pytest.mark.parametrize("cap_mb,sizes", [(1.1, [600_000] * 3), (1.15, [600_000, 1_200_000])])
def test_bucket_cap_mb_counts_mebibytes(cap_mb, sizes):
    """``bucket_cap_mb`` is in MiB, as PyTorch's (``bucket_cap_mb * 1024 * 1024`` bytes): three parameters of
    600,000 bytes behind the 1 MiB first bucket fit one bucket of 1.15 MiB (1,205,862 bytes: not 1.15e6) and not one
    of 1.1 MiB."""
    params = [ember.zeros(150_000, requires_grad=True) for _ in range(3)]
    r = Reducer(params, ["a", "b", "c"], Recorder(2), bucket_cap_mb=cap_mb)
    assert r.bucket_sizes() == sizes


@pytest.mark.parametrize("as_view", [False, True])
def test_a_skipped_step_leaves_no_gradient_also_where_a_bucket_was_staged(as_view):
    """nonfinite_grads="skip": every .grad is None after the step is skipped, also a parameter whose .grad was
    assigned by hand (its bucket reduced through a staging copy, whose values are not copied back)."""
    model, r, comm = wrapped(2, bucket_cap_mb=1e-4, gradient_as_bucket_view=as_view)
    for p in model.parameters():
        p.grad = ember.ones(p.shape)
    r.prepare_for_backward()
    y = model.b(NaNAt.apply(model.a(batch(0)))).sum() + model.c(ember.ones(5)).sum()
    with pytest.warns(RuntimeWarning, match="every rank skips this optimizer step"):
        y.backward()
    assert [n for n, p in model.named_parameters() if p.grad is not None] == []


@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_assigned_grads_are_handed_over_scaled_through_the_staging_copy_or_the_adopted_slot(as_view, reduction):
    """A .grad assigned by hand (not in its store slot): backward adds into it, and the bucket is handed over from a
    staging copy (or, with the bucket view, from the slot that adopted it) times 1/world (mean) or 1 (sum) on 3
    twin ranks; each .grad is then the assigned values plus the plain gradient (times 3 for a sum)."""
    model, r, comm = wrapped(3, bucket_cap_mb=1e-4, gradient_as_bucket_view=as_view, grad_reduction=reduction)
    want = plain_grads([0])[0]
    assigned = [np.full(p.shape, float(k + 1), np.float32) for k, p in enumerate(model.parameters())]
    for p, a in zip(model.parameters(), assigned):
        p.grad = ember.tensor(a.copy())
    r.prepare_for_backward()
    model(batch(0)).sum().backward()
    summed = [w + a for w, a in zip(want, assigned)]
    scale = 1 / 3 if reduction == "mean" else 1.0
    assert [b.staging is None for b in r.buckets] == [as_view] * len(r.buckets)
    for bucket, (_, handed, _) in zip(r.buckets, comm.calls):
        np.testing.assert_allclose(handed, bucket_values(r, bucket, summed) * scale, rtol=1e-6, atol=1e-7)
    assert_grads(model, summed, 1.0 if reduction == "mean" else 3.0)


@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])
@pytest.mark.parametrize("used_under_no_sync", [False, True])
def test_a_held_grad_no_rank_used_keeps_this_ranks_values(cap_mb, used_under_no_sync):
    """find_unused_parameters: a .grad held from the last step (no zero_grad) of a parameter no rank uses in this
    backward keeps this rank's values, not the sum the ranks' held gradients reduce to (the other ranks' differ
    here: ``offset``), as PyTorch's; one this rank used in a no_sync() backward since is reduced with the others."""
    offset = 0.5
    model, r, comm = wrapped(2, offset, bucket_cap_mb=cap_mb, find_unused_parameters=True)
    r.prepare_for_backward()
    model(batch(0)).sum().backward()
    first = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    reference = Net()
    if used_under_no_sync:
        model(batch(7)).sum().backward()  # (no DDP forward: local, and it uses b)
        reference(batch(7)).sum().backward()
    extra = {n: p.grad.numpy().copy() if p.grad is not None else 0.0 for n, p in reference.named_parameters()}
    reference.zero_grad()
    reference.skip = model.skip = "b"
    r.prepare_for_backward()
    model(batch(1)).sum().backward()
    reference(batch(1)).sum().backward()
    for n, p in model.named_parameters():
        if n.startswith("b.") and not used_under_no_sync:
            want = first[n]  # untouched
        else:
            local = extra[n] + (reference.get_parameter(n).grad.numpy() if not n.startswith("b.") else 0.0)
            want = first[n] + local + offset
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-5, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("bias_free,listed,more", [(2, 5, False), (None, 5, True)])
def test_a_changed_static_graph_lists_five_changes_without_an_ellipsis(bias_free, listed, more):
    """static_graph's error lists this rank's first five changes and adds " ..." only when there are more: exactly
    five (a layer without bias among those the first iteration left out) end without it; six end with it."""
    layers = ember.nn.ModuleList([ember.nn.Linear(2, 2, bias=k != bias_free) for k in range(4)])
    named = list(layers.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], Recorder(), static_graph=True)
    r.prepare_for_backward()
    layers[0](ember.ones(1, 2)).sum().backward()
    r.prepare_for_backward()
    y = ember.ones(1, 2)
    for layer in layers:
        y = layer(y)
    with pytest.raises(RuntimeError, match="Your training graph has changed in this iteration") as err:
        y.sum().backward()
    changes = str(err.value).split("; on this rank: ")[1].split(". Every rank")[0]
    assert changes.count("got a gradient, which it did not in the first iteration") == listed
    assert changes.endswith(" ...") == more, changes


@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])
def test_a_staged_parameter_this_rank_did_not_use_contributes_zeros(cap_mb):
    """find_unused_parameters: a parameter with no .grad that this rank did not use but another rank did, in a
    bucket reduced through a staging copy (a .grad assigned by hand beside it): this rank contributes zeros, as
    PyTorch's, so its .grad becomes the other ranks' share (here ``offset``) alone."""
    offset = 0.25
    model, r, comm = wrapped(2, offset, used_elsewhere=True, bucket_cap_mb=cap_mb, find_unused_parameters=True)
    model.skip = "b"
    model.c.weight.grad = ember.zeros(model.c.weight.shape)  # (assigned: the bucket that holds b.bias is staged)
    r.prepare_for_backward()
    model(batch(0)).sum().backward()
    assert any(b.staging is not None and any(p is model.b.bias for p in b.params) for b in r.buckets)
    np.testing.assert_allclose(model.b.bias.grad.numpy(), np.full(5, offset, np.float32))


@pytest.mark.parametrize("policy", ["skip", "raise"])
def test_a_joined_rank_ignores_another_ranks_non_finite_flag(policy):
    """join(): a rank out of data takes part in a backward whose table flags non-finite gradients on another rank:
    it neither warns nor raises (the ranks still training do) and its gradients are left as they were."""
    model, r, comm = wrapped(2, nonfinite_elsewhere=True, nonfinite_grads=policy)
    model(batch(0)).sum().backward()  # (gradients from before this rank joined)
    held = [p.grad.numpy().copy() for p in model.parameters()]
    r.shadow_backward()
    for p, h in zip(model.parameters(), held):
        np.testing.assert_array_equal(p.grad.numpy(), h)


def test_a_parameter_reshaped_after_wrapping_is_named_in_whichever_bucket_it_lies():
    """A parameter given another shape after wrapping (``p.data = ...``) is named in DDP's error, also in a bucket
    that does not start at slot 0 and holds other parameters before it (find_unused_parameters: its layer left out
    of the forward, so its bucket's shapes are checked)."""
    layers = ember.nn.Sequential(*[ember.nn.Linear(2, 2) for _ in range(4)])
    named = list(layers.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], Recorder(), bucket_cap_mb=40 / (1 << 20),
                find_unused_parameters=True)
    bucket = next(b for b in r.buckets if b.lo > 0 and b.hi - b.lo >= 2)
    victim, name = bucket.params[-1], bucket.names[-1]
    owner = next(k for k, layer in enumerate(layers) if victim is layer.weight or victim is layer.bias)
    victim.data = ember.zeros(3) if victim.dim() == 1 else ember.zeros(2, 3)
    r.prepare_for_backward()
    y = ember.ones(1, 2, requires_grad=True)
    for layer in layers[:owner]:
        y = layer(y)
    with pytest.raises(RuntimeError, match=rf"^DistributedDataParallel: parameter {name} has shape"):
        y.sum().backward()


@pytest.mark.parametrize("find_unused, static", [(False, False), (True, False), (True, True), (False, True)])
def test_a_hooks_bucket_follows_the_order_of_the_backward_pytorch_rebuilds_its_buckets_by(find_unused, static):
    """PyTorch lays its buckets out again in the order their gradients became ready in the first synchronised
    backward, or with static_graph the second (its first is only counted), from the next backward on; never with
    find_unused_parameters alone (its should_rebuild_buckets). ember keeps its layout and hands a communication
    hook that order (``GradBucket._ready_order``: PowerSGD draws its random matrices in it), None before the
    rebuild and where PyTorch never rebuilds. (PyTorch 2.13's DDP on one gloo rank, a hook listing
    bucket.parameters(): registration order in backwards 1-2 and 1-3, then the reverse, as here.)"""
    model, r, comm = wrapped(2, find_unused_parameters=find_unused, static_graph=static)
    arrival = []
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(lambda p: arrival.append(id(p)))
    seen = []

    def hook(state, bucket):
        seen.append((bucket.index(), bucket._ready_order, [id(p) for p in bucket.parameters()]))
        fut = ember.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    r.register_comm_hook(None, hook)
    orders = []
    for step in range(4):
        model.zero_grad()
        arrival.clear()
        r.prepare_for_backward()
        model(batch(step)).sum().backward()
        orders.append(list(arrival))
    rebuilt_by = None if find_unused and not static else 1 if static else 0
    assert len(seen) == 4 * len(r.buckets)
    for k, (_, order, params) in enumerate(seen):
        step = k // len(r.buckets)
        if rebuilt_by is None or step <= rebuilt_by:
            assert order is None, (k, order)
        else:  # the bucket's slots in the order that backward's gradients arrived
            assert sorted(order) == list(range(len(params)))
            assert [params[s] for s in order] == [i for i in orders[rebuilt_by] if i in params], (k, order)
