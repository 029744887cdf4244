"""Noticing a straggler: one rank slower than the others makes every rank wait for it at each all-reduce.

Measured at no extra communication: each rank writes, into its row of the lockstep table that already
travels with DDP's last gradient bucket (``lockstep.py``), how long its previous backward waited for the
bucket all-reduces to complete and how long its previous iteration took (from one DDP forward to the next).
Every rank then reads every rank's numbers, so all reach the same verdict.

A rank is a straggler when, over a window of ``WINDOW`` iterations, it waited least, and each of the other ranks
waited, in its median iteration, at least ``SHARE`` of its median iteration time and at least ``MIN_WAIT_MS``:
they spent that share of their typical step idle, waiting for it. Medians, not sums: one long iteration (a first
optimizer step compiling its kernels on one rank, a checkpoint save) makes the others wait once, which summed over
a window looks like a steady share; a straggler makes them wait at every step. A balanced run has every rank
waiting about as little (the all-reduce's own time), so it never warns; nor do steps of a few milliseconds, where
a share that large is the operating system's scheduling jitter on a busy machine rather than a slower rank, and
costs next to nothing. The verdict is a warning (once per DDP model, naming the rank and the share), issued on
the group's rank 0 only: every rank reaches the same verdict, and the launcher shows every rank's output, so
warning on each would print the same line once per rank. While ember's trace records, every rank adds a
``straggler`` event in category ``ddp`` at each iteration the verdict holds.
"""

from __future__ import annotations

import statistics

from .. import _trace as trace
from .. import _warnings

WINDOW = 10  # iterations judged together (one slow step is noise, not a straggler)
WARMUP = 2  # the first iterations include one-time costs (buffers, the first all-reduces)
SHARE = 0.3  # the others idle at least this share of each step
MIN_WAIT_MS = 5.0  # ... and at least this long per step (below it, scheduling noise on a busy machine)


class StragglerMonitor:
    """Collects each rank's (wait, iteration time) per iteration and judges each full window."""

    def __init__(self, world: int, rank: int = 0) -> None:
        self.world = world
        self.rank = rank  # this process's rank in the group: rank 0 warns
        self.seen = 0
        self.waits: list[list[int]] = [[] for _ in range(world)]  # per rank, one entry per iteration of the window
        self.steps: list[list[int]] = [[] for _ in range(world)]
        self.count = 0
        self.warned = False  # the verdict has been reached once (on every rank; rank 0 warned)

    def observe(self, waits_us, steps_us) -> None:
        """One iteration's numbers, one per rank (microseconds); a zero step time means "not measured yet"."""
        self.seen += 1
        if self.world < 2 or self.seen <= WARMUP or min(steps_us) <= 0:
            return
        for r in range(self.world):
            self.waits[r].append(int(waits_us[r]))
            self.steps[r].append(int(steps_us[r]))
        self.count += 1
        if self.count < WINDOW:
            return
        self._judge()
        self.waits, self.steps, self.count = [[] for _ in range(self.world)], [[] for _ in range(self.world)], 0

    def _judge(self) -> None:
        waits = [statistics.median(w) for w in self.waits]
        steps = [statistics.median(s) for s in self.steps]
        slow = min(range(self.world), key=lambda r: waits[r])
        others = [r for r in range(self.world) if r != slow]
        share = min(waits[r] / steps[r] for r in others)  # what every other rank lost, at least
        least_wait_ms = min(waits[r] for r in others) / 1e3
        if share < SHARE or least_wait_ms < MIN_WAIT_MS or waits[slow] / steps[slow] >= share / 2:
            return
        step_ms = sum(steps) / self.world / 1e3
        trace.instant("straggler", "ddp", rank=slow, waited_share=round(share, 3), step_ms=round(step_ms, 3))
        if not self.warned:
            self.warned = True
            if self.rank != 0:
                return
            _warnings.warn(
                f"DistributedDataParallel: rank {slow} is a straggler: over the last {self.count} iterations the "
                f"other ranks waited for it {share:.0%} of each step (a step takes {step_ms:.1f} ms), so every "
                f"rank runs at its pace. Look for what makes rank {slow} slower (a busier machine or core, more "
                "data, a slower device).", RuntimeWarning)
