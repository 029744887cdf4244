"""The plain and the half-precision DDP communication hooks.

A hook takes ``(state, bucket)`` — ``state`` is what was passed to ``register_comm_hook`` (here the process group,
or None for the whole job) and ``bucket`` a ``GradBucket`` whose ``buffer()`` holds this rank's summed-up
gradients — and returns a Future whose value is the tensor of averaged gradients for the bucket.

Half precision: ``fp16_compress_hook`` rounds the pre-divided gradients to float16 and ``bf16_compress_hook`` to
bfloat16 (float32's exponent, 8 bits of mantissa; NumPy has no bfloat16, so the values travel as their upper 16
bits). Either way half the bytes travel; every rank all-gathers the others' compressed values and adds them up in
float32 in rank order, so all replicas get bit-identical results. (PyTorch all-reduces in the half type itself;
ember's sum is a little more precise, within the same rounding of what is sent.)
"""

from __future__ import annotations

from typing import Any

from ...._backend import xp
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


def _encode_fp16(array, scale):
    # NumPy's float32 -> float16 conversion; slow for values in float16's subnormal range (below 6.1e-5, where
    # small gradients fall), which bounds this hook's speed (docs/distributed.md)
    return (array * array.dtype.type(scale)).astype(xp.float16)


def _encode_bf16(array, scale):
    """float32 * scale -> the nearest bfloat16 (round to nearest, ties to even): its 16 bits, held in an int16."""
    bits = xp.multiply(array, xp.float32(scale), dtype=xp.float32).view(xp.uint32)
    rounding = bits >> 16
    rounding &= 1
    rounding += 0x7FFF
    bits += rounding
    bits >>= 16
    return bits.astype(xp.uint16).view(xp.int16)


def _add_fp16(total, half) -> None:
    total += half.astype(xp.float32)


def _add_bf16(total, half) -> None:
    widened = xp.left_shift(half.view(xp.uint16), 16, dtype=xp.uint32)
    xp.add(total, widened.view(xp.float32), out=total)


_CODECS: dict[str, tuple[Any, Any]] = {"fp16": (_encode_fp16, _add_fp16), "bf16": (_encode_bf16, _add_bf16)}


def _compressed_mean(process_group: ProcessGroup | None, bucket, codec: str) -> Future:
    pg = _group(process_group)
    buffer = bucket.buffer()
    encode, add = _CODECS[codec]
    mine = encode(buffer._data, 1.0 / pg.size())
    gathered = xp.empty((pg.size(),) + mine.shape, dtype=mine.dtype)
    work = pg.comm.iallgather(mine, gathered)  # directly, as _sum_async does

    def decompress(fut: Future) -> Tensor:
        total = buffer._data  # float32 sum, in rank order on every rank: identical results everywhere
        total[...] = 0
        for row in gathered:
            add(total, row)
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending float16 values (half of float32's bytes)."""
    return _compressed_mean(process_group, bucket, "fp16")


def bf16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending bfloat16 values (float32's range, half its bytes)."""
    return _compressed_mean(process_group, bucket, "bf16")
