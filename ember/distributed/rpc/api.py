"""``init_rpc``, ``shutdown``, ``get_worker_info``, ``rpc_sync`` and ``rpc_async`` (``remote`` is in ``rref.py``).

The workers are the ranks of the MPI job (``python -m ember.distributed.run`` or ``mpiexec`` started them), so
``rank`` and ``world_size`` must be those of the job; MPI has already connected them, and the rendezvous PyTorch
does through ``MASTER_ADDR``/``MASTER_PORT`` (``init_method``) is not needed: those are accepted and ignored.
"""

from __future__ import annotations

import atexit
import os
import re

from ...futures import Future
from .. import comm
from . import _grad_context
from .agent import NAME_BYTES, Agent, WorkerInfo
from .constants import DEFAULT_NUM_WORKER_THREADS, DEFAULT_SHUTDOWN_TIMEOUT, UNSET_RPC_TIMEOUT
from .options import BackendType, RpcBackendOptions

_agent: list[Agent | None] = [None]
_NAME = re.compile(r"^[A-Za-z0-9_:\-\.]*$")  # PyTorch's rule for worker names


def current_agent() -> Agent:
    agent = _agent[0]
    if agent is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
    return agent


def is_initialized() -> bool:
    return _agent[0] is not None


def init_rpc(name: str, backend: BackendType | None = None, rank: int = -1, world_size: int | None = None,
             rpc_backend_options: RpcBackendOptions | None = None) -> None:
    """Start this worker's RPC agent; collective: every rank of the job calls it.

    ``rank`` (default: ``RANK`` from the environment) and ``world_size`` (default: ``WORLD_SIZE``) must match the
    MPI job's. Names must be unique. ``rpc_backend_options.rpc_timeout`` (default 60 s) is the default timeout of
    every call and bounds the wait for the other workers to call ``init_rpc``.
    """
    if _agent[0] is not None:
        raise RuntimeError("RPC is already initialized")
    if backend is not None and not isinstance(backend, BackendType):
        raise TypeError(f"Argument backend must be a member of BackendType, got {backend!r}")
    if not isinstance(name, str) or not name or not _NAME.match(name):
        raise ValueError(f"Worker name must match ^[A-Za-z0-9_:\\-\\.]*$ and not be empty, got {name!r}")
    if len(name) > NAME_BYTES:
        raise ValueError(f"init_rpc: a worker name is at most {NAME_BYTES} characters, got {name!r}")
    options = rpc_backend_options if rpc_backend_options is not None else RpcBackendOptions()
    if not isinstance(options, RpcBackendOptions):
        raise TypeError(f"rpc_backend_options must be an RpcBackendOptions, got {type(options).__name__}")
    mpi_rank, mpi_size = comm.world_rank_size()
    level = comm.thread_level()
    if level != "multiple":
        raise RuntimeError(f"init_rpc needs MPI_THREAD_MULTIPLE (its listener thread calls MPI while the program "
                           f"does too), but MPI was started at thread level {level!r}: let ember start MPI (do not "
                           "call MPI_Init yourself, e.g. through mpi4py, before init_rpc), or use an MPI built "
                           "with thread support")
    rank = int(os.environ.get("RANK", mpi_rank)) if rank is None or rank < 0 else rank
    world_size = int(os.environ.get("WORLD_SIZE", mpi_size)) if world_size is None else world_size
    if (rank, world_size) != (mpi_rank, mpi_size):
        raise RuntimeError(f"init_rpc: rank={rank}, world_size={world_size} do not match this process's place in "
                           f"the MPI job (rank {mpi_rank} of {mpi_size}); ember's RPC workers are the job's ranks")
    threads = getattr(options, "num_worker_threads", DEFAULT_NUM_WORKER_THREADS)
    _agent[0] = Agent(name, threads, options.rpc_timeout)
    atexit.register(_stop_at_exit)


def _stop_at_exit() -> None:
    """A program that never called shutdown(): stop listening before MPI is finalized (registered after it)."""
    if _agent[0] is not None:
        _agent[0].stop()
        _agent[0] = None


def shutdown(graceful: bool = True, timeout: float = DEFAULT_SHUTDOWN_TIMEOUT) -> None:
    """Stop RPC on this worker. ``graceful`` (default): first wait until every worker has called ``shutdown`` and
    no call is outstanding anywhere (collective; ``timeout`` seconds at most, 0: no limit, then a RuntimeError).
    Then stop serving; the RRef values this worker owns and its autograd contexts are released. Not graceful:
    stop at once; calls still waiting for a reply fail, and calls to this worker time out."""
    agent = current_agent()
    try:
        if graceful:
            agent.drain(timeout)
    finally:
        _agent[0] = None
        agent.stop()
        _grad_context.clear()


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """The ``WorkerInfo`` of the worker called ``worker_name`` (default: this worker)."""
    agent = current_agent()
    if worker_name is None:
        return agent.info
    info = agent.by_name.get(worker_name)
    if info is None:
        raise RuntimeError(f"name:{agent.info.name},rank:{agent.id} could not find destination name {worker_name}")
    return info


def _worker_id(agent: Agent, to) -> int:
    if isinstance(to, WorkerInfo):
        return to.id
    if isinstance(to, str):
        return get_worker_info(to).id
    if isinstance(to, int) and not isinstance(to, bool):
        if not 0 <= to < len(agent.workers):
            raise RuntimeError(f"Unknown destination worker id {to} (the job has {len(agent.workers)} workers)")
        return to
    raise TypeError(f"the destination `to` must be a worker name, WorkerInfo or id, got {type(to).__name__}")


def prepare(to, func, args, kwargs, timeout):
    """The checks every call makes: (agent, destination id, args, kwargs, timeout in seconds; 0 for none)."""
    agent = current_agent()
    if not callable(func):
        raise TypeError("function should be callable.")
    dst = _worker_id(agent, to)
    timeout = agent.timeout if timeout is None or timeout == UNSET_RPC_TIMEOUT else float(timeout)
    if timeout < 0:
        raise ValueError(f"timeout must be non-negative (0: no timeout), got {timeout}")
    return agent, dst, tuple(args) if args is not None else (), dict(kwargs) if kwargs is not None else {}, timeout


def rpc_async(to, func, args: tuple | None = None, kwargs: dict | None = None,
              timeout: float = UNSET_RPC_TIMEOUT):
    """Run ``func(*args, **kwargs)`` on worker ``to``; a ``Future`` of its result.

    ``timeout`` in seconds (default: ``rpc_backend_options.rpc_timeout``, 60 s; 0: none): past it the future
    fails with a RuntimeError. An exception of ``func`` is raised by ``wait()`` as its own type, with the remote
    traceback in its message.
    """
    agent, dst, args, kwargs, timeout = prepare(to, func, args, kwargs, timeout)
    return Future._of_work(agent.call(dst, func, args, kwargs, timeout))


def rpc_sync(to, func, args: tuple | None = None, kwargs: dict | None = None,
             timeout: float = UNSET_RPC_TIMEOUT):
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result (``rpc_async(...).wait()``)."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


__all__ = ["get_worker_info", "init_rpc", "rpc_async", "rpc_sync", "shutdown"]
