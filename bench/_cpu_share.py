"""How much of its CPUs the machine actually got over a stretch of wall clock (Linux: ``/proc/stat``).

On a virtual machine the host may stop running a busy vCPU for a while: the guest's clock goes on, but no tick of
that time is accounted to user, system, idle or any other state (this 2-core VM reports no steal time for it). Measured
here: a two-thread GEMM loop took 1.9 ms per product in seconds where the kernel accounted 197-198 of 200 ticks, and
8-17 ms in seconds where it accounted 54-120, with nothing else running in the guest. A timing block is only
comparable with another when both ran with (nearly) all the ticks: ``share`` says which did.

A block is not comparable either when other processes in the guest took CPU time while it ran (a two-thread
PyTorch op spin-waits at its barriers when a third process holds a core: ``exp`` over 128 Ki float32 took 4-8 ms
instead of 0.08-0.14): ``others`` is that time as a fraction of the machine's CPUs.

The ticks are USER_HZ (100 per second per CPU), so a block of 0.1 s on 2 CPUs is judged on 20 ticks (5 % steps).
"""

from __future__ import annotations

import os
import threading
import time


def _ticks() -> tuple[int, int] | None:
    """(all ticks accounted, busy ticks) over the machine's CPUs since boot."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal (guest and guest_nice are already inside user and nice)
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return user + nice + system + idle + iowait + irq + softirq + steal, user + nice + system + irq + softirq


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system


class Window:
    """A stretch of wall clock. After it ends, ``measure()`` gives (share, others): the fraction of the CPUs'
    ticks the kernel accounted (1.0: the guest ran all the time) and the fraction of the CPUs that other processes
    used; None where /proc/stat is not there."""

    def __init__(self) -> None:
        self.start_ticks = _ticks()
        self.start_own = _own_seconds()
        self.start = time.perf_counter()

    def measure(self) -> tuple[float, float] | None:
        end_ticks = _ticks()
        own = _own_seconds() - self.start_own
        elapsed = time.perf_counter() - self.start
        if self.start_ticks is None or end_ticks is None or elapsed <= 0:
            return None
        hz, cpus = os.sysconf("SC_CLK_TCK"), os.cpu_count() or 1
        capacity = elapsed * hz * cpus
        share = (end_ticks[0] - self.start_ticks[0]) / capacity
        others = max(0.0, (end_ticks[1] - self.start_ticks[1]) - own * hz) / capacity
        return share, others


def _other_threads() -> dict[int, tuple[int, bool]] | None:
    """Each other thread of this process by id: (its CPU time in ns, whether it is running or waiting to run);
    None where /proc has no per-thread entries."""
    me = threading.get_native_id()
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    out = {}
    for tid in tids:
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError, IndexError):  # a thread that just ended
            continue
        out[int(tid)] = (ns, state == "R")
    return out


def settle(quiet_s: float = 0.012, limit_s: float = 0.3) -> float:
    """Wait until no other thread of this process runs, or wants to: none runnable and none that used CPU over
    ``quiet_s`` (longer than a scheduler tick, at which a running thread's CPU time is brought up to date), at most
    ``limit_s``; returns the seconds waited.

    Why: a timing block must not pay for the threads of the block before it. PyTorch's OpenMP workers spin after a
    parallel region before they sleep (GNU OpenMP: some 300 000 polls): after a block of PyTorch's GPT inference at
    batch 1 at two threads, its worker went on burning 4-12 ms of CPU, inside ember's next block, where the
    process's CPU time (``--cpu-time``) counted it as ember's and the wall clock had the worker holding a core."""
    start = time.perf_counter()
    before = _other_threads()
    if before is None:
        return 0.0
    while time.perf_counter() - start < limit_s:
        time.sleep(quiet_s)
        now = _other_threads()
        if not any(running or ns > before.get(tid, (0, False))[0] for tid, (ns, running) in now.items()):
            break
        before = now
    return time.perf_counter() - start
