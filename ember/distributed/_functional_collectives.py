"""``torch.distributed._functional_collectives``: collectives that return a new tensor instead of filling one.

    y = funcol.all_gather_single(x, 0, group)               # every rank's x, concatenated along dim 0
    y = funcol.reduce_scatter_single(x, "sum", 0, group)    # the sum over ranks, this rank's chunk of dim 0

``group`` is a ProcessGroup, a 1-d DeviceMesh or ``(mesh, mesh_dim)``; PyTorch's rank lists (and their ``tag``)
raise NotImplementedError. ember's collectives finish before returning, so ``wait_tensor`` hands its argument
back. The ``*_autograd`` variants are differentiable with the adjoint collective (an all-gather's gradient is
reduce-scattered, an all-to-all's travels back with the split sizes swapped); the others return a tensor
without history, as in PyTorch. Each is a ``named_call``: a rank stuck in the collective it runs is reported as
stuck in the function the program called (``funcol.all_gather_single``, not the collective it runs).
"""

from __future__ import annotations

from .. import _warnings
from .._backend import xp
from .._tensor import Tensor
from ..autograd.function import Function
from . import collectives
from .consistency import named_call
from .device_mesh import DeviceMesh
from .process_group import ProcessGroup
from .reduce_op import ReduceOp

_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "product": ReduceOp.PRODUCT, "min": ReduceOp.MIN,
        "max": ReduceOp.MAX}


def _group(group) -> ProcessGroup:
    if isinstance(group, ProcessGroup):
        return group
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(f"functional collectives take a 1-d DeviceMesh or (mesh, mesh_dim), got a "
                             f"{group.ndim}-d mesh")
        return group.get_group()
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    raise NotImplementedError(f"functional collectives: group must be a ProcessGroup, a DeviceMesh or "
                              f"(mesh, mesh_dim) in ember, got {type(group).__name__}")


def _op(reduce_op: str) -> ReduceOp:
    name = str(reduce_op).lower()
    if name not in _OPS:
        raise ValueError(f"functional collectives: unknown reduce op {reduce_op!r}; use one of {sorted(_OPS)}")
    return _OPS[name]


def _gather(array, dim: int, pg: ProcessGroup):
    """Every rank's ``array`` concatenated along ``dim``."""
    moved = xp.ascontiguousarray(xp.moveaxis(array, dim, 0))
    out = xp.empty((pg.size() * moved.shape[0],) + moved.shape[1:], dtype=array.dtype)
    collectives.all_gather_single(Tensor._make(out), Tensor._make(moved), group=pg)
    return xp.moveaxis(out, 0, dim)


def _reduce_scatter(array, op: ReduceOp, dim: int, pg: ProcessGroup):
    """The reduction over ranks of ``array``; this rank keeps its chunk of ``dim``."""
    if array.shape[dim] % pg.size():
        raise ValueError(f"reduce_scatter: dim {dim} of size {array.shape[dim]} does not split into {pg.size()} "
                         "equal chunks")
    moved = xp.ascontiguousarray(xp.moveaxis(array, dim, 0))
    out = xp.empty((moved.shape[0] // pg.size(),) + moved.shape[1:], dtype=array.dtype)
    collectives.reduce_scatter_single(Tensor._make(out), Tensor._make(moved), op, group=pg)
    return xp.moveaxis(out, 0, dim)


def _splits(array, output_split_sizes, input_split_sizes, pg: ProcessGroup):
    if (output_split_sizes is None) != (input_split_sizes is None):
        raise ValueError("all_to_all_single: output_split_sizes and input_split_sizes must be given together or "
                         "both be None")
    if output_split_sizes is None:
        sizes = [array.shape[0] // pg.size()] * pg.size()
        return sizes, sizes
    return list(output_split_sizes), list(input_split_sizes)


def _all_to_all(array, output_split_sizes, input_split_sizes, pg: ProcessGroup):
    out = xp.empty((sum(output_split_sizes),) + array.shape[1:], dtype=array.dtype)
    collectives.all_to_all_single(Tensor._make(out), Tensor._make(xp.ascontiguousarray(array)), output_split_sizes,
                                  input_split_sizes, group=pg)
    return out


def wait_tensor(tensor: Tensor) -> Tensor:
    """The collective's result, ready: ember's collectives complete before they return."""
    return tensor


@named_call
def all_reduce(self: Tensor, reduceOp: str, group, tag: str = "") -> Tensor:
    """A new tensor: ``self`` reduced over ``group`` with ``reduceOp`` ("sum", "avg", "max", "min", "product")."""
    out = Tensor._make(xp.array(self._data, copy=True))
    collectives.all_reduce(out, _op(reduceOp), group=_group(group))
    return out


@named_call
def all_gather_single(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    """Every rank's ``self``, in rank order, concatenated along ``gather_dim``."""
    return Tensor._make(_gather(self._data, gather_dim, _group(group)))


@named_call
def reduce_scatter_single(self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = "") -> Tensor:
    """``self`` reduced over ``group``; rank i gets chunk i of ``scatter_dim`` (which must divide evenly)."""
    return Tensor._make(_reduce_scatter(self._data, _op(reduceOp), scatter_dim, _group(group)))


@named_call
def all_to_all_single(self: Tensor, output_split_sizes: list[int] | None, input_split_sizes: list[int] | None,
                      group, tag: str = "") -> Tensor:
    """Block j of ``self`` (dim 0 split by ``input_split_sizes``, or equally) goes to rank j; the result is the
    blocks received, in rank order (sizes ``output_split_sizes``)."""
    pg = _group(group)
    outs, ins = _splits(self._data, output_split_sizes, input_split_sizes, pg)
    return Tensor._make(_all_to_all(self._data, outs, ins, pg))


class _GatherFn(Function):
    @staticmethod
    def forward(ctx, x, dim, pg):
        ctx.dim, ctx.pg = dim, pg
        return Tensor._make(_gather(x._data, dim, pg))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._make(_reduce_scatter(grad._data, ReduceOp.SUM, ctx.dim, ctx.pg)), None, None


class _ReduceScatterFn(Function):
    @staticmethod
    def forward(ctx, x, op, dim, pg):
        # Any op reduces forward (AVG of integers refused by the collective, as PyTorch's); only the backward of a
        # sum is defined, and asking for another's is PyTorch's RuntimeError then.
        ctx.op, ctx.dim, ctx.pg = op, dim, pg
        return Tensor._make(_reduce_scatter(x._data, op, dim, pg))

    @staticmethod
    def backward(ctx, grad):
        if ctx.op is not ReduceOp.SUM:
            raise RuntimeError(f"reduce_scatter_tensor backward only supports 'sum' reduction, got "
                               f"'{ctx.op.name.lower()}'")
        return Tensor._make(_gather(grad._data, ctx.dim, ctx.pg)), None, None, None


class _AllToAllFn(Function):
    @staticmethod
    def forward(ctx, x, outs, ins, pg):
        ctx.splits, ctx.pg = (outs, ins), pg
        return Tensor._make(_all_to_all(x._data, outs, ins, pg))

    @staticmethod
    def backward(ctx, grad):
        outs, ins = ctx.splits
        return Tensor._make(_all_to_all(grad._data, ins, outs, ctx.pg)), None, None, None


@named_call
def all_gather_single_autograd(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    """``all_gather_single`` whose gradient is the reduce-scatter (sum) of the incoming gradient."""
    return _GatherFn.apply(self, gather_dim, _group(group))


@named_call
def reduce_scatter_single_autograd(self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = "") -> Tensor:
    """``reduce_scatter_single`` whose gradient is the all-gather of the incoming gradient (of a "sum" only: the
    backward of another op is PyTorch's RuntimeError)."""
    return _ReduceScatterFn.apply(self, _op(reduceOp), scatter_dim, _group(group))


@named_call
def all_to_all_single_autograd(self: Tensor, output_split_sizes: list[int] | None,
                               input_split_sizes: list[int] | None, group, tag: str = "") -> Tensor:
    """``all_to_all_single`` whose gradient travels back with the split sizes swapped."""
    pg = _group(group)
    outs, ins = _splits(self._data, output_split_sizes, input_split_sizes, pg)
    return _AllToAllFn.apply(self, outs, ins, pg)


def _deprecated(name: str, replacement: str) -> None:
    _warnings.warn(f"`torch.distributed._functional_collectives.{name}` is deprecated. Please use "
                   f"`torch.distributed._functional_collectives.{replacement}` instead.", FutureWarning)


@named_call
def all_gather_tensor(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    """PyTorch's deprecated name of ``all_gather_single`` (warns FutureWarning, as PyTorch does)."""
    _deprecated("all_gather_tensor", "all_gather_single")
    return all_gather_single(self, gather_dim, group, tag)


@named_call
def all_gather_tensor_autograd(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    """PyTorch's deprecated name of ``all_gather_single_autograd`` (warns FutureWarning)."""
    _deprecated("all_gather_tensor_autograd", "all_gather_single_autograd")
    return all_gather_single_autograd(self, gather_dim, group, tag)


@named_call
def reduce_scatter_tensor(self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = "") -> Tensor:
    """PyTorch's deprecated name of ``reduce_scatter_single`` (warns FutureWarning)."""
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


@named_call
def reduce_scatter_tensor_autograd(self: Tensor, reduceOp: str, scatter_dim: int, group, tag: str = "") -> Tensor:
    """PyTorch's deprecated name of ``reduce_scatter_single_autograd`` (warns FutureWarning)."""
    _deprecated("reduce_scatter_tensor_autograd", "reduce_scatter_single_autograd")
    return reduce_scatter_single_autograd(self, reduceOp, scatter_dim, group, tag)
