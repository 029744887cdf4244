"""The timeline recorder's core: the spans ember's own code emits while a recording is active.

Instrumented places (a module's forward, each backward node, hooks, DDP's all-reduces, the
optimizer) call ``start()`` + ``finish(name, cat, started)``, or ``span``; when nothing records,
these cost one attribute read. This module imports nothing from ember, so every layer can use it.
The user-facing side — ``record()``, saving, merging per-rank files, drawing — is
``ember.diagnostics.trace``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any


class Trace:
    """Events recorded between ``record()``'s enter and exit."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._threads: dict[int, str] = {}
        self._t0 = time.perf_counter()
        self._t0_unix_us = time.time() * 1e6  # lines up the files of several processes in ``merge``

    def _now_us(self) -> float:
        return (time.perf_counter() - self._t0) * 1e6

    def add(self, name: str, cat: str, start_us: float, end_us: float | None, args: dict | None) -> None:
        tid = threading.get_native_id()
        if tid not in self._threads:
            self._threads[tid] = threading.current_thread().name
        event = {"name": name, "cat": cat, "ts": start_us, "pid": os.getpid(), "tid": tid, "args": args or {}}
        if end_us is None:
            event.update(ph="i", s="t")
        else:
            event.update(ph="X", dur=max(end_us - start_us, 0.0))
        with self._lock:
            self.events.append(event)

    def spans(self, cat: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
        """Recorded events, filtered by category and/or name, in time order."""
        out = [e for e in self.events if (cat is None or e["cat"] == cat) and (name is None or e["name"] == name)]
        return sorted(out, key=lambda e: e["ts"])

    def to_json(self, rank: int | None = None) -> dict[str, Any]:
        """The Chrome trace object: events, thread-name metadata, and when and where it was recorded."""
        if rank is None:
            rank = _current_rank()
        pid = os.getpid()
        meta = [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
                for tid, name in self._threads.items()]
        if rank is not None:
            meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": f"rank {rank}"}})
        return {"traceEvents": meta + self.events, "displayTimeUnit": "ms",
                "otherData": {"start_unix_us": self._t0_unix_us, "rank": rank}}

    def save(self, path: str, rank: int | None = None) -> None:
        """Write Chrome trace JSON (each thread is a row). ``rank`` defaults to this process's rank
        when ``ember.distributed`` is initialised."""
        import json

        with open(path, "w") as f:
            json.dump(self.to_json(rank), f)


def _current_rank() -> int | None:
    dist = sys.modules.get("ember.distributed")  # not imported by single-process programs: no rank
    return dist.get_rank() if dist is not None and dist.is_initialized() else None


class State:
    active: Trace | None = None  # the recording in progress; read directly by hot call sites


def module_label(module) -> str:
    """The name of a module's forward span; ``ember.diagnostics`` replaces it with the module's path."""
    return type(module).__name__


@contextmanager
def record():
    """Record events from every thread of this process while the block runs."""
    prev = State.active
    trace = Trace()
    State.active = trace
    try:
        yield trace
    finally:
        State.active = prev


def is_recording() -> bool:
    return State.active is not None


@contextmanager
def span(name: str, cat: str, **args: Any):
    """Time the block as one event (no-op unless recording)."""
    trace = State.active
    if trace is None:
        yield
        return
    start = trace._now_us()
    try:
        yield
    finally:
        trace.add(name, cat, start, trace._now_us(), args)


def start() -> float | None:
    """A start time for ``finish`` (None when not recording): for hot paths, cheaper than ``span``."""
    trace = State.active
    return None if trace is None else trace._now_us()


def finish(name: str, cat: str, started: float | None, **args: Any) -> None:
    """Record the event that began at ``started`` (a value from ``start()``)."""
    trace = State.active
    if started is not None and trace is not None:
        trace.add(name, cat, started, trace._now_us(), args)


def instant(name: str, cat: str, **args: Any) -> None:
    """A point event (no-op unless recording)."""
    trace = State.active
    if trace is not None:
        now = trace._now_us()
        trace.add(name, cat, now, None, args)
