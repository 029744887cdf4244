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
from typing import Any

from .._trace import State, Trace, finish, instant, is_recording, record, span, start

__all__ = ["Trace", "State", "record", "is_recording", "span", "start", "finish", "instant", "load", "merge",
           "render_png"]


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
    for index, (data, begun) in enumerate(zip(loaded, starts)):
        rank = data.get("otherData", {}).get("rank")
        rank = index if rank is None else rank
        shift = begun - origin if begun is not None and origin is not None else 0.0
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
