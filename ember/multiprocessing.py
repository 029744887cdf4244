"""``ember.multiprocessing``: Python's ``multiprocessing``, plus PyTorch's ``spawn``, as ``torch.multiprocessing`` is.

Every name of Python's module (``Process``, ``Queue``, ``Pool``, ``get_context``,
``set_start_method``, ...) is here unchanged. ``spawn(fn, args, nprocs)`` starts
``nprocs`` processes running ``fn(i, *args)`` and, with ``join=True``, waits for
them and re-raises a child's exception in the parent (``ProcessRaisedException``,
carrying the child's traceback), as PyTorch's.

Tensors cross processes as PyTorch's do (``ember/_shared_memory.py``, set up by
``import ember`` as ``import torch`` does): one sent through a ``Queue`` or
``Pipe``, or passed to a ``Process`` started with "spawn" or "forkserver" (or to
``spawn``), arrives as the same memory, moved into shared memory first; a
process forked after ``t.share_memory_()`` / ``model.share_memory()`` writes the
parent's memory (Hogwild training). A sender must stay alive until its tensors
have been received.

Differences from PyTorch: memory is always shared through file descriptors
(PyTorch's default ``file_descriptor`` strategy); ``set_sharing_strategy("file_system")``
is accepted and changes nothing.
"""

from __future__ import annotations

import multiprocessing as _mp
import multiprocessing.connection as _connection
import sys
import traceback
from collections.abc import Callable
from multiprocessing import *  # noqa: F403  (PyTorch's module re-exports Python's)
from typing import Any

from ._missing import module_getattr

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


class ProcessException(Exception):
    """A process started by ``spawn`` failed."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Process ``error_index`` raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """Process ``error_index`` exited with a non-zero code (or a signal) without raising."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _run(fn: Callable, i: int, args: tuple, errors) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes one ``spawn`` started; ``join()`` waits, raising the first failure."""

    def __init__(self, processes: list, error_queues: list) -> None:
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds; True once every process has exited cleanly.

        If one fails, the others are terminated and its error is raised here.
        """
        alive = [p for p in self.processes if p.exitcode is None]
        if alive:
            _connection.wait([p.sentinel for p in alive], timeout=timeout)
        for i, p in enumerate(self.processes):
            if p.exitcode is not None and p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                    other.join()
                if not self.error_queues[i].empty():
                    tb = self.error_queues[i].get()
                    raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n{tb}",
                                                 i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        if all(p.exitcode == 0 for p in self.processes):
            for p in self.processes:
                p.join()
            return True
        return False


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; see ``spawn``."""
    ctx = _mp.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        errors = ctx.SimpleQueue()
        process = ctx.Process(target=_run, args=(fn, i, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(errors)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Run ``fn(i, *args)`` for i in 0..nprocs-1, each in a new process (PyTorch's defaults and semantics).

    Returns None after all finished (``join=True``), else the ``ProcessContext`` to join.
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted for compatibility; ember always shares tensors through file descriptors ("file_descriptor")."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"unknown sharing strategy {new_strategy!r}; expected one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


def get_all_sharing_strategies() -> set[str]:
    return set(_STRATEGIES)


def __getattr__(name: str) -> Any:
    if hasattr(_mp, name) and not name.startswith("_"):
        return getattr(_mp, name)
    return _missing_getattr(name)


_missing_getattr = module_getattr(__name__)
