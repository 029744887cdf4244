"""``ember.profiler``: PyTorch's profiler API on ember's timeline recorder (``ember._trace``).

``with profile() as prof:`` records what ember's trace records (module forwards,
backward nodes, optimizer steps, DDP all-reduces) plus every
``record_function("name")`` block; ``prof.export_chrome_trace(path)`` writes it
as Chrome trace JSON, like PyTorch's, and ``prof.key_averages().table()`` sums
the events by name. ``record_function`` costs one attribute read when nothing is
recording, so model code can keep it.

Differences from PyTorch: ember's events are ember's (module, autograd-node and
optimizer spans, not ATen operators); ``schedule`` is accepted but the whole block
is recorded, and ``on_trace_ready`` is called once, when it ends; there is no
memory, shape, FLOP or stack information (those arguments are accepted).
"""

from __future__ import annotations

import enum
import functools
import os
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from . import _trace
from ._missing import module_getattr


def kineto_available() -> bool:
    """Whether this build has Kineto, the profiling library behind PyTorch's ``torch.profiler.profile``: False,
    as for a PyTorch built without it (libraries then fall back on ``torch.autograd.profiler.profile``, which ember
    also records with)."""
    return False


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU}


class record_function:
    """Mark a block (``with record_function("name"):``) or a function (as a decorator) on the timeline."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._started: list[float | None] = []

    def __enter__(self) -> record_function:
        self._started.append(_trace.start())
        return self

    def __exit__(self, *exc: Any) -> None:
        extra = {} if self.args is None else {"args": self.args}
        _trace.finish(self.name, "user_annotation", self._started.pop(), **extra)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any):
            with self:
                return fn(*args, **kwargs)

        return wrapper


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's step schedule; accepted by ``profile`` (which records every step)."""
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first or (repeat and (step - skip_first) // cycle >= repeat):
            return ProfilerAction.NONE
        pos = (step - skip_first) % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if pos == cycle - 1 else ProfilerAction.RECORD

    return action


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An ``on_trace_ready`` that writes ``<worker>.<ms>.pt.trace.json`` (Chrome trace JSON) into ``dir_name``."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{int(time.time() * 1000)}.pt.trace.json"))

    return handler


class FunctionEventAvg(NamedTuple):
    """One row of ``key_averages()``: the events named ``key``, how many (``count``) and their summed duration in
    microseconds (``cpu_time_total``), read by PyTorch's attribute names (``e.key``, ``e.count``,
    ``e.cpu_time_total``, ``e.cpu_time`` the average); a tuple too, ``(name, calls, total_us)``."""

    key: str
    count: int
    cpu_time_total: float

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0


class EventList(list):
    """Profiler events as a list with ``table()`` (``torch.autograd.profiler.EventList``); ``key_averages()``
    returns one of ``FunctionEventAvg`` rows (the events summed by name), largest total first."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        rows = self[:row_limit] if row_limit and row_limit > 0 else list(self)
        width = max([4, *(len(name) for name, _, _ in rows)])
        lines = [f"{'Name':<{width}}  {'Calls':>7}  {'Total (us)':>12}  {'Avg (us)':>10}"]
        lines += [f"{name:<{width}}  {calls:>7}  {total:>12.1f}  {total / calls:>10.1f}" for name, calls, total in rows]
        return "\n".join(lines)


class profile:
    """Record ember's timeline while the block runs (see the module docstring); PyTorch's arguments."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None, schedule=None,
                 on_trace_ready: Callable[[profile], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, **kwargs: Any) -> None:
        self.on_trace_ready = on_trace_ready
        self.enabled = bool(kwargs.get("enabled", True))  # the legacy autograd.profiler.profile's switch
        self.step_num = 0
        self._recording = None
        self._trace: _trace.Trace | None = None

    def start(self) -> None:
        if not self.enabled:
            return
        self._recording = _trace.record()
        self._trace = self._recording.__enter__()

    def stop(self) -> None:
        if self._recording is not None:
            self._recording.__exit__(None, None, None)
            self._recording = None
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step (recorded as an instant event)."""
        _trace.instant(f"ProfilerStep#{self.step_num}", "user_annotation")
        self.step_num += 1

    def events(self) -> list[dict[str, Any]]:
        """The recorded Chrome trace events, in time order."""
        return self._recorded().spans()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        totals: dict[str, list] = {}
        for event in self._recorded().spans():
            entry = totals.setdefault(event["name"], [0, 0.0])
            entry[0] += 1
            entry[1] += event.get("dur", 0.0)
        rows = sorted((FunctionEventAvg(name, calls, total) for name, (calls, total) in totals.items()),
                      key=lambda r: -r[2])
        return EventList(rows)

    def export_chrome_trace(self, path: str) -> None:
        self._recorded().save(path)

    def _recorded(self) -> _trace.Trace:
        if self._trace is None:
            raise RuntimeError("the profiler has not recorded anything: use it as `with profile() as prof:` "
                               "(or call start() and stop())")
        return self._trace


__getattr__ = module_getattr(__name__)
