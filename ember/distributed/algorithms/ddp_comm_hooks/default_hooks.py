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
from ...._creation import from_numpy
from ...._tensor import Tensor
from ....futures import Future
from ... import collectives
from ...process_group import ProcessGroup, resolve


def _group(process_group: ProcessGroup | None) -> ProcessGroup:
    return resolve(process_group, "DDP communication hook")


def _allreduce_fut(process_group: ProcessGroup | None, tensor: Tensor) -> Future:
    """Average ``tensor`` over the group in place: scale by 1/world first (as PyTorch does, against overflow),
    then sum — the very operations of DDP's own path, so the result is bit for bit the same."""
    pg = _group(process_group)
    data = tensor._data
    xp.multiply(data, data.dtype.type(1.0 / pg.size()), out=data)
    work = collectives.all_reduce(tensor, group=pg, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket over all ranks: DDP's own behaviour, as a hook (bit for bit the same)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _to_bf16_bits(array):
    """float32 -> the nearest bfloat16 (round to nearest, ties to even): its 16 bits, held in an int16."""
    bits = xp.ascontiguousarray(array, dtype=xp.float32).view(xp.uint32)
    rounding = ((bits >> 16) & 1) + 0x7FFF
    return ((bits + rounding) >> 16).astype(xp.uint16).view(xp.int16)


def _from_bf16_bits(half):
    return (half.view(xp.uint16).astype(xp.uint32) << 16).view(xp.float32)


_CODECS: dict[str, tuple[Any, Any]] = {
    "fp16": (lambda a: a.astype(xp.float16), lambda h: h.astype(xp.float32)),
    "bf16": (_to_bf16_bits, _from_bf16_bits),
}


def _compressed_mean(process_group: ProcessGroup | None, bucket, codec: str) -> Future:
    pg = _group(process_group)
    buffer = bucket.buffer()
    encode, decode = _CODECS[codec]
    mine = encode(buffer._data / pg.size())
    gathered = [from_numpy(xp.empty_like(mine)) for _ in range(pg.size())]
    work = collectives.all_gather(gathered, from_numpy(mine), group=pg, async_op=True)

    def decompress(fut: Future) -> Tensor:
        total = decode(gathered[0]._data).astype(xp.float32)
        for t in gathered[1:]:
            total += decode(t._data)
        buffer._data[...] = total.astype(buffer._data.dtype, copy=False)
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending float16 values (half of float32's bytes)."""
    return _compressed_mean(process_group, bucket, "fp16")


def bf16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending bfloat16 values (float32's range, half its bytes)."""
    return _compressed_mean(process_group, bucket, "bf16")
