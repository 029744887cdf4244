"""Who did not arrive? Naming the missing ranks when a collective times out.

A collective that times out knows only that *someone* is missing. To say who,
every rank runs one small responder thread (started by ``init_process_group``)
on a private communicator. The waiting rank asks every other rank, point to
point and within a few seconds, what it has done on the communicator in
question: how many operations it has issued there and which one, if any, it is
waiting in, and what its operation of that number was. A rank that does not
answer has died or is stuck in native code without releasing the GIL; one that
answers with fewer operations has not reached the collective (it is busy
elsewhere, finished early, or is waiting in a different collective); one whose
operation of that number is a different collective is out of step (a rank that
ran one more batch issued an all-reduce where the others issued their next
collective): both ranks are named, with what each issued.

Communicators are numbered in creation order, which is the same on every rank
(creating one is itself collective), so the question "communicator #i" means
the same communicator everywhere.
"""

from __future__ import annotations

import json
import threading
import time

from .._backend import xp
from . import _records

_QUERY, _REPLY = 7301, 7302
_REPLY_BYTES = 512
_POLL_S = 0.02


_UNEVEN = ("this rank ran more batches or collectives than it (uneven data: DistributedSampler or the same number of "
           "batches on every rank, or `with model.join():`), or this collective is called on some ranks only (under "
           "`if rank == 0:`)")


def _silent(rank: int) -> str:
    """Why ``rank`` does not answer, from what it left for the launcher (``_records.py``) when it can be seen."""
    where = _records.run_dir()
    if where is not None and _records.read(where, rank, "done") is not None:
        return ("it has finished its script (it returned from it, leaving the process group), so it will never "
                f"join this collective: {_UNEVEN}")
    if where is not None and _records.read(where, rank, "error") is not None:
        return "it failed (ember.distributed.run names how)"
    return "it died, or is stuck in native code holding the GIL"


def finished_without(group, number: int, name: str) -> str | None:
    """Why this rank's collective ``number`` (``name``) on communicator ``group`` can never complete, when another
    rank of it has finished its script having issued fewer collectives there (from its ``done`` record); None when
    none has, or the launcher's records cannot be seen (plain mpiexec, another node): the timeout then tells."""
    where = _records.run_dir()
    if where is None:
        return None
    for rank in group.world_ranks:
        record = _records.read(where, rank, "done") if rank != group.world_rank else None
        if record is None:
            continue
        issued, last = _records.done_counts(record).get(group.index, (None, None))
        if issued is None:  # (a record without the counts: nothing to conclude)
            continue
        if issued >= number:
            continue  # it issued this one: its part is under way
        did = f"its last was #{issued}, {last}" if issued else "none"
        return (f"ember.distributed: {name} (operation #{number} on its communicator) cannot complete on rank "
                f"{group.world_rank} (group of {group.size}): rank {rank} has finished its script (it returned "
                f"from it) having issued {issued} operation(s) on this communicator ({did}), so it will never join "
                f"this one: {_UNEVEN}.")
    return None


def peer_finished(group, peer: int | None, name: str) -> str | None:
    """Why this rank's ``name`` ("send" or "recv") with rank ``peer`` of communicator ``group`` (None: a receive
    from any rank) can never complete: that rank (for any rank: every other one) has finished its script, from
    its ``done`` record; None otherwise, or when the launcher's records cannot be seen (the timeout then tells)."""
    where = _records.run_dir()
    if where is None:
        return None
    others = [r for r in range(group.size) if r != group.rank] if peer is None else [peer]
    if not others or any(_records.read(where, group.world_ranks[r], "done") is None for r in others):
        return None
    who = f"rank {peer}" if peer is not None else "every other rank"
    direction = "from" if name == "recv" else "to"
    what = "send what this rank receives" if name == "recv" else "receive what this rank sends"
    return (f"ember.distributed: {name} {direction} {who} cannot complete on rank {group.world_rank} (group of "
            f"{group.size}): {who} has finished its script (it returned from it) without a matching "
            f"{'send' if name == 'recv' else 'recv'}, so it will never {what}.")


def other_threads() -> int:
    """How many live threads of this process besides the calling one could issue a collective: ember's own
    (``ember-`` threads: this responder, the intra-op pool) never do; any other one (the program's, an RPC
    worker's) may, at any time, even if it has issued none yet."""
    me = threading.current_thread()
    return sum(1 for t in threading.enumerate() if t is not me and not t.name.startswith("ember-"))


class Watchdog:
    """The responder thread plus ``report()`` for timeout messages."""

    def __init__(self, mpi, mpi_comm, registry: dict, keep_until_complete) -> None:
        self._mpi = mpi
        self._keep = keep_until_complete  # comm.keep_until_complete: for the receives and queries it withdraws
        self._comm = mpi_comm
        self._registry = registry  # communicator index -> Communicator (comm.py keeps it)
        self.rank = mpi_comm.Get_rank()
        self.size = mpi_comm.Get_size()
        self._serial = 0  # the number of this rank's latest question (answers carry it back)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="ember-watchdog", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        status = self._mpi.Status()
        query = xp.empty(3, dtype=xp.int64)
        while not self._stop.is_set():
            while self._comm.Iprobe(source=self._mpi.ANY_SOURCE, tag=_QUERY, status=status):
                source = status.Get_source()
                self._comm.Recv(query, source=source, tag=_QUERY)
                answer = self._describe(int(query[0]), int(query[1]), int(query[2]))
                self._comm.Send(answer, dest=source, tag=_REPLY)
            time.sleep(_POLL_S)

    def _describe(self, index: int, number: int, serial: int = 0):
        """This rank's state on communicator ``index``, and the name of its operation ``number`` there, as the
        answer to question ``serial``."""
        comm = self._registry.get(index)
        state = {"serial": serial, "issued": -1, "waiting": None, "op": None}
        if comm is not None:
            state.update(issued=comm.issued, waiting=comm.waiting, op=comm.name_of(number))
        state["threads"] = other_threads()  # (the responder is ember's own: this counts every thread of the program)
        elsewhere = [(other.index, *other.waiting) for other in list(self._registry.values())
                     if other is not comm and other.waiting is not None]
        state["elsewhere"] = elsewhere[0][2][:200] if elsewhere else None  # where it waits instead
        state["elsewhere_at"] = list(elsewhere[0][:2]) if elsewhere else None  # (communicator, operation number)
        payload = json.dumps(state).encode()[:_REPLY_BYTES].ljust(_REPLY_BYTES)
        return xp.frombuffer(payload, dtype=xp.uint8).copy()

    def ask(self, index: int, ranks: list[int], number: int = 0, timeout: float = 3.0) -> dict[int, dict | None]:
        """The state of each of ``ranks`` (world ranks) on communicator ``index``, with the name of its operation
        ``number`` there (None: no answer in time).

        A rank that answers too late answers into the void: its receive is withdrawn (its buffer kept until MPI
        has let go of it, ``comm.keep_until_complete``), and the late answer, carrying the number of the question
        it answers, is recognised and dropped by a later ``ask`` rather than taken for the answer to its own."""
        others = [r for r in ranks if r != self.rank]
        self._serial += 1
        query = xp.array([index, number, self._serial], dtype=xp.int64)
        sends = [self._comm.Isend(query, dest=r, tag=_QUERY) for r in others]
        pending = {r: self._receive(r) for r in others}
        deadline = time.monotonic() + timeout
        answers: dict[int, dict | None] = {}
        while pending and time.monotonic() < deadline:
            for r, (req, buffer) in list(pending.items()):
                if not req.Test():
                    continue
                answer = json.loads(bytes(buffer).decode().strip())
                if answer.pop("serial", None) == self._serial:
                    answers[r] = answer
                    del pending[r]
                else:  # a late answer to an earlier question: wait for the answer to this one
                    pending[r] = self._receive(r)
            time.sleep(0.005)
        for r, (req, buffer) in pending.items():  # never answered: withdraw the receive
            req.Cancel()
            self._keep(req.Test, (buffer,))
            answers[r] = None
        for req in sends:
            if not req.Test():  # (a query to a rank that never took it)
                req.Cancel()
                self._keep(req.Test, (query,))
        return answers

    def _receive(self, rank: int):
        """A posted receive for ``rank``'s answer, and its buffer."""
        buffer = xp.empty(_REPLY_BYTES, dtype=xp.uint8)
        return self._comm.Irecv(buffer, source=rank, tag=_REPLY), buffer

    def report(self, comm, op_number: int, op_name: str) -> str:
        """A sentence per other rank: did it reach operation ``op_number`` of ``comm``, and if not, why."""
        lines = []
        for r, state in sorted(self.ask(comm.index, comm.world_ranks, op_number).items()):
            rank = f"rank {r}"
            if state is None:
                lines.append(f"{rank} did not answer: {_silent(r)}")
                continue
            theirs = state.get("op")
            if state["issued"] >= op_number and theirs in (None, op_name):
                lines.append(f"{rank} reached it")
                continue
            waiting = state["waiting"]
            if waiting:
                doing = f"it is waiting in operation #{waiting[0]} ({waiting[1]})"
            elif state.get("elsewhere"):
                doing = (f"it is waiting in {state['elsewhere']} on another communicator (it went on: for example "
                         "it ran fewer batches than this rank)")
            else:
                doing = "it is not waiting in any collective on it (busy elsewhere, or finished early)"
            if state["issued"] >= op_number:  # the same number, another collective: the ranks diverged
                lines.append(f"{rank} is OUT OF STEP: its operation #{op_number} on this communicator was "
                             f"{theirs}, this rank's is {op_name} (it has issued {state['issued']} operation(s), "
                             f"this rank {comm.issued}; {doing}): the ranks issued different collectives, for "
                             "example one ran more batches than the other")
                continue
            mine = comm.name_of(waiting[0]) if waiting else None
            if waiting and mine not in (None, waiting[1]):
                doing += (f", where this rank's operation #{waiting[0]} was {mine}: the ranks issued different "
                          "collectives, for example this rank ran more batches than it")
            lines.append(f"{rank} did NOT arrive: it has issued {state['issued']} operation(s) on this "
                         f"communicator, this one is #{op_number} ({op_name}); {doing}")
        return "; ".join(lines)

    def deadlock(self, comm, op_number: int, op_name: str) -> str | None:
        """Why operation ``op_number`` (``op_name``) of ``comm`` can never complete on this rank, when another rank
        of it has not issued it and waits, blocked, in a collective on a communicator where this rank has not
        issued that collective yet: each waits for the other (one called a collective under ``if rank == 0:``, or
        the two issued collectives on two communicators in different orders). None when no rank is seen so.

        Certain, not a guess: this rank is blocked here, so it cannot issue the other's collective; the other is
        blocked there, so it cannot issue this one. That holds for ranks whose program runs one thread: where
        this rank or the other runs more, another thread may issue the missing collective (a thread per
        communicator is a correct program), and nothing is concluded (the timeout still tells). (Point-to-point
        waits are not numbered alike on every rank, and are not judged.)"""
        if other_threads():
            return None
        for r, state in sorted(self.ask(comm.index, comm.world_ranks, op_number).items()):
            if state is None or state["issued"] >= op_number or state["waiting"] or not state.get("elsewhere_at") \
                    or state.get("threads", 1) > 1:
                continue
            index, number = state["elsewhere_at"]
            theirs, name = self._registry.get(index), state["elsewhere"]
            if theirs is None or name in ("send", "recv") or theirs.issued >= number or r not in theirs.world_ranks:
                continue
            return (f"ember.distributed: {op_name} (operation #{op_number} on its communicator) cannot complete on "
                    f"rank {comm.world_rank} (group of {comm.size}): rank {r} has issued {state['issued']} "
                    f"operation(s) on this communicator, not this one, and is blocked in {name} (operation "
                    f"#{number} on another communicator), which this rank has not issued (it has issued "
                    f"{theirs.issued} there): each rank waits for the other, so neither can go on. A collective "
                    "called on some ranks only (under `if rank == 0:`: every rank must call it), or ranks that "
                    "issue collectives on two communicators (a DDP model's and the process group's) in different "
                    "orders.")
        return None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1)
