"""``torch.distributed.nn.functional``: the collectives of ``ember.distributed`` as autograd Functions.

Each returns new tensors (the inputs are left alone, except the ``output`` tensors ``reduce_scatter``,
``all_to_all`` and ``all_to_all_single`` are handed, which they fill and return, as PyTorch's do) and has the
adjoint collective as its backward, which is again differentiable:

- ``all_reduce``: the gradient is all-reduced with the same op (PyTorch's rule, also for MAX/MIN/PRODUCT);
- ``broadcast(src)``: the gradients are summed onto ``src`` (``reduce``); the other ranks' inputs get zeros;
- ``reduce(dst)``: the gradient on ``dst`` is broadcast to every rank;
- ``all_gather``: each rank's input gets the sum over ranks of the gradients of its slot (a reduce-scatter);
- ``reduce_scatter``: each input gets the all-gather of the output gradients;
- ``gather(dst)`` / ``scatter(src)``: each other's backward;
- ``all_to_all`` / ``all_to_all_single``: the gradients travel back (split sizes swapped).

``group`` is a ProcessGroup or None (the default group); ``src``/``dst`` are global ranks. Differences from
PyTorch: no FutureWarning (PyTorch's deprecation notes point at ``_functional_collectives``), and ``scatter``'s
non-source ranks may pass any list of ``world_size`` tensors of the right shape (as in PyTorch, whose forward
reads the first one's shape on every rank).
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function
from .. import collectives
from ..process_group import get_rank, get_world_size
from ..reduce_op import ReduceOp


def _fresh(tensor: Tensor) -> Tensor:
    """A contiguous copy the in-place collectives may fill (the caller's tensor is left as it was)."""
    return tensor.detach().contiguous().clone()


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = _fresh(tensor)
        collectives.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)  # every rank joins the reduce
        if get_rank() != ctx.src:  # only the source's input reached the outputs (zeros, whatever the reduce left)
            gx.zero_()
        return None, None, gx


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        out = _fresh(tensor)
        collectives.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = _fresh(tensor)
        collectives.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        tensor = tensor.detach().contiguous()
        outs = [tensor.new_empty(tensor.shape) for _ in range(get_world_size(group))]
        collectives.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        out = grads[0].new_empty(grads[0].shape)
        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, out, *grads)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        ctx.group = group
        output = output.contiguous()  # (a strided output gets a contiguous copy filled, as in PyTorch)
        collectives.reduce_scatter(output, [t.detach().contiguous() for t in inputs], op=op, group=group)
        return output

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        tensor = tensor.detach().contiguous()
        outs = [tensor.new_zeros(tensor.shape) for _ in range(get_world_size(group))]
        collectives.gather(tensor, outs if get_rank() == dst else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if any(t.shape != tensors[0].shape for t in tensors):
            raise ValueError("scatter: the tensors to scatter must all have the same shape")
        out = tensors[0].detach().new_zeros(tensors[0].shape)
        parts = [t.detach().contiguous() for t in tensors] if get_rank() == src else None
        collectives.scatter(out, parts, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, group, outputs, *inputs):
        ctx.group = group
        ctx.shapes = [t.shape for t in inputs]
        collectives.all_to_all(list(outputs), [t.detach().contiguous() for t in inputs], group=group)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        outs = [grads[0].new_empty(shape) for shape in ctx.shapes]
        return (None, None) + _AllToAll.apply(ctx.group, outs, *grads)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.shape = group, input.shape
        ctx.splits = (input_split_sizes, output_split_sizes)  # the way back: the sizes swapped
        collectives.all_to_all_single(output, input.detach().contiguous(), output_split_sizes, input_split_sizes,
                                      group=group)
        return output

    @staticmethod
    def backward(ctx, grad):
        back = grad.new_empty(ctx.shape)
        outs, ins = ctx.splits
        return None, None, None, None, _AllToAllSingle.apply(ctx.group, back, outs, ins, grad.contiguous())


def broadcast(tensor: Tensor, src: int, group=None) -> Tensor:
    """A new tensor holding rank ``src``'s ``tensor`` on every rank; gradients are summed back onto ``src``."""
    return _Broadcast.apply(src, group, tensor)


def gather(tensor: Tensor, dst: int = 0, group=None) -> tuple:
    """Every rank's ``tensor``, in rank order, on rank ``dst`` (zeros elsewhere); a tuple of ``world_size``."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src: int = 0, group=None) -> Tensor:
    """Rank ``src``'s ``tensors[i]`` on rank i (every rank passes ``world_size`` tensors of one shape)."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor: Tensor, dst: int, op: ReduceOp = ReduceOp.SUM, group=None) -> Tensor:
    """A new tensor: the reduction of ``tensor`` over ranks on ``dst`` (the other ranks' copies are unspecified,
    as in PyTorch); the gradient on ``dst`` is broadcast to every rank."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output: Tensor, input_list, op: ReduceOp = ReduceOp.SUM, group=None) -> Tensor:
    """``output`` filled with the reduction over ranks of ``input_list[rank]`` and returned with history; each
    input's gradient is the all-gather of the output gradients."""
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None) -> Tensor:
    """A new tensor: ``tensor`` reduced over every rank with ``op``, the same on each; the gradient is
    all-reduced with the same ``op`` (PyTorch's rule: for SUM the sum of the ranks' gradients)."""
    return _AllReduce.apply(op, group, tensor)


def all_gather(tensor: Tensor, group=None) -> tuple:
    """Every rank's ``tensor`` in rank order (a tuple); the gradient of ``tensor`` is the sum over ranks of the
    gradients of this rank's slot (a reduce-scatter), so a loss computed alike on every rank gets ``world_size``
    times its local gradient, as in PyTorch."""
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=None) -> tuple:
    """``input_tensor_list[j]`` goes to rank j; the blocks received, in rank order, fill ``output_tensor_list``
    and are returned as a tuple with history."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None, input_split_sizes=None,
                      group=None) -> Tensor:
    """``all_to_all`` on the dim-0 blocks of one tensor (sizes given or equal); ``output`` is filled and
    returned with history."""
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)
