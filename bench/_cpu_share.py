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
