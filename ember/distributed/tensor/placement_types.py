"""``Shard(dim)``, ``Replicate()``, ``Partial(reduce_op)``: how a DTensor's global value sits on one mesh dimension.

- ``Shard(dim)``: each rank along the mesh dimension holds one ``torch.chunk`` of tensor dimension ``dim``
  (chunks of ``ceil(n / ranks)``; the last ranks' chunks may be shorter or empty, as in PyTorch);
- ``Replicate()``: every rank holds the whole value;
- ``Partial(reduce_op)``: every rank holds a full-shaped term; the value is their reduction ("sum", the
  default, "avg", "max", "min" or "product"), done when the tensor is redistributed to Replicate or Shard.
  An unknown reduce_op is a ValueError at once (PyTorch accepts any string and fails when it is used).
"""

from __future__ import annotations

from ..reduce_op import ReduceOp

_REDUCE_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "max": ReduceOp.MAX, "min": ReduceOp.MIN,
               "product": ReduceOp.PRODUCT}


class Placement:
    """Base class of the placements (``torch.distributed.tensor.Placement``)."""

    __slots__ = ()

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False


class Shard(Placement):
    """Tensor dimension ``dim`` is split in ``torch.chunk`` pieces over the ranks of a mesh dimension."""

    __slots__ = ("dim",)

    def __init__(self, dim: int) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"Shard(dim): dim must be an int, got {type(dim).__name__}")
        self.dim = dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(self.dim)

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


class Replicate(Placement):
    """Every rank of the mesh dimension holds the whole value."""

    __slots__ = ()

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return -1

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """Every rank holds a term; the value is their ``reduce_op`` ("sum", "avg", "max", "min" or "product")."""

    __slots__ = ("reduce_op",)

    def __init__(self, reduce_op: str = "sum") -> None:
        if reduce_op not in _REDUCE_OPS:
            raise ValueError(f"Partial: reduce_op must be one of {sorted(_REDUCE_OPS)}, got {reduce_op!r}")
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    @property
    def linear(self) -> bool:
        """Sums and averages commute with addition and scaling: ``a_i + b_i`` is a term of ``a + b``."""
        return self.reduce_op in ("sum", "avg")

    def mpi_op(self) -> ReduceOp:
        return _REDUCE_OPS[self.reduce_op]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash(("partial", self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"


class _StridedShard(Placement):
    """PyTorch's private placement for FSDP over tensor-parallel shards (``dim`` split into ``split_factor``
    groups, one chunk taken from each). ember's DTensor does not lay tensors out this way: the class exists so
    libraries can name it in ``isinstance`` checks, and a DTensor given it raises NotImplementedError."""

    __slots__ = ("dim", "split_factor")

    def __init__(self, dim: int, split_factor: int) -> None:
        self.dim = dim
        self.split_factor = split_factor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StridedShard) and (other.dim, other.split_factor) == (self.dim, self.split_factor)

    def __hash__(self) -> int:
        return hash(("strided", self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"
