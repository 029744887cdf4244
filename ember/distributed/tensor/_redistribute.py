"""A DTensor's layout (``Spec``: mesh, placements, global shape) and the collectives that change it, on arrays.

Redistribution works one mesh dimension at a time, as PyTorch's does: first every dimension whose placement
changes is brought to Replicate (all-gather of a Shard, all-reduce of a Partial), innermost mesh dimension
first; then each goes from Replicate to its target (a Shard takes its chunk, a Partial its term), outermost
first. Two mesh dimensions sharding the same tensor dimension nest (the inner one splits the outer one's
chunk), so when the outer one changes, the inner one is undone and redone with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._backend import xp
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard


@dataclass(frozen=True)
class Spec:
    """Where a DTensor's pieces are: ``placements[d]`` says how mesh dimension ``d`` holds the global value."""

    mesh: DeviceMesh
    placements: tuple[Placement, ...]
    shape: tuple[int, ...]  # the global shape

    def local_shape(self) -> tuple[int, ...]:
        return local_shape_and_offset(self.shape, self.mesh, self.placements, self.mesh.get_coordinate())[0]

    def with_placements(self, placements) -> Spec:
        return Spec(self.mesh, tuple(placements), self.shape)

    def grad_spec(self) -> Spec:
        """The layout of this tensor's gradient: a Partial value's gradient is the same on every rank."""
        return self.with_placements(Replicate() if p.is_partial() else p for p in self.placements)


def normalize(placements, ndim: int, mesh: DeviceMesh, op: str) -> tuple[Placement, ...]:
    """Placements checked against the mesh and the tensor's rank; ``Shard(-1)`` becomes ``Shard(ndim - 1)``."""
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"{op}: {len(placements)} placements {placements} for a {mesh.ndim}-d device mesh; "
                         "give one placement per mesh dimension")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"{op}: placements must be Shard, Replicate or Partial, got {p!r}")
        if isinstance(p, _StridedShard):
            raise NotImplementedError(f"{op}: {p!r} (strided sharding) is not supported by ember's DTensor")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1) or ndim == 0:
                raise IndexError(f"{op}: Shard(dim={p.dim}) is out of range for a tensor with {ndim} dimension(s)")
            p = Shard(p.dim % ndim)
        out.append(p)
    return tuple(out)


def local_shape_and_offset(shape, mesh: DeviceMesh, placements, coordinate) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shape of the piece the rank at ``coordinate`` holds of a tensor of global ``shape``, and the global
    index of its first element: each Shard takes its ``torch.chunk``, a later mesh dimension splitting the
    chunk of an earlier one that shards the same tensor dimension."""
    shape, offset = list(shape), [0] * len(shape)
    for d, p in enumerate(placements):
        if isinstance(p, Shard):
            start, stop = chunk_bounds(shape[p.dim], mesh.size(d), coordinate[d])
            shape[p.dim] = stop - start
            offset[p.dim] += start
    return tuple(shape), tuple(offset)


def chunk_bounds(n: int, parts: int, index: int) -> tuple[int, int]:
    """``torch.chunk(x, parts)[index]``'s range along a dimension of ``n`` (empty past the last chunk)."""
    size = -(-n // parts)
    start = min(index * size, n)
    return start, min(start + size, n)


def _take(array, dim: int, start: int, stop: int):
    index = [slice(None)] * array.ndim
    index[dim] = slice(start, stop)
    return array[tuple(index)]


def _level_size(spec: Spec, placements, mesh_dim: int, tensor_dim: int) -> int:
    """The size of ``tensor_dim`` that mesh dimension ``mesh_dim`` splits: the global size, or the chunk of the
    outer mesh dimensions that shard the same tensor dimension."""
    n = spec.shape[tensor_dim]
    coordinate = spec.mesh.get_coordinate()
    for d in range(mesh_dim):
        if placements[d] == Shard(tensor_dim):
            start, stop = chunk_bounds(n, spec.mesh.size(d), coordinate[d])
            n = stop - start
    return n


def _all_gather(array, dim: int, size: int, group):
    """The chunks of ``size`` along ``dim`` from every rank of ``group``, concatenated (padded to one size)."""
    parts = group.size()
    chunk = -(-size // parts)
    pad = [(0, 0)] * array.ndim
    pad[dim] = (0, chunk - array.shape[dim])
    send = xp.ascontiguousarray(xp.pad(array, pad))
    recv = xp.empty((parts,) + send.shape, dtype=send.dtype)
    group.comm.allgather(send, recv)
    return _take(xp.concatenate(list(recv), axis=dim), dim, 0, size)


def _all_reduce(array, placement: Partial, group):
    out = xp.array(array, copy=True).reshape(-1)
    group.comm.allreduce_(out, placement.mpi_op())
    return out.reshape(array.shape)


def _partition(array, placement: Partial, group, index: int):
    """A Replicate value as Partial terms: value / n for a sum, the value itself for avg, max and min."""
    if placement.reduce_op == "product":
        raise NotImplementedError("DTensor: a Replicate value cannot be split into Partial(product) terms")
    if placement.reduce_op == "sum":
        return array / group.size() if array.dtype.kind in "fc" else (array if index == 0 else xp.zeros_like(array))
    return array


def _to_redo(spec: Spec, target) -> list[int]:
    """The mesh dimensions that must go through Replicate: those that change, and those nested inside them."""
    redo = {d for d, (p, q) in enumerate(zip(spec.placements, target)) if p != q}
    changed = True
    while changed:
        changed = False
        for d in sorted(redo):
            dims = {p.dim for p in (spec.placements[d], target[d]) if isinstance(p, Shard)}
            for e in range(d + 1, len(target)):
                if e not in redo and any(isinstance(p, Shard) and p.dim in dims
                                         for p in (spec.placements[e], target[e])):
                    redo.add(e)
                    changed = True
    return sorted(redo)


def redistribute_array(array, spec: Spec, target: tuple[Placement, ...]):
    """``array`` (this rank's piece under ``spec``) as this rank's piece under ``target`` placements."""
    mesh = spec.mesh
    if mesh.get_coordinate() is None:
        raise RuntimeError(f"DTensor: rank {mesh.get_rank()} is not part of {mesh}")
    redo = _to_redo(spec, target)
    current = list(spec.placements)
    for d in reversed(redo):
        p = current[d]
        if isinstance(p, Shard):
            array = _all_gather(array, p.dim, _level_size(spec, current, d, p.dim), mesh.get_group(d))
        elif isinstance(p, Partial):
            array = _all_reduce(array, p, mesh.get_group(d))
        current[d] = Replicate()
    coordinate = mesh.get_coordinate()
    for d in redo:
        q = target[d]
        if isinstance(q, Shard):
            start, stop = chunk_bounds(_level_size(spec, current, d, q.dim), mesh.size(d), coordinate[d])
            array = _take(array, q.dim, start, stop)
        elif isinstance(q, Partial):
            array = _partition(array, q, mesh.get_group(d), coordinate[d])
        current[d] = q
    return array


def broadcast_from(array, mesh: DeviceMesh, src: int, dims=None):
    """Every rank of the mesh gets the array of the rank at coordinate ``src`` on every mesh dimension (or on
    ``dims``)."""
    out = xp.array(array, order="C")  # (a copy; ascontiguousarray would make a 0-d array 1-d)
    flat = out.reshape(-1)
    for d in range(mesh.ndim) if dims is None else dims:
        group = mesh.get_group(d)
        if not 0 <= src < group.size():
            raise ValueError(f"src_data_rank={src} is out of range for mesh dimension {d} of size {group.size()}")
        group.comm.broadcast_(flat, src)
    return out
