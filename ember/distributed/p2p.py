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
from .process_group import ProcessGroup


def _peer(op: str, tensor: Tensor, group: ProcessGroup | None, rank: int | None, group_rank: int | None,
          what: str) -> tuple[ProcessGroup | None, int]:
    pg = _member(group, op)
    if pg is None:
        return None, -1
    check_tensor(op, "tensor", tensor)
    peer = _root(pg, rank, group_rank, what, op, out_of_range=ValueError)
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
