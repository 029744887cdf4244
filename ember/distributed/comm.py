"""The MPI engine: the only module of ember that imports mpi4py.

It works on arrays (``ember._backend.xp``), C-contiguous, in place where PyTorch's
collective is in place. Two layers call it: the tensor collectives
(``collectives.py``, which add argument and cross-rank shape checks) and the DDP
reducer (``reducer.py``, which calls it directly on flat bucket buffers and skips
the checks)::

    comm = ember.distributed.default_group().comm    # a Communicator
    work = comm.iallreduce_(flat, ReduceOp.SUM)       # MPI_Iallreduce has started
    ...                                               # overlap other work
    work.wait()                                       # bounded by the group's timeout

Every operation is nonblocking underneath (``MPI_I*``) and returns a ``Work``; the
blocking forms start one and wait. Waiting polls ``MPI_Test`` against a deadline
(the process group's timeout) instead of blocking in ``MPI_Wait``: a rank that never
joins is reported as a RuntimeError naming the operation and the waiting rank,
never a hang.

MPI starts in ``init()`` (called by ``init_process_group``), not at import, with
``MPI_Init_thread(MPI_THREAD_MULTIPLE)`` so the reducer may communicate from a
background thread; ``thread_level()`` says what the library granted. mpi4py is
optional: importing this module never needs it, using it does.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial

from .._backend import xp
from .._dtype import np_kind
from . import _records, _waits, watchdog
from .reduce_op import ReduceOp

INSTALL_HINT = "ember.distributed needs mpi4py and an MPI library: pip install mpi4py mpich"

_MPI = None  # the mpi4py.MPI module, once loaded
_registry: dict[int, Communicator] = {}  # every live communicator by creation number (see watchdog.py)
_freed: dict[int, tuple[int, str | None]] = {}  # a freed communicator's (operations issued, the last one's name)
_created = [0]
_watchdog = None
_POINT_TO_POINT = frozenset({"send", "recv"})
# .name: the public call (``all_gather_object``, ``ZeroRedundancyOptimizer.step``) running collectives of its own on
# this thread, if any (``consistency.named_call`` sets it): a collective it starts is named after it, so that a
# rank stuck there is reported as stuck in what the program called
class _Calling(threading.local):
    name: str | None = None  # (a class default: reading it never raises, which getattr's default would cost)


calling = _Calling()
RECENT = 64  # collectives per communicator whose names each rank remembers (for the watchdog's reports)
# How long wait() polls flat out (yielding the core between polls) before it sleeps between polls.
# A large all-reduce takes several rounds and MPI only advances it inside a poll, so a sleep
# between polls adds its length to every round: poll hard while an answer is likely to come soon.
_SPIN_S = 0.05
# A yield is a system call: once per poll it slowed a 1 MB all-reduce by ~10 %. MPICH's own
# blocking waits yield every 1000 polls (MPIR_CVAR_POLLS_BEFORE_YIELD); fewer polls between
# yields keep ranks oversubscribed on a core (more ranks than cores) moving.
_POLLS_PER_YIELD = 32
# The longest sleep between polls past the spin: 1 ms while the wait is young, 5 ms once it has lasted 100 ms (a
# late rank): 5 ms more on a wait that long is at most 5 %, and a rank waiting seconds for a slower one then costs
# about half the CPU per second waited (3 ranks, one sleeping 3 s before its all-reduce: 14-16 -> 8-10 ms per second
# for the waiting thread, most of the rest the looks at the other ranks below). A shorter spin was tried and not
# kept: with the machine loaded, a 1-element all-reduce of 2 ranks waited longer (a rank that sleeps between polls
# is slow to run again once its peer answers), and yielding every 32 polls already gives the core to a rank that
# shares it (3 ranks on one core: the two waiting ones used about 1 ms of CPU per step of the third, which computed
# 10 ms).
_PAUSE_S = 1e-3
_LONG_WAIT_S = 0.1
_LONG_PAUSE_S = 5e-3

# How often a wait past its first moments looks whether a rank of the group has finished its script without joining
# the operation (the launcher's records, watchdog.finished_without): it will never join, and the wait fails then,
# naming it, instead of at the timeout.
_PEERS_EVERY_S = 0.1
_DEADLOCK_AFTER_S = 1.0  # a collective waited this long asks the other ranks (then again each time) for a deadlock

# bool tensors: MPI defines only the logical ops on them.
_BOOL_OPS = {"sum": "lor", "max": "lor", "product": "land", "min": "land"}
# Operations MPI may still be reading or writing after their owner let go of them (a Work dropped before it completed:
# a wait that timed out, an async_op never waited for; the watchdog's withdrawn questions): (test, arrays). mpi4py
# keeps no reference to a nonblocking collective's arrays, and a dropped point-to-point request takes its arrays with
# it while the message may still arrive (into freed memory: another array's data overwritten, or a crash). Each stays
# here until MPI reports it complete (tested whenever a new operation starts) or MPI is finalized.
_orphans: deque = deque()
_reaping = threading.Lock()
_MPI_OP_NAMES = {"sum": "SUM", "avg": "SUM", "product": "PROD", "min": "MIN", "max": "MAX",
                 "band": "BAND", "bor": "BOR", "bxor": "BXOR", "lor": "LOR", "land": "LAND"}


def is_available() -> bool:
    """Whether mpi4py can be imported (without importing it)."""
    return importlib.util.find_spec("mpi4py") is not None


def _mpi():
    global _MPI
    if _MPI is None:
        try:
            import mpi4py
        except ImportError as err:
            raise RuntimeError(INSTALL_HINT) from err
        # MPI starts in init(), not at import. We finalize at exit ourselves: a destroyed
        # process group may be created again, and MPI cannot be initialised twice.
        mpi4py.rc.initialize = False
        mpi4py.rc.finalize = False
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


def init() -> str:
    """Start MPI once (asking for MPI_THREAD_MULTIPLE); return the thread level granted."""
    MPI = _mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
        atexit.register(_finalize)
    return thread_level()


def thread_level() -> str:
    """MPI's thread support: "single", "funneled", "serialized" or "multiple"."""
    MPI = _mpi()
    levels = {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
              MPI.THREAD_SERIALIZED: "serialized", MPI.THREAD_MULTIPLE: "multiple"}
    return levels[MPI.Query_thread()]


def is_initialized() -> bool:
    return _MPI is not None and _MPI.Is_initialized() and not _MPI.Is_finalized()


def keep_until_complete(test: Callable[[], bool], arrays: tuple = ()) -> None:
    """Keep ``arrays`` alive until ``test()`` (a request's ``Test``) says MPI has finished with them, or MPI ends:
    for a nonblocking operation its owner abandons before it completed (cancelled or timed out)."""
    _orphans.append((test, arrays))


def _reap_orphans() -> None:
    """Let go of the abandoned operations MPI has finished with (one thread at a time; the others skip)."""
    if not _reaping.acquire(blocking=False):
        return
    try:
        if is_initialized():
            for _ in range(len(_orphans)):
                entry = _orphans.popleft()
                if not entry[0]():
                    _orphans.append(entry)
    finally:
        _reaping.release()


def _finalize() -> None:
    stop_watchdog()
    if is_initialized():
        _reap_orphans()
        _records.write_rank("finalizing", _records.now())  # the launcher: this rank's own work has ended
        _MPI.Finalize()  # (what is still in _orphans is never touched by MPI again)


def operations_issued() -> dict[int, tuple[int, str | None]]:
    """Per communicator (by creation number, live or freed): how many collectives this rank issued on it and the
    last one's name. What a rank that finished its script leaves for the others (``_errors.record_done``)."""
    issued = dict(_freed)
    issued.update({index: (c.issued, c.name_of(c.issued)) for index, c in list(_registry.items())})
    return issued


def abort(code: int = 1) -> None:
    """End every rank of the job (MPI_Abort): after a failure the others must not wait for this one."""
    if is_initialized():
        _MPI.COMM_WORLD.Abort(code)


def world_rank_size() -> tuple[int, int]:
    """This process's rank and the job's size, as MPI sees them (starts MPI if needed)."""
    init()
    return _MPI.COMM_WORLD.Get_rank(), _MPI.COMM_WORLD.Get_size()


def start_watchdog() -> None:
    """Start the responder that lets a timed-out rank learn which ranks did not arrive (once per process)."""
    global _watchdog
    if _watchdog is None:
        _watchdog = watchdog.Watchdog(_MPI, _MPI.COMM_WORLD.Dup(), _registry, keep_until_complete)


def stop_watchdog() -> None:
    global _watchdog
    if _watchdog is not None:
        _watchdog.stop()
        _watchdog = None


def world(timeout: float) -> Communicator:
    """A private copy of MPI_COMM_WORLD (ember's messages never mix with the user's own MPI calls)."""
    init()
    return Communicator(_MPI.COMM_WORLD.Dup(), timeout)


def _mpi_op(op: ReduceOp, dtype):
    name = op.value
    if name in ("band", "bor", "bxor") and np_kind(dtype) in "fc":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")  # (PyTorch's words)
    if dtype == xp.bool_:
        if name == "avg":  # (the collectives refuse it first, with PyTorch's words)
            raise RuntimeError("result type Float can't be cast to the desired output type Bool")
        name = _BOOL_OPS.get(name, name)
    return getattr(_MPI, _MPI_OP_NAMES[name])


def _no_mpi_type(dtype) -> bool:
    """ml_dtypes' bfloat16 (ember's bfloat16 arrays): no buffer format mpi4py knows and no MPI type."""
    return type(dtype).__module__.startswith("ml_dtypes") or dtype.type.__module__.startswith("ml_dtypes")


def _wire(array):
    """``array`` as MPI moves it: a bfloat16 array's bits as uint16 (moving data needs no arithmetic)."""
    return array.view(f"u{array.dtype.itemsize}") if _no_mpi_type(array.dtype) else array


def _average_(array, n: int) -> None:
    if np_kind(array.dtype) == "f":
        xp.divide(array, n, out=array)
    else:  # integers: truncate toward zero, as C's integer division does
        q = xp.abs(array) // n
        array[...] = xp.where(array < 0, -q, q)


class Work:
    """A started operation (``torch.distributed.Work``): ``wait()`` for it or poll ``is_completed()``.

    Steps added with ``then(fn)`` run once, in order, when the operation completes (e.g.
    the division of ``AVG``, copies out of a receive buffer); ``result()`` returns what
    the operation produced (the output tensors, for tensor collectives). ``name`` is
    what a timeout error calls the operation.
    """

    __slots__ = ("_test", "name", "_comm", "_steps", "_result", "_done", "seq", "_buffers", "peer")

    def __init__(self, request, name: str, comm: Communicator, status=None, buffers: tuple = ()) -> None:
        # True once the request is complete (filling ``status``, when given). Tested directly:
        # Testall over a one-element list converts the list on every poll, which slowed each
        # round of a polled all-reduce.
        self._test = request.Test if status is None else partial(request.Test, status)
        if name not in _POINT_TO_POINT:  # named after the program's call that runs it, if any
            name = calling.name or name
        self.name = name
        self._comm = comm
        self._steps: list[Callable[[], None]] = []
        self._result = None
        self._done = False
        # The arrays MPI reads and writes until the operation completes. mpi4py keeps no reference to a
        # nonblocking collective's buffers: a temporary one (a joined rank's zero bucket) would be freed while
        # MPI still wrote into it (a crash, or another array's memory overwritten).
        self._buffers = buffers
        if name not in _POINT_TO_POINT:  # only collectives are numbered alike on every rank
            comm.issued += 1
            comm.recent[comm.issued % RECENT] = (comm.issued, name)
        self.seq = comm.issued  # this operation's number on its communicator
        self.peer: int | None = None  # a send's destination, a receive's source (None: any rank)

    def then(self, step: Callable[[], None]) -> Work:
        """Run ``step`` when the operation completes (at once if it already has)."""
        if self._done:
            step()
        else:
            self._steps.append(step)
        return self

    def set_result(self, value) -> None:
        self._result = value

    def is_completed(self) -> bool:
        if not self._done and self._test():
            self._complete()
        return self._done

    def wait(self, timeout=None) -> bool:
        """Block until done. RuntimeError after ``timeout`` (seconds or timedelta; default: the group's)."""
        if self._done:
            return True
        limit = self._comm.timeout if timeout is None else _seconds(timeout)
        self._comm.waiting = (self.seq, self.name)
        try:
            if not self._test():  # blocked: count the wait (the straggler rule reads it, _waits.py)
                began = _waits.begin()
                try:
                    self._poll(limit)
                finally:
                    _waits.end(began)
        finally:
            self._comm.waiting = None
        self._complete()
        return True

    def _poll(self, limit: float) -> None:
        test = self._test
        now = time.monotonic()
        spin_until, deadline = now + _SPIN_S, now + limit
        long_from = now + _LONG_WAIT_S
        while now < spin_until:  # poll flat out, now and then letting another process on this core run
            for _ in range(_POLLS_PER_YIELD):
                if test():
                    return
            os.sched_yield()
            now = time.monotonic()
        pause = 0.0
        look_at = now + _PEERS_EVERY_S
        ask_at = now + _DEADLOCK_AFTER_S  # (asking the other ranks costs messages: only once a wait is long)
        peer_gone = 0  # consecutive looks that found a send's or receive's peer finished
        while not test():
            now = time.monotonic()
            if now >= look_at:  # a rank that has finished without joining this operation never will
                look_at = now + _PEERS_EVERY_S
                if self.name not in _POINT_TO_POINT:
                    gone = watchdog.finished_without(self._comm, self.seq, self.name)
                else:  # (seen twice, the operation still pending in between: a message its peer sent just
                    # before finishing has had a look's time to arrive)
                    gone = watchdog.peer_finished(self._comm, self.peer, self.name)
                    peer_gone = peer_gone + 1 if gone else 0
                    gone = gone if peer_gone >= 2 else None
                if gone:
                    raise RuntimeError(gone)
                if now >= ask_at and _watchdog is not None and self.name not in _POINT_TO_POINT:
                    ask_at = now + _DEADLOCK_AFTER_S
                    stuck = _watchdog.deadlock(self._comm, self.seq, self.name)
                    if stuck:
                        raise RuntimeError(stuck)
            if now > deadline:
                who = _watchdog.report(self._comm, self.seq, self.name) if _watchdog is not None else ""
                raise RuntimeError(
                    f"ember.distributed: {self.name} timed out after {limit:g} s on rank "
                    f"{self._comm.world_rank} (group of {self._comm.size}): not every rank of the group "
                    f"reached it. {who + '. ' if who else ''}If the work between collectives is really that "
                    "long, raise init_process_group(timeout=...)."
                )
            time.sleep(pause)
            # then back off to 1 ms polls, leaving the core to others, and to 5 ms ones once the wait is long
            pause = min(pause * 2 + 5e-5, _PAUSE_S if now < long_from else _LONG_PAUSE_S)

    def _complete(self) -> None:
        self._done = True
        self._buffers = ()
        for step in self._steps:
            step()

    def __del__(self) -> None:
        # Dropped before it completed (its wait timed out, or nobody waited): MPI may still use its arrays.
        if not getattr(self, "_done", True):
            keep_until_complete(self._test, self._buffers)

    def is_success(self) -> bool:
        return self._done

    def result(self):
        return self._result

    def exception(self) -> None:
        return None

    def get_future(self):
        """A ``torch.futures.Future`` completed with this operation's result (its output tensors)."""
        from ..futures import Future

        return Future._of_work(self)


def _seconds(timeout) -> float:
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


class Communicator:
    """An MPI communicator with ember's array operations; every wait is bounded by ``timeout`` seconds.

    ``rank``/``size`` are this process's place in the communicator; ``world_rank`` its
    rank in the whole job (for messages). Operations must be issued in the same order
    on every rank, as with any MPI collective.
    """

    def __init__(self, mpi_comm, timeout: float) -> None:
        self._comm = mpi_comm
        self.rank = mpi_comm.Get_rank()
        self.size = mpi_comm.Get_size()
        self.world_rank = _MPI.COMM_WORLD.Get_rank()
        self.world_ranks = list(mpi_comm.Get_group().Translate_ranks(list(range(self.size)),
                                                                     _MPI.COMM_WORLD.Get_group()))
        self.timeout = timeout
        self.issued = 0  # operations started on this communicator (what the watchdog reports)
        # Bytes of the arrays this rank contributed to the operations it started (a root's broadcast or scatter
        # data, every rank's all-reduce input, ...): what benchmarks compare between reduction schemes. The bytes
        # on the wire depend on MPI's algorithm (a ring all-reduce moves about twice this).
        self.payload_bytes = 0
        self.waiting: tuple[int, str] | None = None  # (operation number, name) while blocked in wait()
        # the last RECENT collectives, (number, name) at number % RECENT: the watchdog compares what two ranks
        # issued as the same operation number (a rank with an extra batch issues an all-reduce where the
        # others issue their next collective)
        self.recent: list[tuple[int, str] | None] = [None] * RECENT
        self.index = _created[0]
        _created[0] += 1
        _registry[self.index] = self

    def name_of(self, number: int) -> str | None:
        """The name of this rank's collective number ``number`` on this communicator, if still remembered."""
        entry = self.recent[number % RECENT]
        return entry[1] if entry is not None and entry[0] == number else None

    def free(self) -> None:
        _freed[self.index] = (self.issued, self.name_of(self.issued))
        _registry.pop(self.index, None)
        self._comm.Free()

    def split(self, ranks: list[int]) -> Communicator | None:
        """A communicator over ``ranks`` (ranks of this one, in that order); None on the others. Collective."""
        member = self.rank in ranks
        sub = self._comm.Split(0 if member else _MPI.UNDEFINED, ranks.index(self.rank) if member else 0)
        if not member:
            _created[0] += 1  # keep creation numbers equal on every rank
            return None
        return Communicator(sub, self.timeout)

    def _work(self, request, name: str, status=None, nbytes: int = 0, buffers: tuple = ()) -> Work:
        self.payload_bytes += nbytes
        if _orphans:
            _reap_orphans()
        return Work(request, name, self, status, buffers)

    def _reduced(self, work: Work, op: ReduceOp, array) -> Work:
        if op is ReduceOp.AVG:
            work.then(lambda: _average_(array, self.size))
        return work

    # ------------------------------------------------------------- nonblocking operations
    def _in_float32(self, array, op: ReduceOp, start: Callable, out=None, result_here: bool = True) -> Work:
        """A reduction of a bfloat16 ``array`` (no MPI type): ``start(wide, wide_out, op)`` reduces float32 copies,
        the result is rounded into ``out`` (default ``array``) once; an average divides the rounded sum in
        bfloat16, as PyTorch's gloo does (where ``result_here``: not on a reduce's other ranks). PyTorch's gloo
        rounds after each addition: on more than two ranks a sum can differ from it by an ulp of bfloat16."""
        out = array if out is None else out
        wide = array.astype(xp.float32)
        wide_out = wide if out is array else xp.empty(out.shape, xp.float32)
        work = start(wide, wide_out, ReduceOp.SUM if op is ReduceOp.AVG else op)
        work.then(lambda: out.__setitem__(Ellipsis, wide_out))
        return self._reduced(work, op, out) if result_here else work

    def iallreduce_(self, array, op: ReduceOp = ReduceOp.SUM) -> Work:
        """Reduce ``array`` over all ranks, result in ``array`` on every rank."""
        if _no_mpi_type(array.dtype):
            return self._in_float32(array, op, lambda wide, _, op: self.iallreduce_(wide, op))
        req = self._comm.Iallreduce(_MPI.IN_PLACE, array, op=_mpi_op(op, array.dtype))
        return self._reduced(self._work(req, "all_reduce", nbytes=array.nbytes, buffers=(array,)), op, array)

    def ibroadcast_(self, array, root: int) -> Work:
        """Copy ``array`` of rank ``root`` into ``array`` on every rank."""
        return self._work(self._comm.Ibcast(_wire(array), root=root), "broadcast",
                          nbytes=array.nbytes if self.rank == root else 0, buffers=(array,))

    def iallgather(self, send, recv) -> Work:
        """Every rank's ``send`` into ``recv`` (``size`` times as many elements), in rank order."""
        return self._work(self._comm.Iallgather(_wire(send), _wire(recv)), "all_gather", nbytes=send.nbytes,
                          buffers=(send, recv))

    def ireduce_(self, array, op: ReduceOp, root: int) -> Work:
        """Reduce ``array`` over all ranks into ``array`` of rank ``root`` (the others' are left as they were)."""
        if _no_mpi_type(array.dtype):
            return self._in_float32(array, op, lambda wide, _, op: self.ireduce_(wide, op, root),
                                    result_here=self.rank == root)
        if self.rank == root:
            req = self._comm.Ireduce(_MPI.IN_PLACE, array, op=_mpi_op(op, array.dtype), root=root)
            return self._reduced(self._work(req, "reduce", nbytes=array.nbytes, buffers=(array,)), op, array)
        return self._work(self._comm.Ireduce(array, None, op=_mpi_op(op, array.dtype), root=root), "reduce",
                          nbytes=array.nbytes, buffers=(array,))

    def igather(self, send, recv, root: int) -> Work:
        """Every rank's ``send`` into ``recv`` of rank ``root`` (``recv`` is ignored elsewhere)."""
        return self._work(self._comm.Igather(_wire(send), _wire(recv) if self.rank == root else None, root=root),
                          "gather",
                          nbytes=send.nbytes, buffers=(send, recv))

    def iscatter(self, send, recv, root: int) -> Work:
        """Slice ``i`` of ``send`` on rank ``root`` into ``recv`` of rank ``i``."""
        return self._work(self._comm.Iscatter(_wire(send) if self.rank == root else None, _wire(recv), root=root),
                          "scatter",
                          nbytes=send.nbytes if self.rank == root else 0, buffers=(send, recv))

    def ireduce_scatter(self, send, recv, op: ReduceOp = ReduceOp.SUM) -> Work:
        """Reduce ``send`` over all ranks; rank ``i`` receives slice ``i`` of the result in ``recv``."""
        if _no_mpi_type(send.dtype):
            return self._in_float32(send, op, lambda wide, wide_out, op: self.ireduce_scatter(wide, wide_out, op),
                                    out=recv)
        req = self._comm.Ireduce_scatter_block(send, recv, op=_mpi_op(op, send.dtype))
        return self._reduced(self._work(req, "reduce_scatter", nbytes=send.nbytes, buffers=(send, recv)), op, recv)

    def ialltoall(self, send, recv) -> Work:
        """Slice ``j`` of ``send`` on rank ``i`` goes to slice ``i`` of ``recv`` on rank ``j``."""
        return self._work(self._comm.Ialltoall(_wire(send), _wire(recv)), "all_to_all", nbytes=send.nbytes,
                          buffers=(send, recv))

    def ialltoallv(self, send, send_counts: list[int], recv, recv_counts: list[int]) -> Work:
        """Block ``j`` of the flat ``send`` on rank ``i`` (``send_counts[j]`` elements, the blocks in rank order)
        goes to block ``i`` of the flat ``recv`` on rank ``j`` (``recv_counts[i]`` elements)."""
        def spec(buf, counts):
            return [buf, (list(counts), [sum(counts[:i]) for i in range(len(counts))])]
        req = self._comm.Ialltoallv(spec(_wire(send), send_counts), spec(_wire(recv), recv_counts))
        return self._work(req, "all_to_all", nbytes=send.nbytes, buffers=(send, recv))

    def isend(self, array, dst: int, tag: int = 0) -> Work:
        work = self._work(self._comm.Isend(_wire(array), dest=dst, tag=tag), "send", nbytes=array.nbytes,
                          buffers=(array,))
        work.peer = dst
        return work

    def irecv(self, array, src: int | None = None, tag: int = 0) -> Work:
        """Receive into ``array`` from ``src`` (any rank if None); ``result()`` is the sender's rank."""
        status = _MPI.Status()
        source = _MPI.ANY_SOURCE if src is None else src
        work = self._work(self._comm.Irecv(_wire(array), source=source, tag=tag), "recv", status, buffers=(array,))
        work.peer = src

        def done():
            if status.Get_count(_MPI.BYTE) != array.nbytes:  # a shorter message would leave stale data
                raise RuntimeError(f"recv: got {status.Get_count(_MPI.BYTE)} bytes from rank {status.Get_source()}, "
                                   f"but the receiving array {array.shape} {array.dtype} holds {array.nbytes}")
            work.set_result(status.Get_source())

        return work.then(done)

    def probe(self, tag: int) -> tuple[int, int] | None:
        """``(source, bytes)`` of a message with ``tag`` waiting to be received from any rank; None when none is."""
        status = _MPI.Status()
        if not self._comm.Iprobe(source=_MPI.ANY_SOURCE, tag=tag, status=status):
            return None
        return status.Get_source(), status.Get_count(_MPI.BYTE)

    def ibarrier(self) -> Work:
        return self._work(self._comm.Ibarrier(), "barrier")

    # ------------------------------------------------------------- blocking forms
    def allreduce_(self, array, op: ReduceOp = ReduceOp.SUM) -> None:
        self.iallreduce_(array, op).wait()

    def broadcast_(self, array, root: int) -> None:
        self.ibroadcast_(array, root).wait()

    def allgather(self, send, recv) -> None:
        self.iallgather(send, recv).wait()

    def barrier(self) -> None:
        self.ibarrier().wait()
