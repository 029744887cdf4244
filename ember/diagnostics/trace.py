"""A timeline of what happens in a training step, as Chrome trace events.

    with ember.diagnostics.trace.record() as tr:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    tr.save("step.json")        # open in https://ui.perfetto.dev or chrome://tracing
    trace.render_png(tr, "step.png")

What is recorded (``cat``: events): ``forward``: each module's forward (``Module.__call__``);
``autograd``: each whole ``backward``; ``backward``: each graph node's backward, ``AccumulateGrad``
included; ``hooks``: a leaf's post-accumulate-grad hooks (where DDP copies into its buckets);
``ddp``: each bucket's all-reduce, launch to completion; ``optim``: ``step``, ``zero_grad``, clipping.

Instrumented places call ``span(name, cat)`` / ``start()`` + ``finish(...)``; when no recording is
active these cost one attribute read. Events carry the thread they ran on (``tid``, named by a
metadata event). Each rank saves its own file (``save(path)`` records the rank when
``ember.distributed`` is initialised); ``merge`` joins them into one file with ``pid`` = rank.
"""

from __future__ import annotations

import json
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
        with open(path, "w") as f:
            json.dump(self.to_json(rank), f)


def _current_rank() -> int | None:
    dist = sys.modules.get("ember.distributed")  # not imported by single-process programs: no rank
    return dist.get_rank() if dist is not None and dist.is_initialized() else None


def load(path: str) -> dict[str, Any]:
    """A saved trace file as its JSON object (``{"traceEvents": [...], ...}``)."""
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, list):  # the bare-array form of the format
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise ValueError(f"{path} is not a Chrome trace: expected a JSON object with a 'traceEvents' list")
    return data


def merge(paths: list[str], out_path: str | None = None) -> dict[str, Any]:
    """Join per-process trace files (one per rank) into one trace whose ``pid`` is the rank.

    Each file's rank comes from its ``otherData`` (written by ``save`` under ``ember.distributed``),
    else from its position in ``paths``. Timestamps are shifted onto one clock (the earliest
    recording's start), so ranks line up. Writes ``out_path`` when given; returns the merged object.
    """
    if not paths:
        raise ValueError("merge needs at least one trace file")
    loaded = [load(p) for p in paths]
    starts = [d.get("otherData", {}).get("start_unix_us") for d in loaded]
    origin = min((s for s in starts if s is not None), default=None)
    events: list[dict[str, Any]] = []
    for index, (data, start) in enumerate(zip(loaded, starts)):
        rank = data.get("otherData", {}).get("rank")
        rank = index if rank is None else rank
        shift = start - origin if start is not None and origin is not None else 0.0
        for e in data["traceEvents"]:
            if e.get("name") == "process_name" and e.get("ph") == "M":
                continue  # replaced below, so every rank is named the same way
            e = dict(e, pid=rank)
            if e.get("ph") != "M":
                e["ts"] = e["ts"] + shift
            events.append(e)
        events.append({"name": "process_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": rank, "tid": 0, "args": {"sort_index": rank}})
    merged = {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"start_unix_us": origin}}
    if out_path is not None:
        with open(out_path, "w") as f:
            json.dump(merged, f)
    return merged


def render_png(trace_or_path, png_path: str, title: str | None = None) -> None:
    """Draw the timeline with matplotlib: one row per (process, category). See ``ember.diagnostics.render``."""
    from .render import render_png as render

    render(trace_or_path, png_path, title)


class State:
    active: Trace | None = None  # the recording in progress; read directly by hot call sites


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
