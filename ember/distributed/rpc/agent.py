"""The RPC agent of one worker: MPI messages out, a listening thread in, a thread pool that runs incoming calls.

    caller thread --call()--> Isend(request) ............ listener: Iprobe/Recv --> pool thread runs func
    listener: Recv(reply) --> completes the _Call <....... Isend(reply) <----------- (result or exception)

Threading: MPI runs at ``MPI_THREAD_MULTIPLE`` (``comm.init`` asks for it; ``init_rpc`` refuses to start at a lower
level, where two threads may not call MPI at once). The agent has its own communicator, a copy of
``MPI_COMM_WORLD``, so RPC messages never mix with collectives. One listener thread receives every message: it
polls ``MPI_Iprobe`` (backing off to 1 ms sleeps when idle, so a waiting worker leaves its core to others), hands
requests to the pool (``num_worker_threads`` threads, so a call may itself make calls, or block, without stopping
this worker from serving others) and completes the callers' futures with replies. Sends are nonblocking; the
listener retires them as they complete. A call's future fails with a RuntimeError once its timeout has passed with
no reply (a worker that died or stopped serving), never hangs.
"""

from __future__ import annotations

import itertools
import pickle
import threading
import time
from concurrent.futures import Future as _Slot
from concurrent.futures import ThreadPoolExecutor

from ..._backend import xp
from .. import comm
from . import _grad_context, _wire, functions

_TAG = 0x5250  # every RPC message (the communicator is the agent's own)
NAME_BYTES = 128  # a worker name's limit, for the exchange of names at start


class WorkerInfo:
    """A worker's ``name`` and ``id`` (its rank), as ``torch.distributed.rpc.WorkerInfo``."""

    __slots__ = ("name", "id")

    def __init__(self, name: str, id: int) -> None:  # noqa: A002  (PyTorch's argument name)
        self.name, self.id = name, id

    def __eq__(self, other) -> bool:
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self) -> int:
        return hash((self.name, self.id))

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"

    def __reduce__(self):
        return WorkerInfo, (self.name, self.id)


class _Call:
    """A call this worker made, until its reply comes; what ``ember.futures.Future`` waits on (a Work's protocol)."""

    def __init__(self, agent: Agent, req_id: int, dst: int, timeout: float) -> None:
        self._agent, self._req_id, self._dst = agent, req_id, dst
        self._timeout = timeout
        self._deadline = None if timeout == 0 else time.monotonic() + timeout
        self._event = threading.Event()
        self._value = None
        self._error: BaseException | None = None

    def complete(self, value=None, error: BaseException | None = None) -> None:
        self._value, self._error = value, error
        self._event.set()

    def is_completed(self) -> bool:
        return self._event.is_set()

    def wait(self) -> bool:
        remaining = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
        if not self._event.wait(remaining):
            self._agent.forget(self._req_id)
            self.complete(error=RuntimeError(
                f"RPC ran for more than set timeout ({self._timeout * 1000:.0f} ms) and will now be marked with an "
                f"error (the call to {self._agent.workers[self._dst]} got no reply: it is still running, or that "
                "worker stopped serving calls)"))
        return True

    def result(self):
        if self._error is not None:
            raise self._error
        return self._value


class Agent:
    """This worker's end of the RPC job (made by ``init_rpc``; collective: every worker makes one)."""

    def __init__(self, name: str, num_worker_threads: int, timeout: float) -> None:
        # Bounds the start (every worker must call init_rpc within it); later waits are the calls' own.
        self.comm = comm.world(timeout=timeout or float("inf"))
        self.id = self.comm.rank
        self.timeout = timeout
        self.workers = [WorkerInfo(n, i) for i, n in enumerate(self._exchange_names(name))]
        self.by_name = {w.name: w for w in self.workers}
        if len(self.by_name) != len(self.workers):
            names = [w.name for w in self.workers]
            self.comm.free()
            raise RuntimeError(f"init_rpc: worker names must be unique, got {names}")
        self.info = self.workers[self.id]
        self._lock = threading.Lock()
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()
        self._sends: list = []  # (Work, buffer) of sends not yet complete
        self.owned: dict[tuple[int, int], _Slot] = {}  # the values of the RRefs this worker owns
        self.requests_sent = self.requests_served = 0
        self._counted = 0  # requests sent + served, as of the last round of drain()
        self.active = 0  # calls running in the pool now
        self._stop = False
        self._pool = ThreadPoolExecutor(num_worker_threads, thread_name_prefix=f"rpc-{name}")
        self._listener = threading.Thread(target=self._listen, name=f"rpc-listener-{name}", daemon=True)
        self._listener.start()

    def _exchange_names(self, name: str) -> list[str]:
        raw = name.encode()
        mine = xp.zeros(NAME_BYTES, dtype=xp.uint8)
        mine[:len(raw)] = xp.frombuffer(raw, dtype=xp.uint8)
        every = xp.zeros(NAME_BYTES * self.comm.size, dtype=xp.uint8)
        self.comm.allgather(mine, every)
        return [bytes(row).rstrip(b"\0").decode() for row in every.reshape(self.comm.size, NAME_BYTES)]

    # ------------------------------------------------------------- calls out
    def call(self, dst: int, func, args: tuple, kwargs: dict, timeout: float, rref_id=None) -> _Call:
        """Send ``func(*args, **kwargs)`` to worker ``dst`` (or, with ``rref_id``, create that RRef's value there)."""
        if self._stop:
            raise RuntimeError("RPC has been shut down on this worker; no further calls can be made")
        context = _grad_context.current()
        if context is not None:
            with context.lock:
                context.workers.add(dst)
        body = _wire.dumps((func, args, kwargs), context, self.id, dst)  # a pickling error is the caller's, now
        with self._lock:
            req_id = next(self._ids)
            call = self._calls[req_id] = _Call(self, req_id, dst, timeout)
            self.requests_sent += 1
        kind = "call" if rref_id is None else "remote"
        self._post(dst, (kind, req_id, _grad_context.current_id(), rref_id, body))
        return call

    def forget(self, req_id: int) -> None:
        with self._lock:
            self._calls.pop(req_id, None)

    def outstanding(self) -> list[_Call]:
        with self._lock:
            return list(self._calls.values())

    def _post(self, dst: int, message: tuple) -> None:
        data = xp.frombuffer(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL), dtype=xp.uint8)
        work = self.comm.isend(data, dst, tag=_TAG)
        with self._lock:
            self._sends.append((work, data))

    def slot(self, rref_id: tuple[int, int]) -> _Slot:
        """Where the value of owned RRef ``rref_id`` is (or will be) kept."""
        with self._lock:
            return self.owned.setdefault(rref_id, _Slot())

    # ------------------------------------------------------------- the listener
    def _listen(self) -> None:
        pause = 0.0
        while not self._stop:
            got = self.comm.probe(_TAG)
            if got is None:
                self._retire_sends()
                time.sleep(pause)
                pause = min(pause * 2 + 5e-5, 1e-3)
                continue
            pause = 0.0
            src, nbytes = got
            buf = xp.empty(nbytes, dtype=xp.uint8)
            self.comm.irecv(buf, src, tag=_TAG).wait()  # already here (probed): completes at once
            kind, req_id, context_id, rref_id, body = pickle.loads(buf.tobytes())
            if kind == "reply":
                self._on_reply(req_id, body)
                continue
            with self._lock:
                self.requests_served += 1
                self.active += 1
            if rref_id is not None:
                self.slot(rref_id)  # made now, in arrival order: a later fetch of its value finds it
            self._pool.submit(self._serve, src, req_id, context_id, rref_id, body)

    def _retire_sends(self) -> None:
        with self._lock:
            if self._sends:
                self._sends = [(w, d) for w, d in self._sends if not w.is_completed()]

    def _on_reply(self, req_id: int, body: bytes) -> None:
        with self._lock:
            call = self._calls.pop(req_id, None)
        if call is None:
            return  # it timed out; the caller was told
        try:
            ok, value = _wire.loads(body)
        except Exception as e:  # noqa: BLE001  (the caller gets it, as any failure of the call)
            call.complete(error=RuntimeError(f"RPC: the reply could not be unpickled here: {e!r}"))
            return
        call.complete(value=value) if ok else call.complete(error=value.to_exception())

    def _serve(self, src: int, req_id: int, context_id: int | None, rref_id, body: bytes) -> None:
        try:
            with _grad_context.entered(context_id) as context:
                try:
                    func, args, kwargs = _wire.loads(body)
                    ok, value = True, functions.result_of(func, func(*args, **kwargs))
                except Exception as e:  # noqa: BLE001  (sent back to the caller, as PyTorch does)
                    ok, value = False, _wire.RemoteException.of(e, self.info)
                if rref_id is not None:  # remote(): the value stays here; the reply only confirms it
                    slot = self.slot(rref_id)
                    slot.set_result(value) if ok else slot.set_exception(value.to_exception())
                    value = None if ok else value
                try:
                    reply = _wire.dumps((ok, value), context, self.id, src)
                except Exception as e:  # noqa: BLE001
                    reply = _wire.dumps((False, _wire.RemoteException.of(e, self.info)), None, self.id, src)
            self._post(src, ("reply", req_id, None, None, reply))
        finally:
            with self._lock:
                self.active -= 1

    # ------------------------------------------------------------- shutdown
    def drain(self, timeout: float = 0) -> None:
        """Return once no worker has work left: every call made has its reply, no call is running anywhere.

        Rounds of: wait for this worker's own calls and the calls it serves, then an all-reduce of how many
        requests each worker sent or served since the last round. A round in which no worker sent or served any
        means nothing is in flight (the listener keeps serving throughout). Collective, as PyTorch's shutdown.
        ``timeout`` (seconds; 0: none) bounds the whole wait, then a RuntimeError.
        """
        deadline = None if not timeout else time.monotonic() + timeout

        def pause() -> None:
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError(f"rpc.shutdown: the workers did not all finish their work and reach shutdown "
                                   f"within {timeout:g} s")
            time.sleep(1e-3)

        while True:
            while True:
                for call in self.outstanding():
                    call.wait()  # bounded by the call's timeout; its failure is for whoever holds its future
                if not self.outstanding() and self.active == 0:
                    break
                pause()
            with self._lock:
                total = self.requests_sent + self.requests_served
                delta, self._counted = total - self._counted, total
            count = xp.array([delta], dtype=xp.int64)
            work = self.comm.iallreduce_(count)
            while not work.is_completed():
                pause()
            if int(count[0]) == 0:
                return

    def stop(self) -> None:
        """Stop listening; calls still waiting for a reply fail."""
        self._stop = True
        if self._listener is not threading.current_thread():
            self._listener.join()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for call in self.outstanding():
            self.forget(call._req_id)
            call.complete(error=RuntimeError("RPC was shut down before this call's reply arrived"))
        self._retire_sends()
        if not self._sends:  # a send still in progress needs the communicator
            self.comm.free()
