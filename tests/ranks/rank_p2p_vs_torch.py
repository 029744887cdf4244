"""``batch_isend_irecv`` with ``P2POp`` and ``get_group_rank`` next to PyTorch's gloo on the same ranks (each rank
also joins a PyTorch gloo group): a ring exchange in both directions (the shape of a pipeline stage's sends to the
next stage and receives from the previous), given by global and by group ranks, with the same values and Works;
PyTorch's ValueErrors for a bad op, list or peer. (Run on 2 and 3 ranks by tests/test_on_ranks.py.)"""

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
