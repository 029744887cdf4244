"""embedding_bag: the sum, mean or max of each bag of looked-up rows, without materialising the lookups per bag.

The lookups of all bags are one flat index array, bag after bag (a 2-D input is B bags of equal length), so each
bag's rows are one contiguous run of the gathered (lookups, D) array: the reductions are single
``reduceat`` calls over the non-empty bags, and an empty bag (or one of padding only) gives zeros, as PyTorch.
The weight's gradient is the lookup-table gradient of Embedding (``segment_sum``) of per-lookup rows.
"""

from __future__ import annotations

from ..._backend import xp
from ..._dtype import bfloat16, float16, float32, promote_types
from ..._size import c_type_name
from ..._sparse import SparseCOO, segment_sum
from ..._tensor import Tensor
from ...autograd.graph import Node, version_checked
from .sparse import _renorm_rows, check_dense_under_create_graph, check_index_dtype

_MODES = ("sum", "mean", "max")


class EmbeddingBag(Node):
    def forward(self, w, psw, idx, bag, num_bags, mode, scale_grad_by_freq, sparse):
        """idx: the kept lookups (padding and lookups past the last bag dropped), bag: each one's bag (sorted)."""
        counts = xp.bincount(bag, minlength=num_bags)
        starts = xp.cumsum(counts) - counts
        filled = counts > 0
        rows = xp.take(w, idx, axis=0)
        if psw is not None:
            rows *= psw[:, None]
        out = xp.zeros((num_bags, w.shape[1]), w.dtype)
        first = starts[filled]
        argpos = None
        if rows.shape[0]:
            if mode == "max":
                out[filled] = xp.maximum.reduceat(rows, first, axis=0)
                argpos = _first_max_positions(rows, out, bag, first)
            else:
                out[filled] = xp.add.reduceat(rows, first, axis=0)
                if mode == "mean":
                    out[filled] /= counts[filled, None].astype(w.dtype)
        self.saved = (w, psw, idx, bag, counts, filled, argpos)
        self.meta = (mode, scale_grad_by_freq, sparse)
        return out

    def backward(self, g):
        w, psw, idx, bag, counts, filled, argpos = self.saved
        mode, scale, sparse = self.meta
        nw, npsw = self.needs_input_grad[:2]
        if mode == "max":  # one row per (bag, column): the argmax rows get g, the others nothing
            grows = xp.zeros_like(g, shape=(idx.size, w.shape[1]), order="C")  # (under create_graph: recorded)
            if argpos is not None:
                cols = xp.broadcast_to(xp.arange(w.shape[1]), argpos.shape)
                grows[argpos, cols] = g[filled]
        else:
            grows = xp.take(g, bag, axis=0)  # each lookup's share of its bag's gradient
            if mode == "mean":
                grows /= counts[bag, None].astype(g.dtype)
        gpsw = None
        if npsw:  # d out[b] / d psw[j] = w[idx[j]]
            gpsw = xp.einsum("ij,ij->i", grows, xp.take(w, idx, axis=0))
        gw = None
        if nw:
            if psw is not None:
                grows = grows * psw[:, None]
            if sparse:
                check_dense_under_create_graph(g, "embedding_bag")
                if scale:
                    raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
                gw = SparseCOO(idx.astype(xp.int64)[None, :], grows, w.shape)
            else:
                gw = xp.zeros_like(g, shape=w.shape, order="C")
                if idx.size:
                    rows, sums = segment_sum(idx, grows, scale)
                    gw[rows] = sums
        return gw, gpsw


def _first_max_positions(rows, out, bag, first):
    """For each non-empty bag (starting at the lookups ``first``) and column, the first of its lookups whose row holds
    the bag's maximum ``out``: the one that receives the gradient (PyTorch's max_indices)."""
    pos = xp.where(rows == out[bag], xp.arange(rows.shape[0])[:, None], rows.shape[0])
    return xp.minimum.reduceat(pos, first, axis=0)


def _bags(idx, offsets, include_last_offset: bool):
    """(bag of each lookup, number of bags, which lookups belong to a bag) from 1-D ``offsets``. (With
    ``include_last_offset`` the last offset ends the last bag, as documented; PyTorch's CPU kernel reads an offset
    short of the input's end differently in each mode.)"""
    offs = offsets.astype(xp.int64)
    n = idx.size
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offs[0])}")
    if offs.size and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offs[-1])}")
    if offs.size > 1 and (offs[1:] < offs[:-1]).any():
        raise RuntimeError(f"offsets must be non-decreasing, got {offs.tolist()}")
    end = n
    if include_last_offset:
        end, offs = (int(offs[-1]) if offs.size else 0), offs[:-1]
    bag = xp.searchsorted(offs, xp.arange(n), side="right") - 1
    return bag, offs.size, xp.arange(n) < end


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sum, mean or max of each bag of ``weight`` rows: (B, L) input is B bags of L indices; 1-D input with
    ``offsets`` (each bag's start; with ``include_last_offset`` one more, the end) is bags of any length.
    ``per_sample_weights`` (mode='sum' only) scales each lookup; ``padding_idx`` lookups are left out of their bag
    (and of a mean's count). An empty bag gives zeros. Output (B, embedding_dim)."""
    return _embedding_bag(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx)[0]


def _embedding_bag(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode, sparse, per_sample_weights,
                   include_last_offset, padding_idx):
    """``embedding_bag``'s output, and the kept lookups (their rows of ``weight``, padding left out) with their bags,
    the number of bags and each lookup's bag (all of them, padding included)."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    indices = input
    if isinstance(offsets, Tensor) and input._data.ndim == 1 and offsets.dtype != input.dtype:
        # PyTorch promotes 1-d indices and their offsets to one dtype first: uint8 or int16 indices with int64
        # offsets are int64 indices then (float ones stay refused)
        indices = input.to(promote_types(input.dtype, offsets.dtype))
    idx = check_index_dtype(indices, "embedding_bag")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        num_bags = idx.shape[0]
        bag, keep = xp.repeat(xp.arange(num_bags), idx.shape[1]), None
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bag, num_bags, keep = _bags(idx, offsets._data, include_last_offset)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    num = weight._data.shape[0]
    flat = idx.reshape(-1).astype(xp.intp)
    bad = xp.flatnonzero((flat < 0) | (flat >= num)) if flat.size else ()
    if len(bad):  # (a RuntimeError in PyTorch, unlike embedding's IndexError)
        raise RuntimeError(f"Index {bad[0]} of input takes value {flat[bad[0]]} which is not in the valid range "
                           f"[0, {num})")
    if max_norm is not None:
        _renorm_rows(weight, flat, max_norm, norm_type)
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    kept, kept_bag = flat, bag
    if padding_idx is not None:
        not_pad = flat != (padding_idx + num if padding_idx < 0 else padding_idx)
        keep = not_pad if keep is None else keep & not_pad
    if keep is not None and not keep.all():
        kept, kept_bag = flat[keep], bag[keep]
        psw = None if psw is None else psw[Tensor._make(xp.flatnonzero(keep))]
    out = EmbeddingBag.apply(weight, psw, idx=kept, bag=kept_bag, num_bags=num_bags, mode=mode,
                             scale_grad_by_freq=scale_grad_by_freq, sparse=bool(sparse))
    # the indices as PyTorch saves them: flattened, a view of a contiguous input (a copy of another)
    out = version_checked(out, input if input._data.ndim == 1 or input._data.flags.c_contiguous else None, offsets)
    return out, kept, kept_bag, num_bags, bag


_NATIVE_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag_native(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                         mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                         include_last_offset: bool = False,
                         padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``torch.embedding_bag``, the native operator under ``F.embedding_bag``: the weight first, 1-D ``indices`` with
    ``offsets``, ``mode`` 0 (sum), 1 (mean) or 2 (max). Returns (output, offset2bag, bag_size, max_indices) as
    PyTorch's CPU kernel fills them: offset2bag is each lookup's bag (empty for its fast float sum, which does not
    compute it), bag_size each bag's lookups without padding (zeros for sum), max_indices each (bag, column)'s
    argmax row of ``weight`` in max mode (0 for an empty bag), else a copy of bag_size. Only the output is
    differentiable; the three others have the indices' integer type (int64 when indices or offsets are)."""
    if mode.__class__ is not int:
        raise TypeError(f"embedding_bag(): argument 'mode' (position 5) must be int, not {c_type_name(mode)}")
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{c_type_name(offsets)}")
    if mode not in _NATIVE_MODES:
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.ndim}")
    if indices.ndim != 1:
        raise RuntimeError(f"embedding_bag: indices has to be a 1D Tensor, but got Tensor of dimension {indices.ndim} "
                           "(torch.nn.functional.embedding_bag takes a 2-D batch of bags of one length)")
    name = _NATIVE_MODES[mode]
    if per_sample_weights is not None and name != "sum":
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    out, kept, kept_bag, num_bags, bag = _embedding_bag(
        indices, weight, offsets, None, 2, scale_grad_by_freq, name, sparse, per_sample_weights, include_last_offset,
        padding_idx)
    itype = xp.int64 if xp.int64 in (indices._data.dtype, offsets._data.dtype) else indices._data.dtype
    w = weight._data
    fast_sum = (name == "sum" and padding_idx is None and w.strides[1] == w.itemsize
                and weight.dtype in (float32, float16, bfloat16)
                and (per_sample_weights is None or per_sample_weights._data.strides[0] == w.itemsize))
    offset2bag = xp.zeros(0, itype) if fast_sum else bag.astype(itype)
    counts = xp.bincount(kept_bag, minlength=num_bags).astype(itype)
    bag_size = xp.zeros(num_bags, itype) if name == "sum" else counts
    if name == "max":
        max_indices = xp.zeros((num_bags, w.shape[1]), itype)
        filled = counts > 0
        if kept.size:
            first = (xp.cumsum(counts) - counts)[filled]
            argpos = _first_max_positions(xp.take(w, kept, axis=0), out._data, kept_bag, first)
            max_indices[filled] = kept[argpos]
    else:
        max_indices = bag_size.copy()
    return out, Tensor._make(offset2bag), Tensor._make(bag_size), Tensor._make(max_indices)
