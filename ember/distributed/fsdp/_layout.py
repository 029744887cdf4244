"""Where each parameter's elements lie in a rank's shard: FSDP's flat layout and fully_shard's row layout.

A unit's parameters (one dtype) are cut into one shard per rank of the shard group, each ``k``
elements long (zero padding at the end). The gathered shards, ``(world, k)``, rebuild the
parameters; a full gradient is cut the same way for the reduce-scatter.

- ``FlatLayout`` (``FullyShardedDataParallel``'s FlatParameter): the parameters flattened and
  concatenated, then cut into ``world`` equal pieces; a parameter may straddle two ranks. The
  gathered array itself is the full parameters (views, no copy).
- ``RowLayout`` (``fully_shard``): every parameter cut along dim 0 as ``torch.chunk`` does
  (``ceil(d0 / world)`` rows per rank, the last ranks may get fewer or none); a rank's shard is its
  chunks one after another, each padded to the full chunk size. Rebuilding copies.
"""

from __future__ import annotations

import math

from ..._backend import xp


class FlatLayout:
    """Parameters of ``shapes`` flattened end to end, cut into ``world`` shards of ``k`` elements."""

    def __init__(self, shapes: list[tuple], world: int, rank: int) -> None:
        self.shapes, self.world, self.rank = shapes, world, rank
        self.numels = [math.prod(s) for s in shapes]
        self.offsets = [0]
        for n in self.numels:
            self.offsets.append(self.offsets[-1] + n)
        self.total = self.offsets[-1]
        self.k = -(-self.total // world) if self.total else 0

    def full_size(self) -> int:
        return self.k * self.world

    def to_shards(self, arrays: list, dtype) -> object:
        """``(world, k)``: the parameters' values cut into every rank's shard."""
        flat = xp.zeros(self.full_size(), dtype=dtype)
        for a, lo, hi in zip(arrays, self.offsets, self.offsets[1:]):
            flat[lo:hi] = a.reshape(-1)
        return flat.reshape(self.world, self.k)

    def full_from_gathered(self, gathered) -> object:
        """The full flat array from the gathered ``(world, k)`` shards (the same memory)."""
        return gathered.reshape(-1)

    def scatter_input(self, full_grad) -> object:
        """A full gradient (as ``full_from_gathered`` lays it out), cut for the reduce-scatter."""
        return full_grad.reshape(self.world, self.k)

    def full_view(self, full, i: int):
        return full[self.offsets[i]:self.offsets[i + 1]].reshape(self.shapes[i])

    def split_sizes(self) -> list[int]:
        """How a full flat tensor splits into the parameters (and the padding, when there is any)."""
        pad = self.full_size() - self.total
        return self.numels + ([pad] if pad else [])

    def local_view(self, shard, i: int):
        """This rank's part of parameter ``i``, a view of ``shard``: 1-D, possibly empty (as PyTorch's
        ``use_orig_params=True``); unsharded (one rank), the parameter's own shape."""
        if self.world == 1:
            return shard[self.offsets[i]:self.offsets[i + 1]].reshape(self.shapes[i])
        start = self.rank * self.k
        lo = min(max(self.offsets[i], start), start + self.k)
        hi = max(min(self.offsets[i + 1], start + self.k), lo)
        return shard[lo - start:hi - start]


class RowLayout:
    """Each parameter of ``shapes`` chunked along dim 0 over ``world`` ranks (a 0-d parameter is one row)."""

    def __init__(self, shapes: list[tuple], world: int, rank: int) -> None:
        self.shapes, self.world, self.rank = shapes, world, rank
        self.rows = [-(-(s[0] if s else 1) // world) for s in shapes]
        self.row_numel = [math.prod(s[1:]) for s in shapes]
        self.numels = [math.prod(s) for s in shapes]
        self.offsets = [0]  # of each parameter in the full array
        self.segments = [0]  # of each parameter's chunk in a shard
        for n, r, w in zip(self.numels, self.rows, self.row_numel):
            self.offsets.append(self.offsets[-1] + n)
            self.segments.append(self.segments[-1] + r * w)
        self.total = self.offsets[-1]
        self.k = self.segments[-1]

    def full_size(self) -> int:
        return self.total

    def _padded(self, i: int) -> tuple:
        s = self.shapes[i]
        return (self.world * self.rows[i],) + tuple(s[1:])

    def to_shards(self, arrays: list, dtype) -> object:
        out = xp.zeros((self.world, self.k), dtype=dtype)
        for i, a in enumerate(arrays):
            rows = a.reshape((-1,) + self._padded(i)[1:])
            padded = xp.zeros(self._padded(i), dtype=dtype)
            padded[:rows.shape[0]] = rows
            out[:, self.segments[i]:self.segments[i + 1]] = padded.reshape(self.world, -1)
        return out

    def full_from_gathered(self, gathered) -> object:
        full = xp.empty(self.total, dtype=gathered.dtype)
        for i in range(len(self.shapes)):
            rows = gathered[:, self.segments[i]:self.segments[i + 1]].reshape(-1)
            full[self.offsets[i]:self.offsets[i + 1]] = rows[:self.numels[i]]
        return full

    def scatter_input(self, full_grad) -> object:
        out = xp.zeros((self.world, self.k), dtype=full_grad.dtype)
        for i in range(len(self.shapes)):
            padded = xp.zeros(self.world * (self.segments[i + 1] - self.segments[i]), dtype=full_grad.dtype)
            padded[:self.numels[i]] = full_grad[self.offsets[i]:self.offsets[i + 1]]
            out[:, self.segments[i]:self.segments[i + 1]] = padded.reshape(self.world, -1)
        return out

    def full_view(self, full, i: int):
        return full[self.offsets[i]:self.offsets[i + 1]].reshape(self.shapes[i])

    def split_sizes(self) -> list[int]:
        return list(self.numels)

    def local_rows(self, i: int) -> int:
        d0 = self.shapes[i][0] if self.shapes[i] else 1
        return max(0, min(d0, (self.rank + 1) * self.rows[i]) - self.rank * self.rows[i])

    def local_view(self, shard, i: int):
        """This rank's chunk of parameter ``i`` (its rows, as ``torch.chunk(p, world)[rank]``), a view of ``shard``."""
        n = self.local_rows(i)
        lo = self.segments[i]
        return shard[lo:lo + n * self.row_numel[i]].reshape((n,) + tuple(self.shapes[i][1:]))
