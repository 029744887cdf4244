"""PowerSGD (Vogels et al., 2019): low-rank gradient compression with error feedback, as a DDP communication hook.

Each gradient matrix M (a tensor viewed as rows x the rest, a vector of n numbers as n x 1) is approximated by
P Q^T with rank r: ``P = M Q`` (all-reduced, then orthogonalised), ``Q = M^T P`` (all-reduced, divided by the
world size), so ``(n + m) * r`` numbers travel instead of ``n * m``. With error feedback, what the approximation
missed is added to the next step's gradient; with warm start, Q carries over from the previous step. Matrices too
small to be worth compressing (biases, unless ``min_compression_rate`` is below 1) are all-reduced as they are.
The first ``start_powerSGD_iter`` iterations use the plain all-reduce.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .... import _dtype
from ...._backend import xp
from ...._creation import randn
from ...._tensor import Tensor
from ....futures import Future
from ....random import Generator
from ...process_group import ProcessGroup
from .default_hooks import _allreduce_fut, _group, _sum, _sum_async

logger = logging.getLogger(__name__)


def _orthogonalize(matrix, epsilon: float = 0.0) -> None:
    """Gram-Schmidt on the columns of ``matrix``, in place (a zero column stays zero)."""
    for i in range(matrix.shape[1]):
        col = matrix[:, i]
        norm = float(np.sqrt(col @ col))
        if epsilon == 0 and norm == 0:
            col[...] = 0
        else:
            col /= norm + epsilon
        if i + 1 < matrix.shape[1]:
            rest = matrix[:, i + 1:]
            rest -= xp.outer(col, col @ rest)


def _should_compress(num_rows: int, num_cols: int, rank: int, min_compression_rate: float) -> bool:
    return (num_rows + num_cols) * rank * min_compression_rate < num_rows * num_cols


class PowerSGDState:
    """What the PowerSGD hook keeps between steps (PyTorch's arguments and defaults).

    Args:
        process_group: the ranks to average over (None: the whole job).
        matrix_approximation_rank: r, the rank of the approximation (1 compresses most; 2-4 are typical).
        start_powerSGD_iter: iterations of plain all-reduce first (>1 when error feedback or warm start is on).
        min_compression_rate: compress a matrix only when this many times fewer numbers travel.
        use_error_feedback: add what the approximation missed to the next step's gradient.
        warm_start: start each step's power iteration from the previous Q.
        orthogonalization_epsilon: added to each norm in Gram-Schmidt (0: exact; a zero column stays zero).
        random_seed: seeds the initial Q, the same on every rank.
        compression_stats_logging_frequency: log the compression rate every this many iterations.
        batch_tensors_with_same_shape: accepted; ember compresses tensor by tensor either way (same result).
    """

    def __init__(self, process_group: ProcessGroup | None, matrix_approximation_rank: int = 1,
                 start_powerSGD_iter: int = 1_000, min_compression_rate: float = 2, use_error_feedback: bool = True,
                 warm_start: bool = True, orthogonalization_epsilon: float = 0, random_seed: int = 0,
                 compression_stats_logging_frequency: int = 10_000, batch_tensors_with_same_shape: bool = False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                             "because PowerSGD can only be applied after the first two iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict: dict[int, Any] = {}
        self.p_memory_dict: dict[int, Any] = {}
        self.q_memory_dict: dict[int, Any] = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def maybe_increase_iter(self, bucket) -> None:
        """Count one iteration per backward (at its last bucket)."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter and bucket.is_last():
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self) -> tuple[float, int, int]:
        """(compression rate, numbers before, numbers after) over everything compressed so far."""
        before, after = self.total_numel_before_compression, self.total_numel_after_compression
        return (before / after if after else 0.0), before, after


def powerSGD_hook(state: PowerSGDState, bucket) -> Future:
    """Average the bucket's gradients with rank-``state.matrix_approximation_rank`` PowerSGD compression."""
    pg = _group(state.process_group)
    world = pg.size()
    buffer = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(state.process_group, buffer)

    index, flat = bucket.index(), buffer._data
    # With error feedback the hook reads gradient + last error from the error buffer itself (one pass) and, at
    # the end, turns that buffer into the new error (input - what was sent back): no copy of the bucket is made.
    source = flat
    if state.use_error_feedback:
        held = state.error_dict.get(index)  # (tensors, as PyTorch keeps them: a program may read or save them)
        if held is None or tuple(held.shape) != flat.shape:
            held = state.error_dict[index] = Tensor._make(xp.zeros_like(flat))
        error = held._data
        xp.add(flat, error, out=error)
        source = error

    matrices, plain = [], []  # (input matrix, output matrix, rank); (input, output)
    matrix_slots = []  # each matrix's position in bucket.gradients()
    offset = 0
    for slot, g in enumerate(bucket.gradients()):
        out = g._data
        a = source[offset:offset + out.size].reshape(out.shape)
        offset += out.size
        if a.ndim == 0:  # (PyTorch's view(shape[0], -1) fails on a 0-d gradient; ember sends it as it is)
            plain.append((a, out))
            continue
        # Every gradient is a matrix of its first dimension's rows, a bias of n numbers n x 1, as in PyTorch: with
        # min_compression_rate below 1 such a bias is compressed too.
        m, m_out = a.reshape(a.shape[0], -1), out.reshape(out.shape[0], -1)
        r = min(*m.shape, state.matrix_approximation_rank)
        if _should_compress(*m.shape, r, state.min_compression_rate):
            matrices.append((m, m_out, r))
            matrix_slots.append(slot)
            state.total_numel_before_compression += m.size
            state.total_numel_after_compression += (m.shape[0] + m.shape[1]) * r
        else:
            plain.append((a, out))
            state.total_numel_before_compression += a.size
            state.total_numel_after_compression += a.size

    # PyTorch takes the matrices in its bucket's order (the order of the first iteration's gradients, a static
    # graph's second, which ember keeps as bucket._ready_order), grouped by shape in the order each shape first
    # appears: that order lays out P and Q and draws the initial Qs, so it decides which random numbers each matrix
    # starts from.
    if bucket._ready_order is not None:
        place = {slot: k for k, slot in enumerate(bucket._ready_order)}
        matrices = [entry for _, entry in sorted(zip(matrix_slots, matrices), key=lambda pair: place[pair[0]])]
    by_shape: dict[tuple[int, ...], list] = {}
    for entry in matrices:
        by_shape.setdefault(entry[0].shape, []).append(entry)
    matrices = [entry for group in by_shape.values() for entry in group]

    p_size = sum(m.shape[0] * r for m, _, r in matrices)
    q_size = sum(m.shape[1] * r for m, _, r in matrices)
    fresh_q = not state.warm_start or index not in state.q_memory_dict
    if fresh_q or state.p_memory_dict[index].numel() != p_size:
        state.p_memory_dict[index] = Tensor._make(xp.empty(p_size, dtype=flat.dtype))
        state.q_memory_dict[index] = Tensor._make(xp.empty(q_size, dtype=flat.dtype))
        fresh_q = True
    p_memory, q_memory = state.p_memory_dict[index]._data, state.q_memory_dict[index]._data
    ps = _views(p_memory, [(m.shape[0], r) for m, _, r in matrices])
    qs = _views(q_memory, [(m.shape[1], r) for m, _, r in matrices])
    if fresh_q:
        # PyTorch's draws: its generator seeded from state.rng, one randn per Q in order (the same on every rank)
        generator = Generator().manual_seed(state.rng.randint(1_000_000_000))
        for q in qs:
            q[...] = randn(*q.shape, generator=generator, dtype=_dtype.from_np(q.dtype))._data
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for (m, _, _), q, p in zip(matrices, qs, ps):
        xp.matmul(m, q, out=p)

    uncompressed = xp.concatenate([a.reshape(-1) for a, _ in plain]) if plain else xp.zeros(0, dtype=flat.dtype)
    first = _sum_async(pg, uncompressed)

    def unpack_plain_and_reduce_ps(fut: Future):
        xp.divide(uncompressed, world, out=uncompressed)
        offset = 0
        for _, out in plain:
            out[...] = uncompressed[offset:offset + out.size].reshape(out.shape)
            offset += out.size
        # The Ps are orthogonalised next, so their scale does not matter: no division by the world size.
        _sum(pg, p_memory)
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for (m, _, _), p, q in zip(matrices, ps, qs):
            xp.matmul(m.T, p, out=q)
        _sum(pg, q_memory)
        xp.divide(q_memory, world, out=q_memory)
        for (_, m_out, _), p, q in zip(matrices, ps, qs):
            xp.matmul(p, q.T, out=m_out)
        if state.use_error_feedback:
            xp.subtract(source, flat, out=source)  # the error: what this rank's input lost in what came back
        if not state.warm_start:  # this bucket's P and Q only: the other buckets' steps may still be pending
            state.p_memory_dict.pop(index, None)
            state.q_memory_dict.pop(index, None)
        state.maybe_increase_iter(bucket)
        return buffer

    return first.then(unpack_plain_and_reduce_ps)


def _views(flat, shapes):
    out, offset = [], 0
    for rows, cols in shapes:
        out.append(flat[offset:offset + rows * cols].reshape(rows, cols))
        offset += rows * cols
    return out
