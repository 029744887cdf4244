"""Variable-length sequences: ``PackedSequence``, packing, padding (``torch.nn.utils.rnn``).

A packed sequence stores, time step after time step, only the sequences still running: ``data`` row block t
holds ``batch_sizes[t]`` rows, longest sequence first. Packing and padding are each one differentiable
``index_select`` (padding positions read an extra constant row), so gradients flow through them.
"""

from __future__ import annotations

from typing import NamedTuple

from ..._backend import xp
from ..._creation import full
from ..._tensor import Tensor
from ...ops.indexing import index_select
from ...ops.shape import cat
from ...ops.sorting import _unstable_order

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """A batch of variable-length sequences, packed (see the module docstring); an input and output of
    ``nn.RNN``/``nn.LSTM``/``nn.GRU``. ``batch_sizes`` is int64; ``sorted_indices[j]`` is the batch position of
    the j-th longest sequence (None when the batch was given sorted) and ``unsorted_indices`` its inverse."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as PyTorch also accepts
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(...)``; the index tensors stay int64."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self) -> PackedSequence:
        return self

    def _with_data(self, data: Tensor) -> PackedSequence:
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def float(self) -> PackedSequence:
        return self._with_data(self.data.float())

    def double(self) -> PackedSequence:
        return self._with_data(self.data.double())

    def half(self) -> PackedSequence:
        return self._with_data(self.data.half())

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _int64(values) -> Tensor:
    return Tensor._make(xp.asarray(values, dtype=xp.int64))


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation given as an index tensor (None stays None)."""
    if permutation is None:
        return None
    perm = permutation._data
    inv = xp.empty_like(perm)
    inv[perm] = xp.arange(perm.size, dtype=perm.dtype)
    return Tensor._make(inv)


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths._data.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, got shape {list(lengths.shape)}")
        return lengths._data.astype(xp.int64)
    return xp.asarray(list(lengths), dtype=xp.int64).reshape(-1)


def _batch_sizes(sorted_lengths):
    """batch_sizes[t] = how many of the (descending) lengths exceed t."""
    steps = xp.arange(int(sorted_lengths[0]) if sorted_lengths.size else 0)
    return (sorted_lengths[None, :] > steps[:, None]).sum(1).astype(xp.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of the given ``lengths``.

    With ``enforce_sorted`` (default) the lengths must be in decreasing order; otherwise the batch is sorted
    here and ``sorted_indices`` records the order (``pad_packed_sequence`` restores it).
    """
    lens = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    if input._data.ndim < 2:
        raise ValueError(f"pack_padded_sequence: expected input of at least 2 dimensions (time and batch), "
                         f"got shape {list(input.shape)}")
    total, batch = input.shape[1 - batch_dim], input.shape[batch_dim]
    if lens.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={batch})")
    if enforce_sorted:
        if (lens[1:] > lens[:-1]).any():
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability.")
        order, sorted_indices = xp.arange(batch), None
    else:
        # (PyTorch sorts with torch.sort(lengths, descending=True): equal lengths in its std::sort's order)
        order = _unstable_order(lens, 0, True)
        sorted_indices = _int64(order)
    lens = lens[order]
    if lens.size and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lens.size and lens[0] > total:
        raise RuntimeError(f"pack_padded_sequence: the longest length {int(lens[0])} exceeds the input's "
                           f"{total} time steps (input shape {list(input.shape)}, batch_first={batch_first})")
    batch_sizes = _batch_sizes(lens)
    steps, cols = xp.nonzero(lens[None, :] > xp.arange(batch_sizes.size)[:, None])  # time-major, sorted order
    rows = order[cols] * total + steps if batch_first else steps * batch + order[cols]
    flat = input.reshape(total * batch, *input.shape[2:])
    data = index_select(flat, 0, _int64(rows))
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def _gather_padded(data: Tensor, index, padding_value) -> Tensor:
    """``data`` rows at ``index`` (any shape); index ``len(data)`` reads ``padding_value``."""
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    out = index_select(cat([data, pad], 0), 0, _int64(index.reshape(-1)))
    return out.reshape(*index.shape, *data.shape[1:])


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: (padded (T, B, *) or (B, T, *), lengths int64 (B,)) in the original batch
    order; T is the longest length, or ``total_length`` (which must be at least that)."""
    data, batch_sizes, _, unsorted = sequence
    bs = batch_sizes._data.astype(xp.int64)
    max_len = bs.size
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    batch = int(bs[0]) if bs.size else 0
    offsets = xp.concatenate([[0], xp.cumsum(bs)[:-1]]).astype(xp.int64)
    cols = xp.arange(batch)[None, :] if unsorted is None else unsorted._data[None, :]  # sorted column per slot
    live = xp.zeros((max_len, 1), dtype=xp.int64)
    live[: bs.size, 0] = bs
    off = xp.zeros((max_len, 1), dtype=xp.int64)
    off[: bs.size, 0] = offsets
    index = xp.where(cols < live, off + cols, data.shape[0])
    if batch_first:
        index = index.T
    sorted_lengths = (bs[None, :] > xp.arange(batch)[:, None]).sum(1)
    lengths = sorted_lengths if unsorted is None else sorted_lengths[unsorted._data]
    return _gather_padded(data, index, padding_value), _int64(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (T, B, *) (or (B, T, *)), T = max L_i, padding with
    ``padding_value`` on the ``padding_side`` ("right", default, or "left")."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = sequences[0].shape[1:]
    for i, s in enumerate(sequences):
        if s._data.ndim == 0 or s.shape[1:] != trailing:
            raise RuntimeError(f"pad_sequence: sequence {i} has shape {list(s.shape)}; every sequence must be "
                               f"(L, *{list(trailing)}) like sequence 0 {list(sequences[0].shape)}")
    lens = xp.asarray([s.shape[0] for s in sequences], dtype=xp.int64)
    max_len = int(lens.max())
    starts = xp.concatenate([[0], xp.cumsum(lens)[:-1]]).astype(xp.int64)
    steps = xp.arange(max_len)[:, None]
    pos = steps if padding_side == "right" else steps - (max_len - lens)[None, :]
    index = xp.where((pos >= 0) & (pos < lens[None, :]), starts[None, :] + pos, int(lens.sum()))
    if batch_first:
        index = index.T
    return _gather_padded(cat(sequences, 0), index, padding_value)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences (the first ``lengths[i]`` steps of each)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, : int(n)] for i, n in enumerate(_lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
