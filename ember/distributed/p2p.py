"""Point-to-point messages between two ranks (``send``/``recv``/``isend``/``irecv``).

No cross-rank shape check here (it would cost a round trip per message): the receiving
tensor must have the sender's shape and dtype. A message whose size in bytes differs
from the receiving tensor's raises a RuntimeError on the receiver.
"""

from __future__ import annotations

from .._tensor import Tensor
from .collectives import _member, _root
from .comm import Work
from .consistency import check_tensor
from .process_group import ProcessGroup, get_global_rank, get_group_rank, resolve
from .store import DistStoreError


def _no_such_peer(op: str, given: str, peer: int, size: int) -> DistStoreError:
    """A message to or from a rank the group does not have: PyTorch's gloo looks that rank's address up in the
    store, waits for it until the store's timeout and raises DistStoreError ("wait timeout after ... ms, keys:
    .../<rank>"; the process crashes soon after). No rank will ever publish it: ember raises that error at once."""
    return DistStoreError(f"{op}: wait timeout: {given}={peer} is not a rank of the group (of {size}), so its "
                          f"address never comes (keys: .../{peer}); PyTorch's gloo raises this after the store's "
                          "timeout, ember at once")


def _peer(op: str, tensor: Tensor, group: ProcessGroup | None, rank: int | None, group_rank: int | None,
          what: str) -> tuple[ProcessGroup | None, int]:
    pg = _member(group, op)
    if pg is None:
        return None, -1
    check_tensor(op, "tensor", tensor)
    peer = _root(pg, rank, group_rank, what, op, out_of_range=_no_such_peer)
    if peer == pg.rank():
        role = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {role} rank: {role} rank should not be the same as the rank of the current "
                         f"process. ({op}: {what}={pg.ranks[peer]} is this rank itself; a rank cannot message itself)")
    return pg, peer


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``; do not modify it until the returned Work completes."""
    pg, peer = _peer("isend", tensor, group, dst, group_dst, "dst")
    return None if pg is None else pg.comm.isend(tensor._data, peer, tag)


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once the message is on its way)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None); ``result()`` is the sender's rank."""
    pg = _member(group, "irecv")
    if pg is None:
        return None
    if src is None and group_src is None:
        check_tensor("irecv", "tensor", tensor)
        work = pg.comm.irecv(tensor._data, None, tag)
    else:
        pg, peer = _peer("irecv", tensor, group, src, group_src, "src")
        work = pg.comm.irecv(tensor._data, peer, tag)

    def done():
        tensor._bump_version()
        work.set_result(pg.ranks[work.result()])  # the sender as a global rank

    return work.then(done)


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None); return the sender's rank (-1 outside group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.result()


class P2POp:
    """``torch.distributed.P2POp``: one ``isend`` or ``irecv`` for ``batch_isend_irecv`` to start, with its tensor,
    its peer (a global rank ``peer`` or a group rank ``group_peer``, exactly one), group and tag. As PyTorch's, it
    holds both ranks: ``peer`` global, ``group_peer`` in the group."""

    def __init__(self, op, tensor: Tensor, peer: int | None = None, group: ProcessGroup | None = None,
                 tag: int = 0, group_peer: int | None = None) -> None:
        if op is not isend and op is not irecv:
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        check_tensor("P2POp", "tensor", tensor)
        self.op = op
        self.tensor = tensor
        self.group = resolve(group, "P2POp")
        if group_peer is not None and peer is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if group_peer is None and peer is None:
            raise ValueError("Must specify global_rank or group_rank")
        self.peer = peer if peer is not None else get_global_rank(self.group, group_peer)
        self.group_peer = group_peer if group_peer is not None else get_group_rank(self.group, peer)
        self.tag = tag


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of ``p2p_op_list`` (P2POps of one group), in order; the Works to wait on.

    PyTorch's gloo starts them one by one too (it has no coalescing): each is ``isend``/``irecv`` with the op's
    group rank, so the messages pair with the peers' in the order each rank lists them, per tag."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(op, P2POp) for op in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    if not all(op.group is p2p_op_list[0].group for op in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p2p in p2p_op_list:
        peer = {"group_dst": p2p.group_peer} if p2p.op is isend else {"group_src": p2p.group_peer}
        work = p2p.op(p2p.tensor, group=p2p.group, tag=p2p.tag, **peer)
        if work is not None:
            works.append(work)
    return works
