"""``batch_isend_irecv`` with ``P2POp`` and ``get_group_rank`` next to PyTorch's gloo on the same ranks (each rank
also joins a PyTorch gloo group): a ring exchange in both directions (the shape of a pipeline stage's sends to the
next stage and receives from the previous), given by global and by group ranks, with the same values and Works;
PyTorch's ValueErrors for a bad op, list or peer. ``send_object_list``/``recv_object_list`` (rank 0 to each other
rank and back, by global and group ranks) and ``all_reduce_coalesced`` the same way.
(Run on 2 and 3 ranks by tests/test_on_ranks.py.)"""

import warnings

import numpy as np
import pytest
import torch
import torch.distributed as tdist
from rank_plugin import join_torch_gloo

import ember


@pytest.fixture(scope="module")
def torch_gloo(process_group):
    join_torch_gloo(process_group)
    yield
    tdist.destroy_process_group()


def ring(m, d, rank, world, by_group_rank):
    """Send this rank's row to the next rank and its negation to the previous; receive both neighbours'."""
    nxt, prev = (rank + 1) % world, (rank - 1) % world
    mine = m.tensor(np.arange(3, dtype=np.float32) + 10 * rank)
    from_prev, from_next = m.zeros(3), m.zeros(3)
    peer = (lambda r: {"group_peer": r}) if by_group_rank else (lambda r: {"peer": r})
    ops = [d.P2POp(d.isend, mine, **peer(nxt)), d.P2POp(d.irecv, from_prev, **peer(prev)),
           d.P2POp(d.isend, -mine, tag=1, **peer(prev)), d.P2POp(d.irecv, from_next, tag=1, **peer(nxt))]
    works = d.batch_isend_irecv(ops)
    for work in works:
        work.wait()
    return (len(works), from_prev.numpy().tolist(), from_next.numpy().tolist(),
            [(op.peer, op.group_peer, op.tag) for op in ops])


def errors(m, d):
    found = []
    for call in (lambda: d.P2POp(d.send, m.ones(2), 0), lambda: d.batch_isend_irecv([m.ones(2)]),
                 lambda: d.P2POp(d.isend, m.ones(2), 0, group_peer=0), lambda: d.P2POp(d.isend, m.ones(2)),
                 lambda: d.get_group_rank(None, 0)):
        try:
            call()
            found.append(None)
        except Exception as err:  # noqa: BLE001  (the type and words are what is compared)
            found.append((type(err).__name__, str(err).split(" None ")[0].split(" <")[0]))
    return found


@pytest.mark.parametrize("by_group_rank", [False, True])
def test_batch_isend_irecv_exchanges_as_pytorchs(rank, world, process_group, torch_gloo, by_group_rank):
    theirs = ring(torch, tdist, rank, world, by_group_rank)
    ours = ring(ember, process_group, rank, world, by_group_rank)
    assert ours == theirs, (ours, theirs)
    assert ours[1] == [10.0 * ((rank - 1) % world) + i for i in range(3)]  # (not all zeros: something arrived)


def test_get_group_rank_and_the_errors_are_pytorchs(rank, world, process_group, torch_gloo):
    assert process_group.get_group_rank(process_group.group.WORLD, rank) == tdist.get_group_rank(
        tdist.group.WORLD, rank) == rank
    assert errors(ember, process_group) == errors(torch, tdist)
    assert all(e is not None and e[0] == "ValueError" for e in errors(ember, process_group))


def objects_for(rank):
    return [{"from": rank, "pairs": [(1, 2.5)]}, f"rank {rank}", [None, True, 3 ** 40], (), b"\x00\x01"]


def exchange_objects(d, rank, world, by_group_rank):
    """Rank 0 sends each other rank its list, each sends one back: what each rank received and recv's results."""
    peer = (lambda r: {"group_dst": r}) if by_group_rank else (lambda r: {"dst": r})
    source = (lambda r: {"group_src": r}) if by_group_rank else (lambda r: {"src": r})
    got = []
    if rank == 0:
        for r in range(1, world):
            d.send_object_list(objects_for(10 + r), **peer(r))
        for r in range(1, world):
            slots = [None] * 5
            got.append((d.recv_object_list(slots, **source(r)), slots))
    else:
        slots = [None] * 5
        got.append((d.recv_object_list(slots, **source(0)), slots))
        d.send_object_list(objects_for(rank), **peer(0))
    return got


@pytest.mark.parametrize("by_group_rank", [False, True])
def test_send_and_recv_object_list_as_pytorchs(rank, world, process_group, torch_gloo, by_group_rank):
    ours = exchange_objects(process_group, rank, world, by_group_rank)
    theirs = exchange_objects(tdist, rank, world, by_group_rank)
    expected = ([(r, objects_for(r)) for r in range(1, world)] if rank == 0 else [(0, objects_for(10 + rank))])
    assert ours == theirs == expected, (ours, theirs)


def object_errors(m, d, rank):
    found = []
    for call in (lambda: d.recv_object_list([None]), lambda: d.send_object_list([1]),
                 lambda: d.send_object_list([1], dst=0, group_dst=0), lambda: d.send_object_list([1], dst=rank),
                 lambda: d.recv_object_list([None], src=rank)):
        try:
            call()
            found.append(None)
        except Exception as err:  # noqa: BLE001  (the type and words are what is compared)
            found.append((type(err).__name__, str(err).splitlines()[0].rstrip(".")))
    return found


def test_object_list_errors_are_pytorchs(rank, world, process_group, torch_gloo):
    ours, theirs = object_errors(ember, process_group, rank), object_errors(torch, tdist, rank)
    assert [o and (o[0], theirs[i][1] in o[1]) for i, o in enumerate(ours)] == \
        [t and (t[0], True) for t in theirs] and None not in theirs, (ours, theirs)


def coalesced(m, d, rank, op, async_op):
    tensors = [m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1)), m.tensor([float(rank) - 1.5]),
               m.tensor(np.full((3, 1, 2), 0.25 * rank, dtype=np.float32))]
    with pytest.warns(FutureWarning, match="all_reduce_coalesced` will be deprecated"):
        fut = d.all_reduce_coalesced(tensors, op=getattr(d.ReduceOp, op), async_op=async_op)
    if async_op:
        result = fut.wait()
        kind = type(fut).__name__
    else:
        result, kind = fut, None
    return [t.numpy().tolist() for t in tensors], kind, result is None


@pytest.mark.parametrize("op,async_op", [("SUM", False), ("MAX", False), ("MIN", True), ("PRODUCT", False)])
def test_all_reduce_coalesced_as_pytorchs(rank, world, process_group, torch_gloo, op, async_op):
    ours, theirs = coalesced(ember, process_group, rank, op, async_op), coalesced(torch, tdist, rank, op, async_op)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[2] == theirs[2], (ours, theirs)


@pytest.mark.parametrize("case", ["mixed dtypes", "no tensors"])
def test_all_reduce_coalesced_refuses_mixed_dtypes_as_pytorch(rank, world, process_group, torch_gloo, case):
    found = []
    for m, d in ((ember, process_group), (torch, tdist)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                d.all_reduce_coalesced([m.ones(2), m.ones(2, dtype=m.float64)] if case == "mixed dtypes" else [])
            found.append(None)
        except Exception as err:  # noqa: BLE001
            found.append((type(err).__name__, str(err)))
    ours, theirs = found
    assert theirs is not None and ours is not None and ours[0] == theirs[0], found
    if case == "no tensors":  # (PyTorch's lists its dispatch keys after these words)
        assert theirs[1].startswith(ours[1]), found
    else:
        assert ours[1].replace("ember.", "torch.") == theirs[1], found
