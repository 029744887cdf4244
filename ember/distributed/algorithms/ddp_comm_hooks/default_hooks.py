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

from collections.abc import Callable

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
def _is_half(array) -> bool:
    return array.dtype in (float16.np, bfloat16.np)


def _sum_async(pg: ProcessGroup, array) -> Future:
    """Sum ``array`` over the group in place, nonblocking; a Future of ``array``. A half-precision array (a
    compression hook's or wrapper's) is summed in its type, as PyTorch's all-reduce of it is."""
    if _is_half(array):
        return _half_sum_async(pg, array)
    work = pg.comm.iallreduce_(array)
    work.set_result(array)
    return work.get_future()


def _sum(pg: ProcessGroup, array) -> None:
    _sum_async(pg, array).wait()


def _allreduce_fut(process_group: ProcessGroup | None, tensor: Tensor) -> Future:
    """Average ``tensor`` over the group in place: scale by 1/world first (as PyTorch does, against overflow),
    then sum — the very operations of DDP's own path, so the result is bit for bit the same."""
    pg = _group(process_group)
    data = tensor._data
    if _is_half(data):  # a compression wrapper's buffer: PyTorch's div_ in the half type, as the compression
        data /= data.dtype.type(pg.size())  # hooks divide (1/3 rounded to it would differ)
    else:
        xp.multiply(data, data.dtype.type(1.0 / pg.size()), out=data)
    return _sum_async(pg, data).then(lambda fut: tensor)


def allreduce_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket over all ranks: DDP's own behaviour, as a hook (bit for bit the same)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _half_dtype(codec: str):
    """The array dtype of ``codec``: NumPy's float16, or ml_dtypes' bfloat16 (NumPy has none; ember's bfloat16
    tensors hold the same)."""
    return float16.np if codec == "fp16" else bfloat16.np


def _half_sum_async(pg: ProcessGroup, array) -> Future:
    """Sum the half-precision ``array`` over the group into itself, nonblocking; a Future of ``array``. MPI has no
    half-precision sum: every rank all-gathers the others' values and adds them up in rank order, rounding to the
    half type after each addition as PyTorch's all-reduce of a half tensor does."""
    wire = xp.ascontiguousarray(array).view(xp.int16)  # the bits travel; MPI knows no bfloat16
    gathered = xp.empty((pg.size(),) + wire.shape, dtype=wire.dtype)
    work = pg.comm.iallgather(wire, gathered)  # directly, as the all-reduce above is

    def add_up(fut: Future):
        rows = gathered.view(array.dtype)
        total = rows[0].copy()
        for row in rows[1:]:  # in rank order on every rank: identical results everywhere
            total += row  # NumPy's and ml_dtypes' half addition: the exact sum rounded to the half type
        array[...] = total
        return array

    return work.get_future().then(add_up)


def _compressed_mean(process_group: ProcessGroup | None, bucket, codec: str) -> Future:
    buffer = bucket.buffer()
    # PyTorch's order: round to the half type, then divide in it (not divide in float32, then round once: the two
    # differ where the quotient is subnormal, and for world sizes that are not powers of two)
    mine = Tensor._make(buffer._data.astype(_half_dtype(codec)))

    def decompress(fut: Future) -> Tensor:
        buffer._data[...] = mine._data
        return buffer

    return _allreduce_fut(process_group, mine).then(decompress)


def fp16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending float16 values (half of float32's bytes)."""
    return _compressed_mean(process_group, bucket, "fp16")


def bf16_compress_hook(process_group: ProcessGroup | None, bucket) -> Future:
    """Average the bucket, sending bfloat16 values (float32's range, half its bytes)."""
    return _compressed_mean(process_group, bucket, "bf16")


def _compress_wrapper(hook: Callable, dtype) -> Callable:
    """``hook`` run on the bucket cast to ``dtype`` (``set_buffer``), its result cast back into the bucket's own
    buffer, as PyTorch's wrappers do."""

    def compress_wrapper_hook(hook_state, bucket) -> Future:
        original = bucket.buffer()
        bucket.set_buffer(original.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut: Future) -> Tensor:
            original.copy_(fut.value())
            return original

        return fut.then(decompress)

    compress_wrapper_hook.__name__ = f"{'fp16' if dtype is float16 else 'bf16'}_compress_wrapper_hook"
    return compress_wrapper_hook


def fp16_compress_wrapper(hook: Callable) -> Callable:
    """``hook`` given the bucket in float16 and its result cast back (PyTorch's wrapper):
    ``fp16_compress_wrapper(allreduce_hook)`` averages as ``fp16_compress_hook`` does, bit for bit; it wraps any
    hook, PowerSGD's among them."""
    return _compress_wrapper(hook, float16)


def bf16_compress_wrapper(hook: Callable) -> Callable:
    """``hook`` given the bucket in bfloat16 and its result cast back (PyTorch's wrapper), as
    ``fp16_compress_wrapper``."""
    return _compress_wrapper(hook, bfloat16)
