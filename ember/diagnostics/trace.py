"""A timeline of what happens in a training step, as Chrome trace events.

    with ember.diagnostics.trace.record() as tr:
        loss.backward()
    tr.save("step.json")        # open in https://ui.perfetto.dev or chrome://tracing

Instrumented places call ``span(name, cat)`` / ``instant(name, cat)``; when no
recording is active these cost one attribute read. Events carry the thread they
ran on, so DDP's communication thread shows as its own row next to backward.
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager
from typing import Any


class Trace:
    """Events recorded between ``record()``'s enter and exit."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()

    def _now_us(self) -> float:
        return (time.perf_counter() - self._t0) * 1e6

    def add(self, name: str, cat: str, start_us: float, end_us: float | None, args: dict | None) -> None:
        event = {"name": name, "cat": cat, "ts": start_us, "pid": os.getpid(),
                 "tid": threading.current_thread().name, "args": args or {}}
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

    def save(self, path: str) -> None:
        """Write Chrome trace JSON (thread names become rows)."""
        with open(path, "w") as f:
            json.dump({"traceEvents": self.events, "displayTimeUnit": "ms"}, f)


class _State:
    active: Trace | None = None


@contextmanager
def record():
    """Record events from every thread of this process while the block runs."""
    prev = _State.active
    trace = Trace()
    _State.active = trace
    try:
        yield trace
    finally:
        _State.active = prev


def is_recording() -> bool:
    return _State.active is not None


@contextmanager
def span(name: str, cat: str, **args: Any):
    """Time the block as one event (no-op unless recording)."""
    trace = _State.active
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
    trace = _State.active
    return None if trace is None else trace._now_us()


def finish(name: str, cat: str, started: float | None, **args: Any) -> None:
    """Record the event that began at ``started`` (a value from ``start()``)."""
    trace = _State.active
    if started is not None and trace is not None:
        trace.add(name, cat, started, trace._now_us(), args)


def instant(name: str, cat: str, **args: Any) -> None:
    """A point event (no-op unless recording)."""
    trace = _State.active
    if trace is not None:
        now = trace._now_us()
        trace.add(name, cat, now, None, args)
