"""Every collective against its definition, on however many ranks the job has (2 and 3 by tests/test_on_ranks.py;
tests/test_distributed_collectives.py also runs this file under plain mpiexec and in one process).

Rank r's input is a known function of r, so each rank computes every expected result itself with NumPy. Each test
runs all its collectives and collects what differs, then asserts once, so a wrong result on one rank never leaves
the others waiting in a collective it skipped.
"""

import os

import numpy as np
import pytest
from rank_plugin import init_group

import ember
from ember.distributed import ReduceOp

DTYPES = (np.float32, np.float64, np.int64)
OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX)
ALL = np.stack  # readability: ALL([value(r) for r in ranks])


def value(r, dtype, shape=(2, 3)):
    """Rank r's input: distinct per rank, negative entries included, small enough for PRODUCT."""
    return (np.arange(np.prod(shape)).reshape(shape) % 4 - 1 + r * 2).astype(dtype)


def reduced(stack, op, world):
    if op is ReduceOp.AVG:
        total = stack.sum(0)
        assert stack.dtype.kind == "f", "AVG of integers is PyTorch's error (test_avg_of_integers_is_pytorchs_error)"
        return total / world
    fn = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MAX: np.max, ReduceOp.MIN: np.min}[op]
    return fn(stack, axis=0).astype(stack.dtype)


class Expect:
    """Collects the differences of a test's results from their definitions; ``done()`` asserts there were none."""

    def __init__(self):
        self.problems = []

    def __call__(self, actual, expected, what):
        a = actual.numpy() if isinstance(actual, ember.Tensor) else actual
        if a.dtype != expected.dtype:
            self.problems.append(f"{what}: dtype {a.dtype} != {expected.dtype}")
        elif a.shape != expected.shape:
            self.problems.append(f"{what}: shape {a.shape} != {expected.shape}")
        elif not np.allclose(a, expected, rtol=1e-6):
            self.problems.append(f"{what}: {a} != {expected}")

    def true(self, cond, what):
        if not cond:
            self.problems.append(what)

    def done(self):
        assert not self.problems, "\n".join(self.problems)


def error_of(call):
    """The exception ``call()`` raises, or None."""
    try:
        call()
    except Exception as err:  # noqa: BLE001 - the caller checks its type
        return err
    return None


def test_the_environment_a_pytorch_script_expects(rank, world, process_group):
    # set by the launcher, or (under plain mpiexec, in one process) by init_process_group from MPI's rank and size
    assert os.environ["RANK"] == str(rank) and os.environ["WORLD_SIZE"] == str(world)
    assert os.environ["LOCAL_RANK"] == str(rank) and os.environ["LOCAL_WORLD_SIZE"] == str(world)
    if os.environ.get("EMBER_EXPECT_LAUNCHER"):
        assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MASTER_PORT"] == "29500", os.environ
        assert os.environ["MASTER_ADDR"] == "127.0.0.1"
    assert process_group.is_initialized() and process_group.group.WORLD is process_group.default_group()
    assert process_group.comm.thread_level() == "multiple"  # the DDP reducer communicates from a background thread


def test_all_reduce_every_op_and_dtype_blocking_and_async(rank, world, process_group):
    expect = Expect()
    for dtype in DTYPES:
        stack = ALL([value(r, dtype) for r in range(world)])
        for op in OPS:
            if op is ReduceOp.AVG and dtype == np.int64:
                continue  # PyTorch's error (test_avg_of_integers_is_pytorchs_error)
            t = ember.tensor(value(rank, dtype))
            version = t._version
            expect.true(process_group.all_reduce(t, op=op) is None, "all_reduce returns None")
            expect(t, reduced(stack, op, world), f"all_reduce {op} {dtype.__name__}")
            expect.true(t._version > version, "an in-place collective must bump the version counter")
            t = ember.tensor(value(rank, dtype))
            work = process_group.all_reduce(t, op=op, async_op=True)
            expect.true(work.wait() is True and work.is_completed(), "wait() returns True, then is_completed()")
            expect(t, reduced(stack, op, world), f"async all_reduce {op} {dtype.__name__}")
            expect.true(work.result()[0] is t, "result() holds the tensor")
    # polling is_completed() until done also finishes the op (AVG's division included)
    t = ember.tensor(value(rank, np.float32))
    work = process_group.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    while not work.is_completed():
        pass
    expect(t, reduced(ALL([value(r, np.float32) for r in range(world)]), ReduceOp.AVG, world), "polled AVG")
    # 0-d tensors and bool (logical or / and)
    t = ember.tensor(float(rank))
    process_group.all_reduce(t)
    expect(t, np.array(sum(range(world)), np.float32), "0-d all_reduce")
    b = ember.tensor([rank == 0, True])
    process_group.all_reduce(b, op=ReduceOp.MIN)
    expect(b, np.array([world == 1, True]), "bool MIN = and")
    expect.done()


def test_broadcast_from_every_source(rank, world, process_group):
    expect = Expect()
    for src in range(world):
        for dtype in DTYPES:
            t = ember.tensor(value(rank, dtype))
            process_group.broadcast(t, src=src)
            expect(t, value(src, dtype), f"broadcast src={src}")
    t = ember.tensor(value(rank, np.float64))
    process_group.broadcast(t, group_src=world - 1, async_op=True).wait()
    expect(t, value(world - 1, np.float64), "async broadcast group_src")
    expect.done()


def test_all_gather_and_all_gather_single(rank, world, process_group):
    expect = Expect()
    for dtype in DTYPES:
        outs = [ember.zeros(2, 3, dtype=ember.from_numpy(np.zeros(0, dtype)).dtype) for _ in range(world)]
        process_group.all_gather(outs, ember.tensor(value(rank, dtype)))
        for r in range(world):
            expect(outs[r], value(r, dtype), f"all_gather[{r}] {dtype.__name__}")
    cat = ember.zeros(2 * world, 3)
    process_group.all_gather_single(cat, ember.tensor(value(rank, np.float32)))
    expect(cat, np.concatenate([value(r, np.float32) for r in range(world)]), "all_gather_single concat")
    stacked = ember.zeros(world, 2, 3)
    process_group.all_gather_single(stacked, ember.tensor(value(rank, np.float32)), async_op=True).wait()
    expect(stacked, ALL([value(r, np.float32) for r in range(world)]), "all_gather_single stacked")
    expect.done()


def test_reduce_changes_only_dst(rank, world, process_group):
    expect = Expect()
    for dst in (0, world - 1):
        for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
            t = ember.tensor(value(rank, np.float64))
            process_group.reduce(t, dst=dst, op=op)
            want = reduced(ALL([value(r, np.float64) for r in range(world)]), op, world) if rank == dst \
                else value(rank, np.float64)
            expect(t, want, f"reduce dst={dst} {op}")
    expect.done()


def test_in_place_collectives_take_views_of_any_strides(rank, world, process_group):
    """all_reduce, broadcast and reduce write their result into a view of any strides. PyTorch's gloo takes them
    too: a transposed tensor gives the contiguous one's result there (the same as here), but of a non-dense view
    (a column) it reduces the base's first elements, not the view's; ember reduces the view's own elements and
    leaves the rest of the base as it was. An expanded tensor (elements sharing memory) is refused on every rank."""
    expect = Expect()
    inputs = [value(r, np.float64, (3, 4)) for r in range(world)]
    base = ember.tensor(inputs[rank])
    version = base._version
    process_group.all_reduce(base.t())
    expect(base, reduced(ALL(inputs), ReduceOp.SUM, world), "all_reduce of a transposed view")
    expect.true(base._version > version, "the base's version counter moves with the view's")
    base = ember.tensor(inputs[rank])
    process_group.all_reduce(base[:, 1], op=ReduceOp.MAX, async_op=True).wait()
    want = inputs[rank].copy()
    want[:, 1] = ALL(inputs)[:, :, 1].max(0)
    expect(base, want, "async all_reduce of a column: only the column changes")
    base = ember.tensor(inputs[rank])
    process_group.broadcast(base[::2, ::3], src=world - 1)
    want = inputs[rank].copy()
    want[::2, ::3] = inputs[world - 1][::2, ::3]
    expect(base, want, "broadcast into a strided view")
    base = ember.tensor(inputs[rank])
    process_group.reduce(base[1], dst=0, op=ReduceOp.SUM)
    want = inputs[rank].copy()
    if rank == 0:
        want[1] = ALL(inputs)[:, 1].sum(0)
    expect(base, want, "reduce into a row (contiguous) and nothing else")
    base = ember.tensor(inputs[rank])
    process_group.reduce(base[:, 2], dst=world - 1, op=ReduceOp.SUM)
    want = inputs[rank].copy()
    if rank == world - 1:
        want[:, 2] = ALL(inputs)[:, :, 2].sum(0)
    expect(base, want, "reduce into a column: the destination's column only")
    error = error_of(lambda: process_group.all_reduce(ember.ones(1).expand(3)))
    expect.true(isinstance(error, ValueError) and "share memory" in str(error), f"expanded tensor: {error!r}")
    expect.done()


def test_bfloat16_tensors_in_every_kind_of_collective(rank, world, process_group):
    """bfloat16 has no MPI type: data moves as its bits, reductions run in float32 and round once into bfloat16
    (PyTorch's gloo gives these numbers on 2 ranks; it rounds after each addition, so on more ranks a sum may be
    an ulp away from it); an average divides the rounded sum in bfloat16, as PyTorch's does."""
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    inputs = [(np.array([0.1, 1000.0, -3.3, 7.0], np.float32) * (r + 1)).astype(bf16) for r in range(world)]
    total = ALL(inputs).astype(np.float32).sum(0).astype(bf16)
    expect = Expect()
    for op, want in [(ReduceOp.SUM, total), (ReduceOp.AVG, total / np.array(world, bf16)),
                     (ReduceOp.MAX, ALL(inputs).max(0))]:
        t = ember.tensor(inputs[rank].astype(np.float32)).bfloat16()
        process_group.all_reduce(t, op=op)
        expect.true(t.dtype == ember.bfloat16, f"all_reduce {op}: dtype {t.dtype}")
        expect(t.float(), want.astype(np.float32), f"bfloat16 all_reduce {op}")
    t = ember.tensor(inputs[rank].astype(np.float32)).bfloat16()
    process_group.reduce(t, dst=0, op=ReduceOp.AVG)
    expect(t.float(), (total / np.array(world, bf16) if rank == 0 else inputs[rank]).astype(np.float32),
           "bfloat16 reduce AVG: the destination's only")
    t = ember.tensor(inputs[rank].astype(np.float32)).bfloat16()
    process_group.broadcast(t, src=world - 1)
    expect(t.float(), inputs[world - 1].astype(np.float32), "bfloat16 broadcast")
    out = ember.zeros(world * 4, dtype=ember.bfloat16)
    process_group.all_gather_single(out, ember.tensor(inputs[rank].astype(np.float32)).bfloat16())
    expect(out.float(), np.concatenate(inputs).astype(np.float32), "bfloat16 all_gather_single")
    blocks = ember.tensor(np.tile(inputs[rank].astype(np.float32), world)).bfloat16()
    out = ember.zeros(4, dtype=ember.bfloat16)
    process_group.reduce_scatter_single(out, blocks)
    expect(out.float(), total.astype(np.float32), "bfloat16 reduce_scatter_single")
    if world > 1:
        t = ember.tensor(inputs[rank].astype(np.float32)).bfloat16()
        if rank == 0:
            process_group.send(t, dst=1)
        elif rank == 1:
            process_group.recv(t, src=0)
        expect(t.float(), inputs[0 if rank < 2 else rank].astype(np.float32), "bfloat16 send/recv")
    expect.done()


def test_reduce_scatter_gives_rank_r_block_r_of_the_reduction(rank, world, process_group):
    expect = Expect()
    for op in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN):
        for dtype in DTYPES if op is not ReduceOp.AVG else (np.float32, np.float64):
            blocks = [ALL([value(r * 10 + b, dtype) for b in range(world)]) for r in range(world)]  # rank r's input
            out = ember.zeros(2, 3, dtype=ember.from_numpy(np.zeros(0, dtype)).dtype)
            process_group.reduce_scatter_single(out, ember.tensor(blocks[rank].reshape(world * 2, 3)), op=op)
            expect(out, reduced(ALL([blocks[r][rank] for r in range(world)]), op, world), f"reduce_scatter_single {op}")
            out2 = ember.zeros_like(out)
            process_group.reduce_scatter(out2, [ember.tensor(x) for x in blocks[rank]], op=op)
            expect(out2, out.numpy(), f"reduce_scatter {op}")
    expect.done()


def test_gather_scatter_and_all_to_all(rank, world, process_group):
    expect = Expect()
    for root in (0, world - 1):
        gl = [ember.zeros(2, 3) for _ in range(world)] if rank == root else None
        process_group.gather(ember.tensor(value(rank, np.float32)), gl, dst=root)
        if rank == root:
            for r in range(world):
                expect(gl[r], value(r, np.float32), f"gather dst={root} [{r}]")
        sl = [ember.tensor(value(10 + r, np.int64)) for r in range(world)] if rank == root else None
        t = ember.zeros(2, 3, dtype=ember.int64)
        process_group.scatter(t, sl, src=root)
        expect(t, value(10 + rank, np.int64), f"scatter src={root}")
    # all_to_all: output[j] on rank i = input[i] of rank j
    ins = [ember.tensor(value(100 * rank + j, np.float32)) for j in range(world)]
    outs = [ember.zeros(2, 3) for _ in range(world)]
    process_group.all_to_all(outs, ins)
    for j in range(world):
        expect(outs[j], value(100 * j + rank, np.float32), f"all_to_all[{j}]")
    expect.done()


@pytest.mark.min_world(2)
def test_all_to_all_of_blocks_that_do_not_pair_up(rank, world, process_group):
    """Unequal blocks must pair up (what rank i sends rank j, j expects from i): rank 1 expecting one element too
    many from rank 0 is a ValueError on ranks 0 and 1 and an error on every other; no rank moves data, and the
    next collective works."""
    ins = [ember.full((2,), float(rank)) for _ in range(world)]
    outs = [ember.zeros(3 if rank == 1 and j == 0 else 2) for j in range(world)]
    with pytest.raises((ValueError, RuntimeError)) as err:
        process_group.all_to_all(outs, ins)
    if rank in (0, 1):
        assert isinstance(err.value, ValueError) and "rank" in str(err.value), err.value
    else:
        assert "passed invalid arguments" in str(err.value), err.value
    assert all(o.sum().item() == 0 for o in outs)
    t = ember.ones(2)
    process_group.all_reduce(t)
    assert t.tolist() == [float(world)] * 2


@pytest.mark.min_world(2)
def test_point_to_point_in_a_ring_and_a_receive_that_times_out(rank, world, process_group):
    expect = Expect()
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = ember.zeros(2, 3)
    sends = process_group.isend(ember.tensor(value(rank, np.float32)), dst=nxt)
    expect.true(process_group.recv(got, src=None) == prv, "recv reports the sender")
    sends.wait()
    expect(got, value(prv, np.float32), "ring recv")
    req = process_group.irecv(got, src=prv, tag=7)
    process_group.send(ember.tensor(value(rank + 50, np.float32)), dst=nxt, tag=7)
    req.wait()
    expect(got, value(prv + 50, np.float32), "ring irecv")
    expect.true(req.result() == prv, "irecv's result is the sender")
    # a wait that runs out raises (naming the op and rank), and can be waited on again
    if rank == 0:
        late = process_group.irecv(got, src=1, tag=9)
        err = error_of(lambda: late.wait(timeout=0.2))
        expect.true(isinstance(err, RuntimeError) and "recv timed out" in str(err) and "rank 0" in str(err),
                    f"a recv with no sender must time out naming the op and rank: {err!r}")
    process_group.barrier()
    if rank == 1:
        process_group.send(ember.full((2, 3), 9.0), dst=0, tag=9)
    if rank == 0:
        late.wait()
        expect(got, np.full((2, 3), 9.0, np.float32), "late recv")
    expect.done()


def test_barrier_and_a_subgroup(rank, world, process_group):
    expect = Expect()
    process_group.barrier()
    process_group.barrier(async_op=True).wait()
    members = sorted({0, world - 1})
    sub = process_group.new_group(members)
    t = ember.ones(3)
    result = process_group.all_reduce(t, group=sub)
    if rank in members:
        expect(t, np.full(3, float(len(members)), np.float32), "all_reduce in a group")
        expect.true(process_group.get_rank(sub) == members.index(rank)
                    and process_group.get_world_size(sub) == len(members), "rank and size in the group")
        t = ember.tensor(float(rank))
        process_group.broadcast(t, src=world - 1, group=sub)  # src is a global rank
        expect(t, np.array(world - 1, np.float32), "broadcast in a group")
    else:
        expect.true(result is None and process_group.get_rank(sub) == -1 and process_group.get_world_size(sub) == -1,
                    "a non-member gets None and -1")
        expect.true(t.tolist() == [1.0, 1.0, 1.0], "a non-member's tensor unchanged")
    expect.done()


def test_new_subgroups_are_consecutive_blocks_and_bad_sizes_raise(rank, world, process_group):
    expect = Expect()
    for size in [1] + ([2] if world % 2 == 0 else []) + ([world] if world > 2 else []):
        cur, subs = process_group.new_subgroups(group_size=size)
        expect.true(len(subs) == world // size and process_group.get_world_size(cur) == size,
                    f"new_subgroups({size}): {len(subs)} groups, own of size {process_group.get_world_size(cur)}")
        t = ember.tensor(float(rank))
        process_group.all_reduce(t, group=cur)
        first = rank - rank % size
        expect(t, np.array(float(sum(range(first, first + size))), np.float32), f"all_reduce in new_subgroups({size})")
    for bad in (None, 0, world + 1) + ((2,) if world % 2 else ()):
        expect.true(isinstance(error_of(lambda bad=bad: process_group.new_subgroups(group_size=bad)), ValueError),
                    f"new_subgroups(group_size={bad}) raises ValueError")
    cur, subs = process_group.new_subgroups_by_enumeration([[r] for r in range(world)])
    expect.true(process_group.get_process_group_ranks(cur) == [rank] and len(subs) == world,
                "new_subgroups_by_enumeration: one group per rank")
    expect.done()


@pytest.mark.min_world(2)
def test_mismatched_calls_raise_on_every_rank_and_the_group_stays_usable(rank, world, process_group):
    dist = process_group
    cases = [
        ("shape", lambda: dist.all_reduce(ember.zeros(rank + 1)), ["rank 0", "shape [1]", "shape [2]"]),
        ("dtype", lambda: dist.all_reduce(ember.zeros(2, dtype=ember.float64 if rank else ember.float32)),
         ["float32", "float64"]),
        ("op", lambda: dist.all_reduce(ember.zeros(2), op=ReduceOp.MAX if rank else ReduceOp.SUM), ["MAX", "SUM"]),
        ("root", lambda: dist.broadcast(ember.zeros(2), src=rank % 2), ["root=0", "root=1"]),
        ("collective", lambda: dist.all_reduce(ember.zeros(2)) if rank else dist.broadcast(ember.zeros(2), src=0),
         ["all_reduce", "broadcast"]),
        ("all_gather input", lambda: dist.all_gather([ember.zeros(rank + 1) for _ in range(world)],
                                                     ember.zeros(rank + 1)), ["shape [1]", "shape [2]"]),
    ]
    errors = [(name, error_of(call), words) for name, call, words in cases]
    # one rank's bad argument: it raises its own error, the others learn of it
    bad = error_of(lambda: dist.all_reduce(ember.zeros(1, 3).expand(4, 3) if rank == 1 else ember.zeros(4, 3)))
    t = ember.ones(2)
    dist.all_reduce(t)
    for name, err, words in errors:
        assert isinstance(err, RuntimeError), f"mismatched {name} must raise RuntimeError, got {err!r}"
        assert all(w in str(err) for w in words), f"{name}: {err}"
    assert isinstance(bad, (ValueError, RuntimeError)), f"bad argument on rank 1 must raise, got {bad!r}"
    assert ("share memory" in str(bad)) if rank == 1 else "rank(s) [1] passed invalid arguments" in str(bad), bad
    assert t.tolist() == [float(world)] * 2, f"all_reduce after the errors: {t.tolist()}"


def test_local_argument_errors(world, process_group):
    dist = process_group
    for call, exc, words in [
        (lambda: dist.all_reduce([1.0]), TypeError, "must be an ember Tensor"),
        (lambda: dist.all_reduce(ember.ones(2), op="sum"), TypeError, "ReduceOp"),
        (lambda: dist.all_reduce(ember.ones(2), op=ReduceOp.BAND), RuntimeError,  # (PyTorch's gloo: the same)
         "Cannot use ReduceOp.BAND with non-integral dtype"),
        (lambda: dist.broadcast(ember.ones(2)), ValueError, "exactly one of src"),
        (lambda: dist.broadcast(ember.ones(2), src=world), RuntimeError, f"invalid root rank: {world}"),
        (lambda: dist.all_gather([ember.ones(2)] * (world + 1), ember.ones(2)), ValueError, f"list of {world} tensors"),
        (lambda: dist.all_gather_single(ember.ones(world + 1, 2), ember.ones(2)), RuntimeError,
         "invalid tensor size.*must have shape"),
        (lambda: dist.init_process_group("gloo"), ValueError, "twice"),  # a second init
    ]:
        with pytest.raises(exc, match=words):
            call()


def test_without_checks_the_results_are_the_same(rank, world, process_group):
    # the hot path the reducer uses skips the cross-rank argument checks
    process_group.set_collective_checks(False)
    try:
        t = ember.tensor(value(rank, np.float32))
        process_group.all_reduce(t)
    finally:
        process_group.set_collective_checks(True)
    expect = Expect()
    expect(t, reduced(ALL([value(r, np.float32) for r in range(world)]), ReduceOp.SUM, world), "all_reduce unchecked")
    expect.done()


def test_destroy_then_init_again_with_another_backend(process_group):
    dist = process_group
    dist.destroy_process_group()
    try:
        after_destroy = dist.is_initialized()
        init_group("gloo")
        gloo = dist.get_backend()
        t = ember.ones(2)
        dist.all_reduce(t)
        dist.destroy_process_group()
        dist.init_process_group()  # re-initialising after destroy works (MPI itself stays up)
        default = dist.get_backend()
        dist.destroy_process_group()
    finally:
        if not dist.is_initialized():
            init_group()  # as the process_group fixture left it, for the tests after this one
    assert not after_destroy and gloo == "gloo" and default == "mpi", (after_destroy, gloo, default)
    assert t.tolist() == [float(dist.get_world_size())] * 2


def test_a_nonblocking_operation_keeps_its_arrays_alive_until_it_completes(process_group, rank, world):
    """mpi4py keeps no reference to a nonblocking collective's arrays: the Work must, or a temporary array (a joined
    DDP rank's zero bucket) is freed while MPI still writes into it, which crashed a rank with SIGSEGV."""
    import gc
    import weakref

    comm = process_group.default_group().comm
    first, second = np.full(1 << 15, float(rank + 1)), np.full(1 << 15, float(rank + 1))
    alive = [weakref.ref(first), weakref.ref(second)]
    works = [comm.iallreduce_(first), comm.ibroadcast_(second, 0)]
    del first, second
    gc.collect()
    held = [ref() is not None for ref in alive]
    results = [ref() for ref in alive]
    for work in works:
        work.wait()
    assert held == [True, True], "an array was freed before its operation completed"
    assert results[0][0] == world * (world + 1) / 2 and results[1][0] == 1.0


def test_an_operation_dropped_before_it_completed_keeps_its_arrays_until_mpi_is_done(process_group, rank):
    """A Work let go before its operation completed (a wait that timed out, an async_op never waited for): MPI may
    still write into its arrays, so they stay alive until MPI reports the operation done. Here a receive is dropped
    before its message is sent: the message lands in the kept array (it used to land in freed memory, which another
    array may use by then), which is let go once MPI has finished the receive."""
    import gc
    import weakref

    from ember.distributed import comm as comm_module

    comm = process_group.default_group().comm
    inbox = np.zeros(64, dtype=np.uint8)
    alive = weakref.ref(inbox)
    work = comm.irecv(inbox, src=comm.rank, tag=4242)
    del inbox, work
    gc.collect()
    held = alive() is not None
    comm.isend(np.arange(64, dtype=np.uint8), comm.rank, tag=4242).wait()
    process_group.barrier()  # (each new operation lets go of the dropped ones MPI has finished)
    gc.collect()
    released = alive() is None
    mine = [entry for entry in getattr(comm_module, "_orphans", ()) if any(a is alive() for a in entry[1])]
    assert (held, released, mine) == (True, True, []), [entry[1] for entry in comm_module._orphans]


@pytest.mark.min_world(2)
def test_a_late_watchdog_answer_is_not_taken_for_the_answer_to_the_next_question(process_group, rank):
    """Rank 1 answers rank 0's first question after rank 0 stopped waiting: that answer must not be read as the
    answer to rank 0's next question (it describes rank 1 as it was then, one collective earlier)."""
    import time

    from ember.distributed import comm as comm_module

    dog, comm = comm_module._watchdog, process_group.default_group().comm
    if rank == 1:
        def describe(*args, _slow=[True], _original=dog._describe):  # noqa: B006  (once)
            answer = _original(*args)
            if _slow:
                _slow.clear()
                time.sleep(1.0)
            return answer
        dog._describe = describe
    process_group.barrier()
    first = second = None
    if rank == 0:
        first = dog.ask(comm.index, [0, 1], comm.issued + 1, timeout=0.3)[1]  # rank 1 answers after 1 s
    process_group.barrier()  # rank 1's late answer describes it before or inside this barrier
    mine = comm.issued
    if rank == 0:  # while rank 1 waits in the next barrier
        time.sleep(1.2)  # (the late answer has arrived)
        second = dog.ask(comm.index, [0, 1], mine, timeout=5.0)[1]
    process_group.barrier()
    if rank == 1:
        del dog._describe
    if rank == 0:
        assert first is None, first
        assert second is not None and second["waiting"] and second["waiting"][0] > mine, (second, mine)
