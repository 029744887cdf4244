"""Object collectives and monitored_barrier on every rank, each against its definition (run at 2 and 3 ranks by
tests/test_on_ranks.py). A rank that never reaches a monitored_barrier: tests/dist_scripts/monitored_barrier_missing.py.
"""

from datetime import timedelta

import pytest

import ember


def value(r):
    """Rank r's object: nested, of a size that differs per rank, with types JSON would lose."""
    return {"rank": r, "name": "x" * (10 * r + 1), "shape": (r, r + 1), "set": {r, -r}, "nested": [[r] * r, None]}


def test_all_gather_object(rank, world, process_group):
    gathered = [None] * world
    process_group.all_gather_object(gathered, value(rank))
    assert gathered == [value(r) for r in range(world)], gathered


@pytest.mark.parametrize("root", [0, 1, -1], ids=["root0", "root1", "last"])
def test_broadcast_gather_and_scatter_objects_from_each_root(root, rank, world, process_group):
    root = root % world
    objects = [value(root), "from", root] if rank == root else [None, None, None]
    process_group.broadcast_object_list(objects, src=root)
    out = [None] * world if rank == root else None
    process_group.gather_object(value(rank), out, dst=root)
    received = [None]
    process_group.scatter_object_list(received, [value(10 + r) for r in range(world)] if rank == root else None,
                                      src=root)
    assert objects == [value(root), "from", root], objects
    assert out == ([value(r) for r in range(world)] if rank == root else None), out
    assert received == [value(10 + rank)], received


def test_tensors_travel_inside_objects(rank, world, process_group):
    # a state dict, say
    tensors = [None] * world
    process_group.all_gather_object(tensors, {"w": ember.full((2, 2), float(rank)),
                                              "p": ember.ones(3, requires_grad=True)})
    assert [float(t["w"].sum()) for t in tensors] == [4.0 * r for r in range(world)], tensors
    assert all(t["p"].requires_grad and t["w"].dtype == ember.float32 for t in tensors)


def test_a_wrong_length_object_list_is_refused(world, process_group):
    with pytest.raises(ValueError, match="one item per rank"):
        process_group.all_gather_object([None] * (world + 1), 1)


def test_monitored_barrier_passes_when_every_rank_arrives(process_group):
    process_group.monitored_barrier(timeout=timedelta(seconds=10))
