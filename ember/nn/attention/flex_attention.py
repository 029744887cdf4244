"""``torch.nn.attention.flex_attention``: attention with a score function and a block-sparse mask.

``flex_attention(q, k, v, score_mod, block_mask)`` is softmax(score_mod(q @ k^T * scale)) @ v over the
positions that ``block_mask`` keeps. ``create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN)`` evaluates
``mask_mod(b, h, q_idx, kv_idx) -> bool`` and summarises it in blocks of ``BLOCK_SIZE`` (128) as PyTorch does:
a block is full (every position kept: mask_mod is not applied there), partial (mask_mod decides) or empty
(skipped). Rows that keep no position give 0 (and a log-sum-exp of -inf), as in PyTorch.

Difference from PyTorch: ember computes eagerly and densely (no fused kernel): ``score_mod`` and ``mask_mod``
are called once with broadcastable index tensors (``b`` of shape (B, 1, 1, 1), ``h`` (1, H, 1, 1),
``q_idx`` (1, 1, L, 1), ``kv_idx`` (1, 1, 1, S)) instead of once per position under ``vmap``, so they must be
elementwise (as PyTorch's compiled kernels require too). Gradients flow through ``score_mod`` and any tensor it
captures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ... import _dtype
from ..._backend import xp
from ..._creation import arange, tensor
from ..._missing import module_getattr
from ..._tensor import Tensor
from ...ops.indexing import where

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "create_block_mask", "create_mask", "flex_attention",
           "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


@dataclass(frozen=True)
class AuxRequest:
    """Which auxiliary outputs ``flex_attention(..., return_aux=AuxRequest(lse=True))`` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs: the log-sum-exp and the maximum score of each query row (None if not asked)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask that keeps every position."""
    return batch.new_ones((), dtype=_dtype.bool_)


def _index_grids(B: int, H: int, Q_LEN: int, KV_LEN: int) -> tuple[Tensor, ...]:
    return (arange(B).view(B, 1, 1, 1), arange(H).view(1, H, 1, 1), arange(Q_LEN).view(1, 1, Q_LEN, 1),
            arange(KV_LEN).view(1, 1, 1, KV_LEN))


def create_mask(mod_fn: Callable, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int,
                device: str = "cpu") -> Tensor:
    """The dense boolean mask (B, H, Q_LEN, KV_LEN) of a ``mask_mod`` (B or H None: 1)."""
    B, H = B or 1, H or 1
    out = mod_fn(*_index_grids(B, H, Q_LEN, KV_LEN))
    return Tensor._make(xp.broadcast_to(out._data.astype(bool), (B, H, Q_LEN, KV_LEN)).copy())


def _dense_to_ordered(blocks) -> tuple[Tensor, Tensor]:
    """Per block row: how many blocks are set, and the column indices of the set ones first (in order)."""
    blocks = blocks.astype(xp.int32)
    order = xp.argsort(-blocks, axis=-1, kind="stable")
    return tensor(blocks.sum(-1).astype(xp.int32)), tensor(order.astype(xp.int32))


def _ordered_to_dense(num_blocks: Tensor, indices: Tensor):
    """The (B, H, query blocks, key blocks) booleans whose set blocks are, per row, the first ``num_blocks``
    entries of ``indices`` (the inverse of ``_dense_to_ordered``)."""
    idx = indices._data.astype(xp.int64)
    n = idx.shape[-1]
    used = xp.arange(n) < xp.asarray(num_blocks._data)[..., None]
    dense = xp.zeros((*idx.shape[:-1], n + 1), dtype=bool)  # the entries past a row's count land in column n
    xp.put_along_axis(dense, xp.where(used, idx, n), True, axis=-1)
    return dense[..., :n]


class BlockMask:
    """A block-sparse attention mask: for each (batch, head, query block), the key blocks that are partial
    (``kv_num_blocks``, ``kv_indices``) and full (``full_kv_num_blocks``, ``full_kv_indices``), the same by key
    block (``q_*``), the ``BLOCK_SIZE`` (query, key) and the ``mask_mod`` applied in partial blocks."""

    def __init__(self, partial, full, seq_lengths: tuple[int, int], BLOCK_SIZE: tuple[int, int],
                 mask_mod: Callable) -> None:
        self._partial, self._full = partial, full  # (B, H, query blocks, key blocks) booleans
        self.seq_lengths, self.BLOCK_SIZE, self.mask_mod = seq_lengths, BLOCK_SIZE, mask_mod
        self.kv_num_blocks, self.kv_indices = _dense_to_ordered(partial)
        self.full_kv_num_blocks, self.full_kv_indices = _dense_to_ordered(full)
        self.q_num_blocks, self.q_indices = _dense_to_ordered(xp.swapaxes(partial, -1, -2))
        self.full_q_num_blocks, self.full_q_indices = _dense_to_ordered(xp.swapaxes(full, -1, -2))

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor, full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod: Callable | None = None, seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True) -> BlockMask:
        """The ``BlockMask`` whose partial (and full) key blocks, per query block, are the first
        ``kv_num_blocks`` entries of ``kv_indices`` (B, H, query blocks, key blocks), as PyTorch's.
        ``mask_mod`` defaults to ``noop_mask``, ``seq_lengths`` to the blocks times ``BLOCK_SIZE``. The by-key
        summaries (``q_*``) are always computed (``compute_q_blocks`` has nothing to save).

        Difference from PyTorch: the block tensors must have PyTorch's usual 4 dimensions (B, H, ...)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if kv_indices.dim() != 4:
            raise NotImplementedError(f"BlockMask.from_kv_blocks: ember takes (B, H, query blocks, key blocks) "
                                      f"indices, got {kv_indices.dim()} dimensions; add the batch and head ones")
        block = _block_size(BLOCK_SIZE)
        nq, nkv = kv_indices.shape[-2:]
        if seq_lengths is None:
            seq_lengths = (nq * block[0], nkv * block[1])
        partial = _ordered_to_dense(kv_num_blocks, kv_indices)
        full = xp.zeros_like(partial) if full_kv_indices is None else _ordered_to_dense(full_kv_num_blocks,
                                                                                        full_kv_indices)
        return cls(partial, full, tuple(seq_lengths), block, noop_mask if mask_mod is None else mask_mod)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (*self._partial.shape[:2], *self.seq_lengths)

    def to_dense(self) -> Tensor:
        """The blocks that are computed (partial or full), as an int32 (B, H, query blocks, key blocks) tensor."""
        return tensor((self._partial | self._full).astype(xp.int32))

    def sparsity(self) -> float:
        """The percentage of positions skipped, as PyTorch counts it: computed blocks times the block area over
        all positions (negative where the last blocks overhang the sequence)."""
        computed = int((self._partial | self._full).sum()) * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed / math.prod(self.shape))

    def _position_mask(self, B: int, H: int) -> Tensor:
        """Which positions (B, H, Q_LEN, KV_LEN) attention keeps: all of full blocks, mask_mod's in partial ones."""
        q_len, kv_len = self.seq_lengths
        q_block, kv_block = self.BLOCK_SIZE
        rows, cols = xp.arange(q_len) // q_block, xp.arange(kv_len) // kv_block
        full = xp.broadcast_to(self._full[:, :, rows][..., cols], (B, H, q_len, kv_len))
        partial = xp.broadcast_to(self._partial[:, :, rows][..., cols], (B, H, q_len, kv_len))
        keep = full.copy()
        if partial.any():
            keep |= partial & create_mask(self.mask_mod, B, H, q_len, kv_len)._data
        return Tensor._make(keep)

    def __repr__(self) -> str:
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, mask_mod={self.mask_mod.__name__})"


def _block_size(size: int | tuple[int, int]) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)


def create_block_mask(mask_mod: Callable, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int,
                      device: str = "cuda", BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile: bool = False) -> BlockMask:
    """The ``BlockMask`` of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B or H None: shared by all)."""
    q_block, kv_block = _block_size(BLOCK_SIZE)
    dense = create_mask(mask_mod, B, H, Q_LEN, KV_LEN)._data
    b, h = dense.shape[:2]
    nq, nkv = -(-Q_LEN // q_block), -(-KV_LEN // kv_block)
    padded = xp.zeros((b, h, nq * q_block, nkv * kv_block), dtype=bool)
    padded[..., :Q_LEN, :KV_LEN] = dense
    counts = padded.reshape(b, h, nq, q_block, nkv, kv_block).sum(axis=(3, 5))
    full = counts == q_block * kv_block
    return BlockMask((counts > 0) & ~full, full, (Q_LEN, KV_LEN), (q_block, kv_block), mask_mod)


def flex_attention(query: Tensor, key: Tensor, value: Tensor, score_mod: Callable | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None, enable_gqa: bool = False,
                   return_lse: bool = False, kernel_options: dict | None = None, *,
                   return_aux: AuxRequest | None = None):
    """Attention of query (B, Hq, L, E) over key (B, Hkv, S, E) and value (B, Hkv, S, Ev) -> (B, Hq, L, Ev).

    ``score_mod(score, b, h, q_idx, kv_idx)`` rewrites the scaled scores (default: none); ``block_mask`` keeps
    positions (default: all); ``scale`` defaults to 1/sqrt(E); ``enable_gqa`` lets Hq be a multiple of Hkv
    (each key/value head serves Hq/Hkv query heads). ``return_lse=True`` also returns the log-sum-exp of
    each row (B, Hq, L); ``return_aux=AuxRequest(...)`` returns (output, AuxOutput) instead.
    """
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("NYI: Query, key, and value must be 4D tensors")
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={Hq} and "
                             f"Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
        if Hq % Hkv != 0:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} "
                             f"and Hkv={Hkv}.")
        key, value = key.repeat_interleave(Hq // Hkv, dim=1), value.repeat_interleave(Hq // Hkv, dim=1)
    scores = query.matmul(key.transpose(-2, -1)) * (1.0 / math.sqrt(E) if scale is None else scale)
    if score_mod is not None:
        scores = score_mod(scores, *_index_grids(B, Hq, L, S)).expand(B, Hq, L, S)
    if block_mask is not None:
        keep = block_mask._position_mask(B, Hq)
        scores = where(keep, scores, scores.new_full((), -math.inf))
    # Rows that keep nothing get weights 0 (not NaN) and a log-sum-exp of -inf; their scores are replaced by 0
    # before logsumexp so that no NaN reaches the gradients of the other rows' inputs.
    kept = Tensor._make((scores._data > -math.inf).any(-1))
    safe = where(kept.unsqueeze(-1), scores, scores.new_zeros(()))
    safe_lse = safe.logsumexp(-1)
    weights = where(kept.unsqueeze(-1), (safe - safe_lse.unsqueeze(-1)).exp(), scores.new_zeros(()))
    lse = where(kept, safe_lse, safe_lse.new_full((), -math.inf))
    out = weights.matmul(value)
    if return_aux is not None:
        max_scores = scores.amax(-1) if return_aux.max_scores else None
        return out, AuxOutput(lse if return_aux.lse else None, max_scores)
    return (out, lse) if return_lse else out


__getattr__ = module_getattr(__name__)
