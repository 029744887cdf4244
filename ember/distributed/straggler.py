"""Noticing a straggler: one rank slower than the others makes every rank wait for it at each all-reduce.

Measured at no extra communication: each rank writes, into its row of the lockstep table that already
travels with DDP's last gradient bucket (``lockstep.py``), three numbers of its previous iteration (from one DDP
forward to the next): how long it took, how long it waited blocked in communication (any collective or message on
its thread: the gradient all-reduces, a ZeroRedundancyOptimizer's broadcasts, a BatchNorm buffer copy), and how
long, outside those waits, it was ready to run while the operating system ran another process (``_waits.py``).
Every rank then reads every rank's numbers, so all reach the same verdict.

A rank's own time is its iteration less those two waits: the time it spent on its own work. An iteration points at
the rank that waited least when every other rank waited at least ``MIN_WAIT_MS`` and, longer than it, at least
``SHARE`` of its iteration, and the slow rank's own time exceeds each other rank's by at least ``SHARE`` of it:
the others idled because its work takes longer, not because the operating system kept it from a core. A rank is
a straggler when, of a window of ``WINDOW`` iterations, at least ``SUSTAINED`` point at it: a slower rank makes
the others wait at every step, while on a loaded or oversubscribed
machine the rank that waits for a core changes from step to step, and one long iteration (a first optimizer step
compiling its kernels on one rank, a checkpoint save) makes the others wait once. A balanced run has every rank
waiting about as little (the all-reduce's own time), so it never warns; nor do steps of a few milliseconds, where
a share that large is the operating system's scheduling jitter on a busy machine rather than a slower rank, and
costs next to nothing. A rank slowed only by other processes competing for its cores is not named: ember cannot
tell that from a machine busy as a whole (where the rank that waits changes at random), and the program is not
at fault. Where the operating system does not report that time (anything but Linux), it counts as the rank's own.

The verdict is a warning (once per DDP model, naming the rank and the share), issued on the group's rank 0 only:
every rank reaches the same verdict, and the launcher shows every rank's output, so warning on each would print
the same line once per rank. While ember's trace records, every rank adds a ``straggler`` event in category
``ddp`` for each window that reaches the verdict.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from .. import _trace as trace
from .. import _warnings

WINDOW = 10  # iterations judged together (one slow step is noise, not a straggler)
WARMUP = 2  # the first iterations include one-time costs (buffers, the first all-reduces)
SHARE = 0.3  # the others idle at least this share of each step (and the slow rank's own time exceeds theirs by it)
SUSTAINED = 7  # ... in at least this many of the window's iterations
MIN_WAIT_MS = 5.0  # ... and at least this long per step (below it, scheduling noise on a busy machine)


class StragglerMonitor:
    """Collects each rank's (wait, iteration time, wait for a core) per iteration and judges each full window."""

    def __init__(self, world: int, rank: int = 0) -> None:
        self.world = world
        self.rank = rank  # this process's rank in the group: rank 0 warns
        self.seen = 0
        self.window: list[tuple[int, float, float]] = []  # per judged iteration: (the rank it points at or -1,
        # the share the others waited, the mean step in microseconds)
        self.warned = False  # the verdict has been reached once (on every rank; rank 0 warned)

    def observe(self, waits_us: Sequence[int], steps_us: Sequence[int],
                queued_us: Sequence[int] | None = None) -> None:
        """One iteration's numbers, one per rank (microseconds): the wait in communication, the iteration's time (a
        zero means "not measured yet") and the wait for a core outside communication (None: not known)."""
        self.seen += 1
        if self.world < 2 or self.seen <= WARMUP or min(steps_us) <= 0:
            return
        queued = queued_us if queued_us is not None else [0] * self.world
        self.window.append(self._points_at([int(w) for w in waits_us], [int(s) for s in steps_us],
                                           [int(q) for q in queued]))
        if len(self.window) < WINDOW:
            return
        self._judge()
        self.window = []

    def _points_at(self, waits: list[int], steps: list[int], queued: list[int]) -> tuple[int, float, float]:
        """The rank this iteration's numbers point at as slower than the others (-1: none)."""
        step_us = sum(steps) / self.world
        slow = min(range(self.world), key=lambda r: waits[r])
        others = [r for r in range(self.world) if r != slow]
        share = min(waits[r] / steps[r] for r in others)  # what every other rank lost, at least
        own = [max(steps[r] - waits[r] - queued[r], 0) for r in range(self.world)]
        if (min((waits[r] - waits[slow]) / steps[r] for r in others) < SHARE  # (waited longer than it did)
                or min(waits[r] for r in others) < MIN_WAIT_MS * 1e3
                or own[slow] - max(own[r] for r in others) < SHARE * own[slow]):
            return -1, share, step_us
        return slow, share, step_us

    def _judge(self) -> None:
        slow = statistics.mode(rank for rank, _, _ in self.window)
        pointing = [(share, step) for rank, share, step in self.window if rank == slow]
        if slow < 0 or len(pointing) < SUSTAINED:
            return
        share = statistics.median(share for share, _ in pointing)
        step_ms = statistics.median(step for _, step in pointing) / 1e3
        trace.instant("straggler", "ddp", rank=slow, waited_share=round(share, 3), step_ms=round(step_ms, 3))
        if not self.warned:
            self.warned = True
            if self.rank != 0:
                return
            _warnings.warn(
                f"DistributedDataParallel: rank {slow} is a straggler: over the last {len(self.window)} iterations "
                f"the other ranks waited for it {share:.0%} of each step (a step takes {step_ms:.1f} ms) in "
                f"{len(pointing)} of them, so every rank runs at its pace. Look for what makes rank {slow} slower "
                "(more data, more work, a slower device).", RuntimeWarning)
