"""Lockstep checks that travel with DDP's gradient all-reduce.

Every backward has one small table, one row per rank::

    [iteration, number of buckets, bucket layout hash, non-finite flag,
     previous iteration's wait in communication (us), previous iteration's time (us),
     graph-changed flag, previous iteration's wait for a core outside communication (us)]

A rank zeroes the table and writes only its own row; a SUM all-reduce of the
table, started right behind the last bucket's gradients (nonblocking, so it
travels with them), hands every rank the whole table. Afterwards every rank
reads the same table and so reaches the same verdict:

- rows that differ in the first three columns: ranks are out of step (one
  skipped a backward, ran a different number of batches, or built different
  buckets) — every rank raises the same error, naming the ranks;
- a non-zero flag: that rank's gradients held NaN or inf in some bucket — every
  rank skips the optimizer step together (or raises), so the replicas stay
  identical.

- a non-zero graph-changed flag: under ``static_graph=True`` that rank's backward
  used a parameter its first backward did not, or the other way round — every rank
  raises PyTorch's error together.

The timing columns are not checks: they let every rank see every rank's
waiting, which is how a straggler is noticed (``straggler.py``): the time it
spent blocked in communication, and the time it was ready to run its own work
while the operating system ran other processes (``_waits.py``).

One table per backward, not one per bucket: a model with many buckets still pays
for one small extra collective a step.
"""

from __future__ import annotations

import zlib

from .._backend import xp

FIELDS = 8
_ITERATION, _BUCKETS, _LAYOUT, _NONFINITE, _WAIT_US, _STEP_US, _GRAPH_CHANGED, _QUEUED_US = range(FIELDS)


def new_table(world: int):
    """The per-rank table (int64: counters and hashes stay exact under the SUM)."""
    return xp.zeros((world, FIELDS), dtype=xp.int64)


def layout_hash(buckets: list) -> int:
    """A number that differs when the buckets' parameter shapes or dtypes differ: ``[(shapes, dtype), ...]`` (and
    whatever else is appended to that list that every rank must agree on)."""
    return zlib.crc32(repr(buckets).encode())


def stamp(table, rank: int, iteration: int, buckets: int, layout: int, nonfinite: bool, wait_us: int = 0,
          step_us: int = 0, graph_changed: bool = False, queued_us: int = 0) -> None:
    """Write this rank's row (and zeros for every other rank)."""
    table[...] = 0
    table[rank] = (iteration, buckets, layout, int(nonfinite), wait_us, step_us, int(graph_changed), queued_us)


def has_nonfinite(grads) -> bool:
    """True when the 1-D ``grads`` holds NaN or inf.

    One BLAS pass: a NaN or inf makes the sum of squares non-finite. That sum can also
    overflow for huge finite values, so a positive answer is confirmed element by element.
    """
    with xp.errstate(over="ignore", invalid="ignore"):  # what it finds out, not a warning to give
        if xp.isfinite(xp.dot(grads, grads)):
            return False
    return not bool(xp.isfinite(grads).all())


def out_of_step(table) -> str | None:
    """Describe how the ranks' rows differ, or None when every rank is in step."""
    rows = [tuple(int(v) for v in row[:_NONFINITE]) for row in table]
    if all(r == rows[0] for r in rows):
        return None
    groups: dict[tuple, list[int]] = {}
    for rank, row in enumerate(rows):
        groups.setdefault(row, []).append(rank)
    iterations = {row[_ITERATION] for row in rows}
    if len(iterations) > 1:
        by_iteration: dict[int, list[int]] = {}
        for row, ranks in groups.items():
            by_iteration.setdefault(row[_ITERATION], []).extend(ranks)
        parts = "; ".join(f"rank(s) {sorted(r)} at iteration {it}" for it, r in sorted(by_iteration.items()))
        ahead = by_iteration[max(by_iteration)]
        return (
            f"DistributedDataParallel: ranks are out of step in backward: {parts}. "
            f"Rank(s) {sorted(ahead)} ran a DDP forward without the synchronised backward that every other "
            "rank ran (for example, skipping loss.backward() on a NaN loss, or "
            "running a different number of batches), so gradients of different iterations were mixed. Every "
            "rank must run forward and backward together. To drop a bad step, keep "
            "DistributedDataParallel(nonfinite_grads='skip') (the default): a NaN or inf gradient on any rank "
            "makes every rank skip that optimizer step together."
        )
    parts = "; ".join(f"rank(s) {r}: {row[_BUCKETS]} bucket(s), layout {row[_LAYOUT]}" for row, r in groups.items())
    return (
        f"DistributedDataParallel: ranks disagree on the gradient buckets ({parts}): the models, "
        "bucket_cap_mb or find_unused_parameters differ between ranks, so gradients would be mixed up."
    )


def nonfinite_ranks(table) -> list[int]:
    """Ranks whose gradients held NaN or inf in this backward."""
    return [rank for rank, flag in enumerate(table[:, _NONFINITE]) if flag != 0]


def graph_changed_ranks(table) -> list[int]:
    """Ranks whose backward used other parameters than their first one did (``static_graph=True``)."""
    return [rank for rank, flag in enumerate(table[:, _GRAPH_CHANGED]) if flag != 0]


def timings(table) -> tuple[list[int], list[int]]:
    """Every rank's (wait in communication, iteration time) of its previous iteration, in microseconds."""
    return [int(v) for v in table[:, _WAIT_US]], [int(v) for v in table[:, _STEP_US]]


def queued(table) -> list[int]:
    """Every rank's wait for a core outside communication in its previous iteration, in microseconds: the time the
    operating system kept it from its own work."""
    return [int(v) for v in table[:, _QUEUED_US]]
