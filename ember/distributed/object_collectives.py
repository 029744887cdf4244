"""Collectives on Python objects (``broadcast_object_list``, ``all_gather_object``, ``gather_object``,
``scatter_object_list``), their point-to-point pair (``send_object_list``/``recv_object_list``) and
``monitored_barrier``, as in ``torch.distributed``.

Objects travel as bytes: each is encoded with :mod:`pickle` into a ``uint8`` tensor, the byte counts are exchanged
first, and the payloads (padded to the longest) go through the tensor collectives of ``collectives.py`` — so the
cross-rank argument checks and the timeouts apply here too. As in PyTorch, this encoding runs code of the sending
rank's choosing on the receiving rank when it decodes: it is meant for the ranks of one job, which run the same
program and trust each other. Nothing here reads or writes files; checkpoints stay pickle-free (``ember.save``).
"""

from __future__ import annotations

import pickle
import time
from datetime import timedelta
from typing import Any

from .._backend import xp
from .._creation import from_numpy
from . import collectives, p2p
from .consistency import named_call
from .process_group import ProcessGroup

# A tag of its own, so a monitored barrier never matches a user's send/recv.
_MONITORED_BARRIER_TAG = 0x6D62


def _encode(obj: Any) -> Any:
    return xp.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=xp.uint8).copy()


def _decode(payload, size: int) -> Any:
    return pickle.loads(payload[:size].tobytes())


def _lengths(pg: ProcessGroup, payload) -> list[int]:
    """Every rank's payload length, in group-rank order."""
    mine = from_numpy(xp.array([payload.size], dtype=xp.int64))
    out = [from_numpy(xp.zeros(1, dtype=xp.int64)) for _ in range(pg.size())]
    collectives.all_gather(out, mine, group=pg)
    return [int(t._data[0]) for t in out]


def _padded(payload, size: int):
    out = xp.zeros(size, dtype=xp.uint8)
    out[:payload.size] = payload
    return from_numpy(out)


@named_call
def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` receives rank i's ``obj``, on every rank. ``object_list`` must have one slot per rank."""
    if (pg := collectives._member(group, "all_gather_object")) is None:
        return
    _check_slots("all_gather_object", "object_list", object_list, pg.size())
    payload = _encode(obj)
    sizes = _lengths(pg, payload)
    width = max(sizes)
    received = [from_numpy(xp.zeros(width, dtype=xp.uint8)) for _ in sizes]
    collectives.all_gather(received, _padded(payload, width), group=pg)
    for i, (t, n) in enumerate(zip(received, sizes)):
        object_list[i] = _decode(t._data, n)


@named_call
def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """``object_gather_list[i]`` on rank ``dst`` receives rank i's ``obj``; other ranks pass None."""
    if (pg := collectives._member(group, "gather_object")) is None:
        return
    if dst is None and group_dst is None:
        dst = pg.ranks[0]
    root = collectives._root(pg, dst, group_dst, "dst", "gather_object")
    is_root = pg.rank() == root
    if is_root:
        _check_slots("gather_object", "object_gather_list", object_gather_list, pg.size())
    payload = _encode(obj)
    sizes = _lengths(pg, payload)
    width = max(sizes)
    received = [from_numpy(xp.zeros(width, dtype=xp.uint8)) for _ in sizes] if is_root else None
    collectives.gather(_padded(payload, width), received, group=pg, group_dst=root)
    if is_root:
        for i, (t, n) in enumerate(zip(received, sizes)):
            object_gather_list[i] = _decode(t._data, n)


@named_call
def broadcast_object_list(object_list: list, src: int | None = None, group: ProcessGroup | None = None,
                          device=None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s items, on every rank, by those of rank ``src`` (lists of equal length)."""
    if (pg := collectives._member(group, "broadcast_object_list")) is None:
        return
    if src is None and group_src is None:
        src = pg.ranks[0]
    root = collectives._root(pg, src, group_src, "src", "broadcast_object_list")
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got {type(object_list).__name__}")
    payload = _encode(list(object_list)) if pg.rank() == root else xp.zeros(0, dtype=xp.uint8)
    size = from_numpy(xp.array([payload.size], dtype=xp.int64))
    collectives.broadcast(size, group=pg, group_src=root)
    data = _padded(payload, int(size._data[0]))
    collectives.broadcast(data, group=pg, group_src=root)
    items = _decode(data._data, int(size._data[0]))
    if len(items) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg.ranks[root]} sent {len(items)} objects but this rank's "
                         f"object_list has {len(object_list)} slots; pass lists of the same length on every rank")
    object_list[:] = items


@named_call
def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """Rank i's ``scatter_object_output_list[0]`` receives ``scatter_object_input_list[i]`` of rank ``src``."""
    if (pg := collectives._member(group, "scatter_object_list")) is None:
        return
    if src is None and group_src is None:
        src = pg.ranks[0]
    root = collectives._root(pg, src, group_src, "src", "scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a non-empty list (its first "
                         "item receives this rank's object)")
    is_root = pg.rank() == root
    if is_root:
        _check_slots("scatter_object_list", "scatter_object_input_list", scatter_object_input_list, pg.size())
        payloads = [_encode(o) for o in scatter_object_input_list]
        header = xp.array([max(p.size for p in payloads)] + [p.size for p in payloads], dtype=xp.int64)
    else:
        header = xp.zeros(pg.size() + 1, dtype=xp.int64)
    header_t = from_numpy(header)
    collectives.broadcast(header_t, group=pg, group_src=root)
    width = int(header_t._data[0])
    mine = from_numpy(xp.zeros(width, dtype=xp.uint8))
    sends = [_padded(p, width) for p in payloads] if is_root else None
    collectives.scatter(mine, sends, group=pg, group_src=root)
    scatter_object_output_list[0] = _decode(mine._data, int(header_t._data[1 + pg.rank()]))


def _check_slots(op: str, name: str, objects, size: int) -> None:
    if not isinstance(objects, list) or len(objects) != size:
        got = f"{len(objects)} items" if isinstance(objects, list) else type(objects).__name__
        raise ValueError(f"{op}: {name} must be a list with one item per rank of the group ({size}), got {got}")


def monitored_barrier(group: ProcessGroup | None = None, timeout: timedelta | float | None = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that names the ranks that did not reach it.

    Rank 0 of the group waits up to ``timeout`` (default: the group's timeout) for a message from every other
    rank, then answers each. If some did not arrive, rank 0 raises a RuntimeError naming the first missing rank
    (``wait_all_ranks=False``, as PyTorch) or all of them; the other ranks raise when rank 0's answer does not
    come within the same timeout.
    """
    if (pg := collectives._member(group, "monitored_barrier")) is None:
        return
    limit = pg.comm.timeout if timeout is None else (
        timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
    token = from_numpy(xp.zeros(1, dtype=xp.int64))
    if pg.size() == 1:
        return
    if pg.rank() != 0:
        p2p.isend(token, group=pg, group_dst=0, tag=_MONITORED_BARRIER_TAG).wait(limit)
        answer = p2p.irecv(from_numpy(xp.zeros(1, dtype=xp.int64)), group=pg, group_src=0,
                           tag=_MONITORED_BARRIER_TAG)
        try:
            answer.wait(limit)
        except RuntimeError as e:
            raise RuntimeError(f"monitored_barrier: rank {pg.ranks[0]} did not release rank {pg.ranks[pg.rank()]} "
                               f"within {limit:g} s (it found a rank missing, or did not reach the barrier)") from e
        return
    arrivals = {r: p2p.irecv(from_numpy(xp.zeros(1, dtype=xp.int64)), group=pg, group_src=r,
                             tag=_MONITORED_BARRIER_TAG) for r in range(1, pg.size())}
    deadline = time.monotonic() + limit
    pending = dict(arrivals)
    while pending and time.monotonic() < deadline:
        pending = {r: w for r, w in pending.items() if not w.is_completed()}
        if pending:
            time.sleep(0.001)
    if pending:
        missing = [pg.ranks[r] for r in sorted(pending)]
        if wait_all_ranks:
            raise RuntimeError(f"monitored_barrier: ranks {missing} failed to pass monitored_barrier within "
                               f"{limit:g} s")
        raise RuntimeError(f"monitored_barrier: rank {missing[0]} failed to pass monitored_barrier within {limit:g} s")
    for r in range(1, pg.size()):
        p2p.isend(token, group=pg, group_dst=r, tag=_MONITORED_BARRIER_TAG).wait(limit)


def _one_peer(rank: int | None, group_rank: int | None) -> None:
    """PyTorch's ValueErrors for a peer given twice or not at all (a receive from any rank is not offered)."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")


@named_call
def send_object_list(object_list: list, dst: int | None = None, group: ProcessGroup | None = None, device=None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send the objects of ``object_list`` to rank ``dst``, whose ``recv_object_list`` takes them: as PyTorch's, two
    messages, the objects' byte counts (an int64 tensor, one per object) and then their bytes. ``device`` and
    ``use_batch`` change nothing on the CPU (PyTorch's choose where the bytes are staged and how they are sent)."""
    _one_peer(dst, group_dst)
    pg = collectives._member(group, "send_object_list")
    if pg is None:
        return
    payloads = [_encode(obj) for obj in object_list]
    sizes = from_numpy(xp.array([p.size for p in payloads], dtype=xp.int64))
    peer = {"group_dst": group_dst} if group_dst is not None else {"dst": dst}
    p2p.send(sizes, group=group, **peer)
    p2p.send(from_numpy(xp.concatenate(payloads) if payloads else xp.empty(0, xp.uint8)), group=group, **peer)


@named_call
def recv_object_list(object_list: list, src: int | None = None, group: ProcessGroup | None = None, device=None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Fill ``object_list`` (one slot per object sent) with the objects rank ``src`` sent with ``send_object_list``
    (exactly one of ``src``, a global rank, and ``group_src``, as PyTorch's); return the sender's rank (-1 on a rank
    outside ``group``)."""
    _one_peer(src, group_src)
    pg = collectives._member(group, "recv_object_list")
    if pg is None:
        return -1
    sizes = from_numpy(xp.zeros(len(object_list), dtype=xp.int64))
    peer = {"group_src": group_src} if group_src is not None else {"src": src}
    sender = p2p.recv(sizes, group=group, **peer)
    counts = [int(n) for n in sizes._data]
    payload = from_numpy(xp.zeros(sum(counts), dtype=xp.uint8))
    if p2p.recv(payload, group=group, src=sender) != sender:  # (cannot happen: a message from that rank only)
        raise AssertionError("Mismatch in return ranks for object sizes and objects.")
    start = 0
    for i, n in enumerate(counts):
        object_list[i] = _decode(payload._data[start:start + n], n)
        start += n
    return sender
