"""One FSDP unit's parameters: their shard, the all-gather before use, the reduce-scatter of their gradient.

    FlatParamHandle(entries, shard_group, replicate_group, layout=FlatLayout | RowLayout, ...)
      at construction: every rank cuts its (identical) parameters into shards and keeps its own
      (``shard``, ``k`` elements); the parameters' own memory is released.
      pre_forward():  all-gather the shards -> ``full_arr``; one leaf tensor ``full`` over it, split into
                      views shaped like the parameters and set as the modules' attributes
      post_forward(): the modules' parameters back; with ``reshard_after_forward`` the gathered array is
                      freed now (saved-tensor hooks kept only a recipe for the views backward needs,
                      ``_pack``), and backward gathers it again when it first needs it (``_unpack``)
      backward:       ``full``'s post-accumulate-grad hook has the unit's whole gradient: cast to the
                      reduce dtype, reduce-scatter over the shard group (then all-reduce over the
                      replicate group), divided by the number of ranks -> this rank's shard of the
                      averaged gradient, added into the optimizer's ``.grad``; the gathered array freed
      no_sync:        the full gradient is kept (added up) instead, and reduced with the next synced one

All ranks reach the collectives in the same order: forward runs the units in program order and
backward in the engine's order, which is the same on every rank for the same graph.
"""

from __future__ import annotations

import math

from ..._backend import xp
from ..._dtype import to_np
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import _GradState
from ...autograd.saved_hooks import saved_tensors_hooks
from ..reduce_op import ReduceOp

# Gathered arrays alive now, by id: what the pack hook recognises.
_LIVE: dict[int, FlatParamHandle] = {}
# The memory of gathered parameters (bytes) alive now and at most, on this rank (what tests and users measure).
memory = {"unsharded_bytes": 0, "peak_unsharded_bytes": 0}
_MPI_FLOATS = (xp.dtype(xp.float32), xp.dtype(xp.float64))


class _Saved:
    """What backward keeps instead of a saved view of a freed gathered array: where the view lies in it."""

    __slots__ = ("handle", "offset", "shape", "strides")

    def __init__(self, handle: FlatParamHandle, offset: int, shape: tuple, strides: tuple) -> None:
        self.handle, self.offset, self.shape, self.strides = handle, offset, shape, strides


def _owner(a):
    """The array that owns ``a``'s memory (NumPy points every view at it)."""
    return a if a.base is None else a.base


def _pack(t: Tensor):
    a = t._data
    handle = _LIVE.get(id(_owner(a)))
    if handle is None or _owner(handle.full_arr) is not _owner(a) or not handle.reshard_after_forward:
        return t
    offset = a.__array_interface__["data"][0] - handle.full_arr.__array_interface__["data"][0]
    return _Saved(handle, offset, a.shape, a.strides)


def _unpack(saved):
    if type(saved) is not _Saved:
        return saved
    h = saved.handle
    h.unshard()
    return Tensor._make(xp.ndarray(saved.shape, h.full_arr.dtype, buffer=h.full_arr, offset=saved.offset,
                                   strides=saved.strides))


def low_precision_reduce(comm, send, recv_dtype, op: str):
    """Reduce-scatter (``op="scatter"``, ``send`` of shape (world, k)) or all-reduce (``op="all"``) ``send``.

    MPI sums float32 and float64 only: other floating dtypes are widened to float32 for the sum and the
    result rounded back to their dtype.
    """
    wide = send if send.dtype in _MPI_FLOATS else send.astype(xp.float32)
    if op == "scatter":
        out = xp.empty(wide.shape[1:], dtype=wide.dtype)
        comm.ireduce_scatter(xp.ascontiguousarray(wide), out, ReduceOp.SUM).wait()
    else:
        out = xp.ascontiguousarray(wide)
        comm.allreduce_(out, ReduceOp.SUM)
    return out.astype(recv_dtype, copy=False)


class _Unflatten(Function):
    """The full flat tensor as views shaped like the parameters; backward concatenates their gradients into one
    flat gradient (one array, where a split per parameter would build a full-size one for each)."""

    @staticmethod
    def forward(ctx, full: Tensor, sizes: list, shapes: list):
        ctx.sizes, ctx.dtype = sizes, full._data.dtype
        offsets = [0]
        for n in sizes:
            offsets.append(offsets[-1] + n)
        return tuple(Tensor._make(full._data[lo:lo + math.prod(shape)].reshape(shape))
                     for lo, shape in zip(offsets, shapes))

    @staticmethod
    def backward(ctx, *grads):
        pieces = [g._data.reshape(-1) if g is not None else xp.zeros(n, dtype=ctx.dtype)
                  for g, n in zip(list(grads) + [None] * (len(ctx.sizes) - len(grads)), ctx.sizes)]
        return Tensor._make(xp.concatenate(pieces)), None, None


class FlatParamHandle:
    """The shard of one unit's parameters and its communication (see the module docstring).

    Args:
        entries: ``(module, attribute name, Parameter)`` for every parameter of the unit (one dtype); a
            parameter shared by several modules (tied weights) is listed at each, and sharded once.
        shard_group, replicate_group: ``ProcessGroup``s (None: not sharded / not replicated).
        layout: ``FlatLayout`` or ``RowLayout`` class.
        orig_params: keep the original Parameter objects, their data a view of this rank's part of the
            shard (``use_orig_params=True``, ``fully_shard``); else one flat Parameter, ``flat_param``.
        reshard_after_forward: free the gathered parameters after forward (gathered again in backward).
        param_dtype, reduce_dtype: mixed precision (None: the parameters' dtype).
    """

    def __init__(self, entries: list, shard_group, replicate_group, layout, *, orig_params: bool,
                 reshard_after_forward: bool, param_dtype=None, reduce_dtype=None) -> None:
        from ...nn.parameter import Parameter

        index: dict[int, int] = {}
        self.aliases = []  # (module, name, index into entries) of every occurrence, shared ones included
        unique = []
        for module, name, p in entries:
            if id(p) not in index:
                index[id(p)] = len(unique)
                unique.append((module, name, p))
            self.aliases.append((module, name, index[id(p)]))
        entries = unique
        dtypes = {p._data.dtype for _, _, p in entries}
        if len(dtypes) > 1:
            raise ValueError(f"FSDP: a unit's parameters must share one dtype to be flattened, got "
                             f"{sorted(str(d) for d in dtypes)}; wrap the modules of each dtype separately")
        grads = {p.requires_grad for _, _, p in entries}
        if len(grads) > 1 and not orig_params:
            raise ValueError("FSDP: a unit's parameters must all require grad or none of them (flattened into "
                             "one FlatParameter); pass use_orig_params=True to mix them")
        self.entries = entries
        self.shard_comm = shard_group.comm if shard_group is not None and shard_group.size() > 1 else None
        self.replicate_comm = (replicate_group.comm if replicate_group is not None and replicate_group.size() > 1
                               else None)
        world = self.shard_comm.size if self.shard_comm is not None else 1
        rank = self.shard_comm.rank if self.shard_comm is not None else 0
        self.ranks = world * (self.replicate_comm.size if self.replicate_comm is not None else 1)
        self.layout = layout([tuple(p._data.shape) for _, _, p in entries], world, rank)
        self.dtype = next(iter(dtypes))
        self.compute_dtype = xp.dtype(to_np(param_dtype)) if param_dtype is not None else self.dtype
        self.reduce_dtype = xp.dtype(to_np(reduce_dtype)) if reduce_dtype is not None else self.compute_dtype
        self.orig_params = orig_params
        self.reshard_after_forward = reshard_after_forward
        self.requires_grad = True in grads
        self.shard = xp.ascontiguousarray(self.layout.to_shards([p._data for _, _, p in entries], self.dtype)[rank])
        self.params = [p for _, _, p in entries]
        self.flat_param = None
        self.flat_holder = None  # the module the flat Parameter is registered on (FSDP sets it)
        if orig_params:
            for i, p in enumerate(self.params):
                p._data = self.layout.local_view(self.shard, i)
                p.grad = None
                p._bump_version()
        else:
            self.flat_param = Parameter(Tensor._make(self.shard), requires_grad=self.requires_grad)
        self.restore_params()  # the modules hold the sharded parameters from now on
        self.full_arr = None  # the gathered parameters (compute dtype) while unsharded
        self.full = None  # the leaf over full_arr this iteration's graph accumulates into
        self.views: list[Tensor] = []  # the parameter-shaped views of it given to the modules
        self.pending_grad = None  # the full gradient kept by no_sync
        self.require_sync = True
        self.in_forward = False

    # ------------------------------------------------------------------ gathering
    def gather_storage(self, shard=None):
        """Every rank's ``shard`` (default: the parameters' shard) put together, laid out like the full
        parameters, flat, in the shard's dtype (a new array)."""
        shard = self.shard if shard is None else xp.ascontiguousarray(shard)
        if self.shard_comm is None:
            return self.layout.full_from_gathered(shard.reshape(1, -1).copy())
        gathered = xp.empty((self.shard_comm.size, self.layout.k), dtype=shard.dtype)
        self.shard_comm.allgather(shard, gathered)
        return self.layout.full_from_gathered(gathered)

    def write_back(self, full) -> None:
        """Set this rank's shard from ``full`` (laid out as ``gather_storage`` returns it)."""
        arrays = [self.layout.full_view(full, i) for i in range(len(self.entries))]
        self.shard[...] = self.layout.to_shards(arrays, self.dtype)[self.layout.rank]
        for p in self.params + ([self.flat_param] if self.flat_param is not None else []):
            p._bump_version()

    def unshard(self) -> None:
        """Gather the parameters (a no-op while they are gathered)."""
        if self.full_arr is not None:
            return
        if self.shard_comm is None and self.compute_dtype == self.dtype:
            full = self.layout.full_from_gathered(self.shard.reshape(1, -1))  # NO_SHARD: the shard itself
        else:
            full = self.gather_storage().astype(self.compute_dtype, copy=False)
        self.full_arr = full
        _LIVE[id(_owner(full))] = self
        if not self._gathered_is_shard():  # (an unsharded flat unit's are its shard: no memory of their own)
            memory["unsharded_bytes"] += full.nbytes
            memory["peak_unsharded_bytes"] = max(memory["peak_unsharded_bytes"], memory["unsharded_bytes"])
        if self.full is not None:  # backward gathers again what forward freed
            self.full._data = full

    def _gathered_is_shard(self) -> bool:
        """Whether the gathered parameters are the shard's own memory (an unsharded flat unit: nothing to free)."""
        return self.full_arr is not None and _owner(self.full_arr) is _owner(self.shard)

    def free(self) -> None:
        """Drop the gathered parameters (unless they are the shard itself)."""
        if self.full_arr is None or self._gathered_is_shard():
            return
        _LIVE.pop(id(_owner(self.full_arr)), None)
        memory["unsharded_bytes"] -= self.full_arr.nbytes
        # The graph's leaf and the views given to the modules keep their shapes, not the memory: a node may hold
        # its inputs besides what it saves (for a rerun under create_graph, which FSDP does not support).
        for t in ([self.full] if self.full is not None else []) + self.views:
            t._data = xp.broadcast_to(xp.zeros((), dtype=t._data.dtype), t._data.shape)
        self.views = []
        self.full_arr = None

    # ------------------------------------------------------------------ forward
    def pre_forward(self):
        """Gather and put the full parameters in the modules; returns the saved-tensor hooks to run forward under."""
        self.unshard()
        self.in_forward = True
        grad = _GradState.enabled and self.requires_grad
        if self.full is None:
            self.full = Tensor._make(self.full_arr)
            if grad:
                self.full.requires_grad_(True)
                self.full.register_post_accumulate_grad_hook(self._on_grad)
        views = _Unflatten.apply(self.full, self.layout.split_sizes(), self.layout.shapes)
        views = [v if p.requires_grad else v.detach() for v, p in zip(views, self.params)]
        if not self._gathered_is_shard():
            self.views += views
        for module, name, i in self.aliases:
            module._parameters.pop(name, None)
            module.__dict__[name] = views[i]
        if grad and self.reshard_after_forward:
            return saved_tensors_hooks(_pack, _unpack)
        return None

    def post_forward(self, reshard: bool) -> None:
        """The modules' parameters back; free the gathered ones if ``reshard`` (or no backward will follow)."""
        self.restore_params()
        self.in_forward = False
        if self.full is not None and not self.full.requires_grad:
            self.full = None
        if reshard or self.full is None:
            self.free()

    def restore_params(self) -> None:
        """The modules' parameters as they are between forwards: the original Parameters (views of the shard),
        or (flat) each attribute this rank's 1-D part of it, detached, so that ``module.bias is None`` and
        ``repr`` still work; only the flat Parameter is registered."""
        for module, name, i in self.aliases:
            module.__dict__.pop(name, None)
            if self.orig_params:
                module._parameters[name] = self.params[i]
            else:
                module._parameters.pop(name, None)
                module.__dict__[name] = Tensor._make(self.layout.local_view(self.shard, i))

    # ------------------------------------------------------------------ backward
    def _on_grad(self, leaf: Tensor) -> None:
        if leaf._grad is None:  # reached without a gradient (below a custom Function's None): nothing to reduce
            return
        grad = leaf._grad._data
        leaf.grad = None
        if not self.require_sync:
            kept = grad.astype(self.dtype)
            self.pending_grad = kept if self.pending_grad is None else self.pending_grad + kept
        else:
            if self.pending_grad is not None:
                grad = grad + self.pending_grad.astype(grad.dtype)
                self.pending_grad = None
            self._reduce(grad)
        self.full = None
        self.free()

    def _reduce(self, grad) -> None:
        send = self.layout.scatter_input(grad.astype(self.reduce_dtype, copy=False))
        if self.shard_comm is not None:
            shard_grad = low_precision_reduce(self.shard_comm, send, self.reduce_dtype, "scatter")
        else:
            shard_grad = xp.array(send[0])
        if self.replicate_comm is not None:
            shard_grad = low_precision_reduce(self.replicate_comm, shard_grad, self.reduce_dtype, "all")
        shard_grad = (shard_grad / xp.asarray(self.ranks, dtype=shard_grad.dtype)).astype(self.dtype, copy=False)
        if self.flat_param is not None:
            _add_grad(self.flat_param, shard_grad)
        else:
            for i, p in enumerate(self.params):
                if p.requires_grad:
                    _add_grad(p, self.layout.local_view(shard_grad, i))

    def finish_backward(self) -> None:
        """End of backward: a unit whose parameters got no gradient lets its gathered parameters go."""
        if not self.in_forward:
            self.full = None
            self.free()

    # ------------------------------------------------------------------ for the optimizer and clipping
    def sharded_params(self) -> list:
        """What the optimizer steps: the flat Parameter, or the original ones (views of the shard)."""
        return [self.flat_param] if self.flat_param is not None else list(self.params)



def _add_grad(p: Tensor, g) -> None:
    if p._grad is None:
        p.grad = Tensor._make(xp.array(g, dtype=p._data.dtype))
    else:
        p._grad._data += g
        p._grad._bump_version()
