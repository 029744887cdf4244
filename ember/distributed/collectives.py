"""Collectives on tensors (``torch.distributed.all_reduce`` and friends), in place like PyTorch's.

Each call validates its arguments, agrees with the other ranks on what is being
called (``consistency.py``: mismatched shapes raise on every rank instead of
hanging), then starts the MPI operation (``comm.py``). With ``async_op=True`` it
returns a ``Work`` (``wait()``, ``is_completed()``, ``result()`` = the output
tensors); otherwise it waits and returns None. Tensors must be contiguous, except the one tensor of
``all_reduce``, ``broadcast`` and ``reduce`` (a view of any strides: reduced through a contiguous copy). Ranks
(``src``/``dst``) are global ranks; ``group_src``/``group_dst`` are ranks within
``group``. On a rank outside ``group`` a collective does nothing and returns None.
"""

from __future__ import annotations

from collections.abc import Callable

from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES
from .._tensor import Tensor
from .comm import Work
from .consistency import Agreement, check_tensor
from .process_group import ProcessGroup, resolve
from .process_group import group as _group
from .reduce_op import ReduceOp


def _member(group: ProcessGroup | None, op: str) -> ProcessGroup | None:
    pg = resolve(group, op)
    return pg if pg.comm is not None else None


def _invalid_root(op: str, given: str, root: int, size: int) -> Exception:
    """PyTorch's gloo error for a collective's root outside the group."""
    return RuntimeError(f"ProcessGroupGloo::{_GLOO_NAMES.get(op, op)}: invalid root rank: {root} ({op}: "
                        f"{given}={root} is out of range for a group of {size})")


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, op: str,
          out_of_range: Callable[[str, str, int, int], Exception] = _invalid_root) -> int:
    """The root as a rank within ``pg``, from a global rank or a group rank (exactly one of them).

    A root outside the group's ranks is PyTorch's gloo RuntimeError ("invalid root rank") where PyTorch passes it
    on unchecked (a group rank; a global rank of the default group, whose numbering is the group's), and its
    ValueError where PyTorch's translation of a global rank into a subgroup's refuses it. Point-to-point messages
    pass their own ``out_of_range(op, argument name, rank, group size)``: PyTorch's gloo fails them otherwise."""
    if (rank is None) == (group_rank is None):
        raise ValueError(f"{op}: give exactly one of {what}= (global rank) and group_{what}= (rank in the group)")
    if rank is not None and (rank in pg.ranks or pg is not _group.WORLD):
        return pg.group_rank(rank, what, op)
    root = rank if rank is not None else group_rank
    if not 0 <= root < pg.size():
        raise out_of_range(op, what if rank is not None else "group_" + what, root, pg.size())
    return root


# the names PyTorch's gloo errors give the collectives
_GLOO_NAMES = {"all_gather_single": "allgather", "reduce_scatter_single": "reduce_scatter"}


def _check_op(op: str, reduce_op, tensor: Tensor | None = None) -> None:
    """``reduce_op`` must be a ReduceOp; ``AVG`` of an integer or bool ``tensor`` is PyTorch's RuntimeError (its gloo
    averages in floating point and cannot write the mean into the tensor's dtype) rather than a truncated mean."""
    if not isinstance(reduce_op, ReduceOp):
        raise TypeError(f"{op}: op must be an ember.distributed.ReduceOp, got {reduce_op!r}")
    if reduce_op is ReduceOp.AVG and tensor is not None and isinstance(tensor, Tensor) \
            and not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{SCALAR_TYPE_NAMES[tensor.dtype.name]} ({op}: ReduceOp.AVG of a {tensor.dtype} tensor; "
                           "reduce with ReduceOp.SUM and divide in floating point)")


def _check_list(op: str, name: str, tensors, like: Tensor, size: int, any_shape: bool = False) -> None:
    """``tensors`` must be ``size`` contiguous tensors with ``like``'s shape and dtype (``any_shape``: its dtype)."""
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{op}: {name} must be a list of {size} tensors (one per rank of the group), got {got}")
    for i, t in enumerate(tensors):
        check_tensor(op, f"{name}[{i}]", t)
        if (t._data.shape != like._data.shape and not any_shape) or t._data.dtype != like._data.dtype:
            raise ValueError(f"{op}: {name}[{i}] has shape {list(t.shape)} and dtype {t.dtype}, expected "
                             f"{list(like.shape)} and {like.dtype} like the tensor it pairs with")


def _check_flat(op: str, big_name: str, big: Tensor, small: Tensor, size: int) -> None:
    """``big`` holds ``size`` ``small``s: shape (size * d0, ...) or (size, *small.shape), same dtype. Otherwise
    PyTorch's gloo RuntimeError: "invalid tensor size" or "invalid tensor type" (all_gather), its failed check
    "outputShape[0] * worldSize == inputShape[0]" (reduce_scatter), with the shapes ember expects."""
    s = small._data.shape
    allowed = [(size,) + s] + ([(size * s[0],) + s[1:]] if s else [])
    if big._data.shape in allowed and big._data.dtype == small._data.dtype:
        return
    if op.startswith("reduce_scatter"):
        words = (f"Check failed: outputShape[0] * worldSize == inputShape[0] "
                 f"({(s[0] if s else 1) * size} vs. {big._data.shape[0] if big._data.ndim else 1})")
    else:
        words = "invalid tensor size" if big._data.shape not in allowed else "invalid tensor type"
    raise RuntimeError(f"ProcessGroupGloo::{_GLOO_NAMES.get(op, op)}: {words} ({op}: {big_name} has shape "
                       f"{list(big.shape)} and dtype {big.dtype}; with {size} ranks and {small.dtype} tensors of shape "
                       f"{list(s)} it must have shape {' or '.join(str(list(a)) for a in allowed)} and the same dtype)")


def _agree_rooted(pg: ProcessGroup, op: str, rank: int | None, group_rank: int | None, what: str, tensor: Tensor,
                  tensors: list[Tensor] | None, list_name: str) -> tuple[int, bool]:
    """Validate and agree on a gather/scatter: ``tensor`` on every rank, ``tensors`` on the root only.

    Returns (root as a group rank, whether this rank is it). The root defaults to rank 0 of the group.
    """
    if rank is None and group_rank is None:
        rank = pg.ranks[0]
    with Agreement(pg, op) as agree:
        agree.root = _root(pg, rank, group_rank, what, op)
        check_tensor(op, "tensor", tensor)
        is_root = pg.rank() == agree.root
        if is_root:
            _check_list(op, list_name, tensors, tensor, pg.size())
        elif tensors:
            role = "destination" if what == "dst" else "source"
            raise ValueError(f"{op}: argument ``{list_name}`` must NOT be specified on non-{role} ranks")
        agree.array = tensor._data
    return agree.root, is_root


def _finish(work: Work, async_op: bool, outputs: list[Tensor], copy_out=None) -> Work | None:
    """After completion: run ``copy_out``, bump the outputs' versions; wait unless async."""
    def done():
        if copy_out is not None:
            copy_out()
        for t in outputs:
            t._bump_version()

    work.then(done).set_result(outputs)
    if async_op:
        return work
    work.wait()
    return None


def _copy_rows(buffer, tensors: list[Tensor]):
    def copy():
        for row, t in zip(buffer, tensors):
            t._data[...] = row
    return copy


def _staged(tensor: Tensor):
    """The array an in-place collective works on, and what copies its result into ``tensor`` afterwards: the
    tensor's own memory when contiguous, else a contiguous copy written back into the view (PyTorch's gloo takes a
    strided tensor too: a transposed one is right there, a non-dense view such as ``x[:, 0]`` has its base's first
    elements reduced instead of its own; ember reduces the view's elements)."""
    data = tensor._data
    if data.flags.c_contiguous:
        return data, None
    staged = xp.ascontiguousarray(data)

    def copy_back():
        data[...] = staged
    return staged, copy_back


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over the group with ``op``; every rank gets the result in ``tensor`` (any strides)."""
    if (pg := _member(group, "all_reduce")) is None:
        return None
    with Agreement(pg, "all_reduce", op) as agree:
        _check_op("all_reduce", op, tensor)
        check_tensor("all_reduce", "tensor", tensor, any_strides=True)
        agree.array, copy_back = _staged(tensor)
    return _finish(pg.comm.iallreduce_(agree.array, op), async_op, [tensor], copy_back)


def all_reduce_coalesced(tensors: list[Tensor] | Tensor, op: ReduceOp = ReduceOp.SUM,
                         group: ProcessGroup | None = None, async_op: bool = False):
    """``all_reduce`` of every tensor of ``tensors`` (one dtype) as one operation: their elements are reduced in one
    flat buffer and copied back. ``async_op=True`` returns a ``Future`` (PyTorch's: a future, not a Work), completed
    with the tensors. A lone tensor is a list of one. PyTorch's FutureWarning says it will be deprecated."""
    from .. import _warnings

    _warnings.warn("`torch.distributed.all_reduce_coalesced` will be deprecated. If you must use it, please revisit "
                   "our documentation later at https://pytorch.org/docs/main/distributed.html#collective-functions",
                   FutureWarning)
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    if not isinstance(tensors, list) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError("Invalid function argument. Expected parameter `tensor` of type List[torch.Tensor] but got "
                        f"{type(tensors)} instead.")
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {tensors[0].dtype} and  {t.dtype}")
    if (pg := _member(group, "all_reduce_coalesced")) is None:
        return None
    if not tensors:  # (PyTorch's dispatcher has no tensor to choose a kernel by)
        raise NotImplementedError("There were no tensor arguments to this function (e.g., you passed an empty list "
                                  "of Tensors), but no fallback function is registered for schema "
                                  "c10d::allreduce_coalesced_.  This usually means that this function requires a "
                                  "non-empty list of Tensors")
    flat = xp.concatenate([t._data.reshape(-1) for t in tensors])
    with Agreement(pg, "all_reduce_coalesced", op) as agree:
        _check_op("all_reduce_coalesced", op, tensors[0])
        for i, t in enumerate(tensors):
            check_tensor("all_reduce_coalesced", f"tensors[{i}]", t, any_strides=True)
        agree.array = flat

    def copy_back():
        start = 0
        for t in tensors:
            t._data[...] = flat[start:start + t._data.size].reshape(t._data.shape)
            start += t._data.size

    work = _finish(pg.comm.iallreduce_(flat, op), True, tensors, copy_back)
    if async_op:
        return work.get_future()
    work.wait()
    return None


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank (any strides)."""
    if (pg := _member(group, "broadcast")) is None:
        return None
    with Agreement(pg, "broadcast") as agree:
        agree.root = _root(pg, src, group_src, "src", "broadcast")
        check_tensor("broadcast", "tensor", tensor, any_strides=True)
        agree.array, copy_back = _staged(tensor)
    return _finish(pg.comm.ibroadcast_(agree.array, agree.root), async_op, [tensor], copy_back)


def reduce(tensor: Tensor, dst: int | None = None, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into ``tensor`` of rank ``dst``; other ranks' tensors are unchanged (any
    strides)."""
    if (pg := _member(group, "reduce")) is None:
        return None
    with Agreement(pg, "reduce", op) as agree:
        _check_op("reduce", op, tensor)
        agree.root = _root(pg, dst, group_dst, "dst", "reduce")
        check_tensor("reduce", "tensor", tensor, any_strides=True)
        agree.array, copy_back = _staged(tensor)
    written = [tensor] if pg.rank() == agree.root else []
    return _finish(pg.comm.ireduce_(agree.array, op, agree.root), async_op, written, copy_back if written else None)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[i]`` receives rank i's ``tensor``, on every rank."""
    if (pg := _member(group, "all_gather")) is None:
        return None
    with Agreement(pg, "all_gather") as agree:
        check_tensor("all_gather", "tensor", tensor)
        _check_list("all_gather", "tensor_list", tensor_list, tensor, pg.size())
        agree.array = tensor._data
    buffer = xp.empty((pg.size(),) + tensor._data.shape, dtype=tensor._data.dtype)
    work = pg.comm.iallgather(tensor._data, buffer)
    return _finish(work, async_op, list(tensor_list), _copy_rows(buffer, tensor_list))


def all_gather_single(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, in rank order, into ``output_tensor`` (concatenated or stacked); PyTorch
    2.13's name of ``all_gather_into_tensor``."""
    if (pg := _member(group, "all_gather_single")) is None:
        return None
    with Agreement(pg, "all_gather_single") as agree:
        check_tensor("all_gather_single", "input_tensor", input_tensor)
        check_tensor("all_gather_single", "output_tensor", output_tensor)
        _check_flat("all_gather_single", "output_tensor", output_tensor, input_tensor, pg.size())
        agree.array = input_tensor._data
    # Concatenated and stacked outputs have the same memory layout: gather straight into it.
    work = pg.comm.iallgather(input_tensor._data, output_tensor._data)
    return _finish(work, async_op, [output_tensor])


def _deprecated(name: str, replacement: str) -> None:
    from .. import _warnings

    _warnings.warn(f"`torch.distributed.{name}` is deprecated. Please use `torch.distributed.{replacement}` instead.",
                   FutureWarning)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """PyTorch's deprecated name of ``all_gather_single`` (it warns, FutureWarning, as PyTorch 2.13's does)."""
    _deprecated("all_gather_into_tensor", "all_gather_single")
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def _all_gather_base(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                     async_op: bool = False) -> Work | None:
    """PyTorch's private, deprecated name of ``all_gather_single`` (it warns, FutureWarning, as PyTorch's)."""
    from .. import _warnings

    _warnings.warn("`torch.distributed._all_gather_base` is a private function and will be deprecated. Please use "
                   "`torch.distributed.all_gather_single` instead.", FutureWarning)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_single(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` (``size`` blocks, concatenated or stacked) over the group; rank i gets block i. PyTorch
    2.13's name of ``reduce_scatter_tensor``."""
    if (pg := _member(group, "reduce_scatter_single")) is None:
        return None
    with Agreement(pg, "reduce_scatter_single", op) as agree:
        _check_op("reduce_scatter_single", op, output)
        check_tensor("reduce_scatter_single", "output", output)
        check_tensor("reduce_scatter_single", "input", input)
        _check_flat("reduce_scatter_single", "input", input, output, pg.size())
        agree.array = output._data
    return _finish(pg.comm.ireduce_scatter(input._data, output._data, op), async_op, [output])


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """PyTorch's deprecated name of ``reduce_scatter_single`` (it warns, FutureWarning, as PyTorch 2.13's does)."""
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(output, input, op, group, async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: ReduceOp = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` over the group into ``output`` of rank i."""
    if (pg := _member(group, "reduce_scatter")) is None:
        return None
    with Agreement(pg, "reduce_scatter", op) as agree:
        _check_op("reduce_scatter", op, output)
        check_tensor("reduce_scatter", "output", output)
        _check_list("reduce_scatter", "input_list", input_list, output, pg.size())
        agree.array = output._data
    send = xp.stack([t._data for t in input_list])
    return _finish(pg.comm.ireduce_scatter(send, output._data, op), async_op, [output])


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """``gather_list[i]`` on rank ``dst`` receives rank i's ``tensor``; give ``gather_list`` on ``dst`` only."""
    if (pg := _member(group, "gather")) is None:
        return None
    root, is_root = _agree_rooted(pg, "gather", dst, group_dst, "dst", tensor, gather_list, "gather_list")
    buffer = xp.empty((pg.size(),) + tensor._data.shape, dtype=tensor._data.dtype) if is_root else None
    outputs = list(gather_list) if is_root else []
    work = pg.comm.igather(tensor._data, buffer, root)
    return _finish(work, async_op, outputs, _copy_rows(buffer, outputs) if is_root else None)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Rank i's ``tensor`` receives ``scatter_list[i]`` of rank ``src``; give ``scatter_list`` on ``src`` only."""
    if (pg := _member(group, "scatter")) is None:
        return None
    root, is_root = _agree_rooted(pg, "scatter", src, group_src, "src", tensor, scatter_list, "scatter_list")
    send = xp.stack([t._data for t in scatter_list]) if is_root else None
    return _finish(pg.comm.iscatter(send, tensor._data, root), async_op, [tensor])


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """``output_tensor_list[j]`` on rank i receives ``input_tensor_list[i]`` of rank j.

    As PyTorch's, the tensors may differ in shape: each output takes the elements of the input it receives (the
    same number, checked across the ranks by one small exchange of the counts before the data moves, in one MPI
    Alltoallv); every tensor of every rank has one dtype.
    """
    if (pg := _member(group, "all_to_all")) is None:
        return None
    n = pg.size()
    with Agreement(pg, "all_to_all") as agree:
        if not isinstance(input_tensor_list, (list, tuple)) or not input_tensor_list:
            raise ValueError(f"all_to_all: input_tensor_list must be a list of {n} tensors")
        like = input_tensor_list[0]
        check_tensor("all_to_all", "input_tensor_list[0]", like)
        _check_list("all_to_all", "input_tensor_list", input_tensor_list, like, n, any_shape=True)
        _check_list("all_to_all", "output_tensor_list", output_tensor_list, like, n, any_shape=True)
        agree.array = xp.empty(0, like._data.dtype)  # (the ranks agree on the dtype; the counts are checked next)
    sends = [t._data.size for t in input_tensor_list]
    recvs = [t._data.size for t in output_tensor_list]
    _check_counts(pg, sends, recvs)
    send = xp.concatenate([t._data.reshape(-1) for t in input_tensor_list])
    buffer = xp.empty(sum(recvs), dtype=send.dtype)

    def copy_out():
        for t, start, count in zip(output_tensor_list, _starts(recvs), recvs):
            t._data[...] = buffer[start:start + count].reshape(t._data.shape)
    return _finish(pg.comm.ialltoallv(send, sends, buffer, recvs), async_op, list(output_tensor_list), copy_out)


def _check_counts(pg: ProcessGroup, sends: list[int], recvs: list[int]) -> None:
    """Each rank's count of elements for peer j against j's count for it, both ways (a small all_to_all of the
    counts); a mismatch is a ValueError on the two ranks concerned and an error on every other rank."""
    mine = xp.asarray([sends, recvs], dtype=xp.int64).T.copy()  # row j: what I send j, what I expect from j
    theirs = xp.empty_like(mine)
    pg.comm.ialltoall(mine, theirs).wait()
    with Agreement(pg, "all_to_all") as agree:
        for peer, (sent, expected) in enumerate(theirs.tolist()):
            if sent != recvs[peer] or expected != sends[peer]:
                raise ValueError(f"all_to_all: output_tensor_list[{peer}] holds {recvs[peer]} elements and "
                                 f"input_tensor_list[{peer}] {sends[peer]}, but rank {pg.ranks[peer]} sends {sent} "
                                 f"and expects {expected}")
        agree.array = xp.empty(0, xp.int64)


def _split_sizes(op: str, name: str, tensor: Tensor, sizes, parts: int) -> list[int]:
    """The dim-0 block sizes of ``tensor``: ``sizes`` checked, or ``parts`` equal blocks when it is None."""
    rows = tensor._data.shape[0] if tensor._data.ndim else 0
    if sizes is None:
        if tensor._data.ndim == 0 or rows % parts:
            raise ValueError(f"{op}: {name} of shape {tuple(tensor._data.shape)} does not split into {parts} equal "
                             "blocks along dim 0; give its split sizes")
        return [rows // parts] * parts
    sizes = [int(s) for s in sizes]
    if len(sizes) != parts or any(s < 0 for s in sizes) or sum(sizes) != rows:
        raise ValueError(f"{op}: {name} split sizes {sizes} must be {parts} non-negative sizes adding up to its "
                         f"dim 0 ({rows})")
    return sizes


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Block ``j`` of ``input`` (split along dim 0 by ``input_split_sizes``, or in equal blocks) on rank ``i``
    goes to block ``i`` of ``output`` (split by ``output_split_sizes``) on rank ``j``.

    Blocks of unequal sizes travel padded to the largest block of any rank (one extra small all-reduce).
    """
    if (pg := _member(group, "all_to_all_single")) is None:
        return None
    n = pg.size()
    with Agreement(pg, "all_to_all_single"):
        check_tensor("all_to_all_single", "input", input)
        check_tensor("all_to_all_single", "output", output)
        if output._data.dtype != input._data.dtype or output._data.shape[1:] != input._data.shape[1:]:
            raise ValueError(f"all_to_all_single: output ({output.dtype}, {tuple(output.shape)}) and input "
                             f"({input.dtype}, {tuple(input.shape)}) must share dtype and the sizes past dim 0")
        ins = _split_sizes("all_to_all_single", "input", input, input_split_sizes, n)
        outs = _split_sizes("all_to_all_single", "output", output, output_split_sizes, n)
    block = xp.asarray([max(ins + outs)], dtype=xp.int64)
    pg.comm.iallreduce_(block, ReduceOp.MAX).wait()
    rest = input._data.shape[1:]
    send = xp.zeros((n, int(block[0])) + rest, dtype=input._data.dtype)
    for j, start in enumerate(_starts(ins)):
        send[j, :ins[j]] = input._data[start:start + ins[j]]
    buffer = xp.empty_like(send)

    def copy_out():
        for i, start in enumerate(_starts(outs)):
            output._data[start:start + outs[i]] = buffer[i, :outs[i]]
    return _finish(pg.comm.ialltoall(send, buffer), async_op, [output], copy_out)


def _starts(sizes: list[int]) -> list[int]:
    return [sum(sizes[:i]) for i in range(len(sizes))]


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None) -> Work | None:
    """Wait until every rank of the group has reached the barrier."""
    if (pg := _member(group, "barrier")) is None:
        return None
    with Agreement(pg, "barrier"):
        pass
    return _finish(pg.comm.ibarrier(), async_op, [])
