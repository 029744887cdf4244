"""Lockstep checks that travel with DDP's gradient all-reduce.

Every bucket has a small table, one row per rank::

    [iteration, bucket index, bucket layout hash, non-finite flag]

Before a bucket's all-reduce a rank zeroes the table and writes only its own
row; a SUM all-reduce of the table, started right behind the gradients' (both
nonblocking, so they travel together), hands every rank the whole table.
Afterwards every rank reads the same table and so reaches the same verdict:

- rows that differ in the first three columns: ranks are out of step (one
  skipped a backward, ran a different number of batches, or built different
  buckets) — every rank raises the same error, naming the ranks;
- a non-zero flag: that rank's gradients held NaN or inf — every rank skips
  the optimizer step together (or raises), so the replicas stay identical.

Values are stored in the bucket's float dtype; counters wrap at 2**24 so they
stay exact in float32.
"""

from __future__ import annotations

import zlib

from .._backend import xp

FIELDS = 4
_WRAP = 1 << 24
_ITERATION, _BUCKET, _LAYOUT, _NONFINITE = range(FIELDS)


def layout_hash(shapes: list[tuple], dtype) -> int:
    """A number that differs when a bucket's parameter shapes or dtype differ."""
    return zlib.crc32(repr((shapes, str(dtype))).encode()) % _WRAP


def stamp(table, rank: int, iteration: int, bucket: int, layout: int, nonfinite: bool) -> None:
    """Write this rank's row (and zeros for every other rank)."""
    table[...] = 0
    table[rank] = (iteration % _WRAP, bucket, layout, 1.0 if nonfinite else 0.0)


def has_nonfinite(grads) -> bool:
    """True when the 1-D ``grads`` holds NaN or inf.

    One BLAS pass: a NaN or inf makes the sum of squares non-finite. That sum can also
    overflow for huge finite values, so a positive answer is confirmed element by element.
    """
    if xp.isfinite(xp.dot(grads, grads)):
        return False
    return not bool(xp.isfinite(grads).all())


def out_of_step(table, bucket: int) -> str | None:
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
            f"DistributedDataParallel: ranks are out of step at gradient bucket {bucket}: {parts}. "
            f"Rank(s) {sorted(ahead)} ran a DDP forward without the synchronised backward that every other "
            "rank ran (for example, skipping loss.backward() on a NaN loss, as seed 000 §4.4 suggests, or "
            "running a different number of batches). Every rank must run forward and backward together. To "
            "drop a bad step, keep DistributedDataParallel(nonfinite_grads='skip') (the default): a NaN or inf "
            "gradient on any rank makes every rank skip that optimizer step together."
        )
    parts = "; ".join(f"rank(s) {r}: bucket {row[_BUCKET]}, layout {row[_LAYOUT]}" for row, r in groups.items())
    return (
        f"DistributedDataParallel: ranks disagree on gradient bucket {bucket}'s contents ({parts}): the models "
        "or bucket_cap_mb differ between ranks, so gradients would be mixed up."
    )


def nonfinite_ranks(table) -> list[int]:
    """Ranks whose gradients in this bucket held NaN or inf."""
    return [rank for rank, flag in enumerate(table[:, _NONFINITE]) if flag != 0]
