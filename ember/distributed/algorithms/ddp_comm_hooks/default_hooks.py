"""The plain and the half-precision DDP communication hooks.

A hook takes ``(state, bucket)`` — ``state`` is what was passed to ``register_comm_hook`` (here the process group,
or None for the whole job) and ``bucket`` a ``GradBucket`` whose ``buffer()`` holds this rank's summed-up
gradients — and returns a Future whose value is the tensor of averaged gradients for the bucket.

Half precision, PyTorch's arithmetic: ``fp16_compress_hook`` rounds the gradients to float16 and
``bf16_compress_hook`` to bfloat16 (float32's exponent, 8 bits of mantissa), divides them by the world size in that
type, and the ranks sum them in that type. MPI has no half-precision sum, so every rank all-gathers the others'
half values (half the bytes of float32 travel, as with PyTorch's all-reduce on 2 ranks) and adds them up in rank
order, rounding to the half type after each addition as PyTorch's all-reduce of a half tensor does: on 2 ranks the
averaged gradients are PyTorch's bit for bit, and on every rank the same bits.
"""

from __future__ import annotations

from ...._backend import xp
from ...._dtype import bfloat16, float16
from ...._tensor import Tensor
from ....futures import Future
from ...process_group import ProcessGroup, resolve


def _group(process_group: ProcessGroup | None) -> ProcessGroup:
    return resolve(process_group, "DDP communication hook")


# The built-in hooks call the process group's communicator directly, as DDP's own reducer does, rather than
# dist.all_reduce: its cross-rank argument check is a blocking exchange, which inside backward would stall each
# rank until the slowest reached the same bucket. DDP's lockstep table checks the buckets' layout instead.
def _sum_async(pg: ProcessGroup, array) -> Future:
    """Sum ``array`` over the group in place, nonblocking; a Future of ``array``."""
    work = pg.comm.iallreduce_(array)
    work.set_result(array)
    return work.get_future()


def _sum(pg: ProcessGroup, array) -> None:
    pg.comm.allreduce_(array)


def _allreduce_fut(process_group: ProcessGroup | None, tensor: Tensor) -> Future:
    """Average ``tensor`` over the group in place: scale by 1/world first (as PyTorch does, against overflow),
    then sum — the very operations of DDP's own path, so the result is bit for bit the same."""
    pg = _group(process_group)
    data = tensor._data
    xp.multiply(data, data.dtype.type(1.0 / pg.size()), out=data)
    return _sum_async(pg, data).then(lambda fut: tensor)


def allreduce_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket over all ranks: DDP's own behaviour, as a hook (bit for bit the same)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _half_dtype(codec: str):
    """The array dtype of ``codec``: NumPy's float16, or ml_dtypes' bfloat16 (NumPy has none; ember's bfloat16
    tensors hold the same)."""
    return float16.np if codec == "fp16" else bfloat16.np


def _compressed_mean(process_group: ProcessGroup | None, bucket, codec: str) -> Future:
    pg = _group(process_group)
    buffer = bucket.buffer()
    half = _half_dtype(codec)
    # PyTorch's order: round to the half type, then divide in it (not divide in float32, then round once: the two
    # differ where the quotient is subnormal, and for world sizes that are not powers of two)
    mine = buffer._data.astype(half)
    mine /= half.type(pg.size())
    wire = mine.view(xp.int16)  # the bits travel; MPI knows no bfloat16
    gathered = xp.empty((pg.size(),) + wire.shape, dtype=wire.dtype)
    work = pg.comm.iallgather(wire, gathered)  # directly, as _sum_async does

    def decompress(fut: Future) -> Tensor:
        rows = gathered.view(half)
        total = rows[0].copy()
        for row in rows[1:]:  # in rank order on every rank: identical results everywhere
            total += row  # NumPy's and ml_dtypes' half addition: the exact sum rounded to the half type
        buffer._data[...] = total
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending float16 values (half of float32's bytes)."""
    return _compressed_mean(process_group, bucket, "fp16")


def bf16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending bfloat16 values (float32's range, half its bytes)."""
    return _compressed_mean(process_group, bucket, "bf16")
