"""``DistributedDataParallel``: data-parallel training where ``loss.backward()`` all-reduces gradients.

The contract (as PyTorch's):

- every rank builds the same model and wraps it; the constructor is a
  synchronisation point: it checks that every rank has the same parameters
  (names, shapes, dtypes) and copies rank 0's parameters and buffers to all;
- ``forward`` runs the wrapped module and, when a synchronised backward will
  follow (grad mode on, outside ``no_sync()``), arms the reducer (the first grad-mode
  forward and each one after a synchronised forward first copy rank 0's buffers to
  every rank); the following ``loss.backward()`` fires a hook per parameter as its
  gradient lands, and each complete bucket starts a
  nonblocking all-reduce that later hooks progress while backward goes on (no
  communication thread; see ``ember/distributed/reducer.py``); when backward
  returns, every ``.grad`` holds the same global gradient on every rank;
- ``optimizer.step()`` then takes the same step on every rank, so replicas stay
  identical. Parameters are never broadcast again after construction.

Differences from PyTorch:

- gradients are *averaged* over ranks by default, as PyTorch's DDP does;
  ``grad_reduction="sum"`` (an ember extension) sums instead. With the mean,
  the learning rate that suits one process on the *per-rank* batch B suits N
  ranks on the global batch N·B, exactly as if one process had trained on N·B
  samples with a mean loss; with the sum, gradients are N times larger, so
  divide the learning rate by N for the same step.
- a parameter that got no gradient is reported by name at the end of that
  backward (PyTorch reports it, cryptically, at the next forward).
- the PyTorch arguments in ``IGNORED_ARGUMENTS`` are accepted and have no
  effect (each with its reason); those in ``UNSUPPORTED_ARGUMENTS`` raise
  NotImplementedError when given.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from contextlib import contextmanager

from ... import _trace, _warnings
from ... import distributed as dist
from ..._backend import xp
from ...autograd.grad_mode import _GradState
from ...distributed.reducer import Reducer
from ..modules.module import Module
from ..modules.sparse import Embedding

# PyTorch's arguments that ember accepts and does not act on, and why.
IGNORED_ARGUMENTS = {
    "device_ids": "CPU only: None or empty, as PyTorch requires for a CPU module (others raise ValueError)",
    "output_device": "CPU only: None (or 0), as PyTorch requires for a CPU module",
    "dim": "one process per replica: inputs are never scattered over devices",
    "check_reduction": "deprecated and without effect in PyTorch too",
    "skip_all_reduce_unused_params": "unused parameters are an error, or (find_unused_parameters) left untouched when "
                                     "no rank used them",
    "batched_grad_copy": "gradients are reduced in place in the optimizer's flat buffer when they lie there",
}
# PyTorch's arguments that raise NotImplementedError when given (other than their default).
UNSUPPORTED_ARGUMENTS = ("delay_all_reduce_named_params", "param_to_hook_all_reduce", "mixed_precision",
                         "device_mesh", "bucket_cap_mb_list")


class DistributedDataParallel(Module):
    """Wrap ``module`` so that backward averages its gradients over all ranks.

    Args:
        module: the model (identical architecture on every rank).
        device_ids, output_device: None (CPU only): as PyTorch for a CPU module, others raise ValueError.
        bucket_cap_mb: bucket size in MiB (default 25; the first bucket is at most 1 MiB).
        broadcast_buffers: copy rank 0's buffers (e.g. BatchNorm statistics) to every rank at
            construction and at the start of the first grad-mode forward and of each grad-mode forward that
            follows a synchronised one (grad mode on, outside ``no_sync()``), as PyTorch does (default True;
            PyTorch also copies at a ``no_grad()`` forward, ember leaves that one local).
        forward_sync_buffers: when given, whether forwards copy the buffers (construction always does).
        find_unused_parameters: allow parameters that get no gradient in an iteration (default False:
            such a parameter is an error naming it). As in PyTorch, one that no rank used since the last
            synchronised backward (``no_sync()`` backwards count) keeps its ``.grad`` as it was (None stays
            None); one that some rank used is averaged, the others contributing their ``.grad`` or zeros.
        gradient_as_bucket_view: let ``.grad`` be views into the bucket buffers (saves a copy
            per parameter and step; default False).
        static_graph: as in PyTorch, the graph is the same every iteration: the first synchronised
            backward finds the parameters it does not use (as ``find_unused_parameters`` does, with one
            extra small all-reduce); later backwards trust that and communicate only the gradients (and
            the lockstep table). Parameters no rank used keep their ``.grad``; one that some rank used is
            averaged. A backward that uses a parameter the first did not, or misses one it used, raises
            PyTorch's "Your training graph has changed in this iteration" on every rank (PyTorch raises
            it on the ranks concerned, and for a missed one only at the next forward).
        process_group: the group to reduce over (default: the world).
        grad_reduction: ``"mean"`` (default, PyTorch's behaviour) or ``"sum"`` (ember extension).
        nonfinite_grads: what to do when any rank's gradients hold NaN or inf (ember extension):
            ``"skip"`` (default) — every rank learns it in the same backward and leaves all
            ``.grad`` None, so ``optimizer.step()`` skips the update on every rank together
            (a warning names the ranks and the iteration); ``"raise"``; or ``"off"``.

    Lockstep safety (ember extension): behind the last bucket, every backward all-reduces a
    small table of each rank's iteration number, bucket count and bucket layout, so a rank
    that skipped a backward or ran a different number of batches is named at the end of the
    first mismatched backward, on every rank; a rank that stops taking part is reported
    within the process group's timeout.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool | None = None, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params: bool = False, bucket_cap_mb_list=None,
                 batched_grad_copy: bool = False, forward_sync_buffers: bool | None = None, *,
                 grad_reduction: str = "mean", nonfinite_grads: str = "skip", replica_check_interval: int = 0) -> None:
        super().__init__()
        given = locals()
        for name in UNSUPPORTED_ARGUMENTS:
            if given[name] is not None:
                raise NotImplementedError(f"DistributedDataParallel({name}=...) is not supported by ember")
        if not init_sync:
            raise NotImplementedError("DistributedDataParallel(init_sync=False) is not supported by ember: "
                                      "replicas always start from rank 0's parameters")
        if broadcast_buffers is not None:  # (PyTorch 2.13's deprecation, its words)
            _warnings.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` "
                           "is deprecated and its value is ignored when `forward_sync_buffers` is provided."
                           if forward_sync_buffers is not None else
                           "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                           "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If "
                           "you rely on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                           "`broadcast_buffers=False` until `init_sync_buffers` is available.", FutureWarning)
        init_sync_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        if forward_sync_buffers is not None:
            broadcast_buffers, init_sync_buffers = bool(forward_sync_buffers), True
        broadcast_buffers = init_sync_buffers if forward_sync_buffers is None else broadcast_buffers
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an ember.nn.Module, got {type(module).__name__}")
        if device_ids or output_device:  # PyTorch's test for a CPU module (so output_device=0 passes, as there)
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with single-device/"
                f"multiple-device GPU modules, but got device_ids {device_ids}, output_device {output_device}, and "
                "a module on the CPU: ember runs on the CPU (as PyTorch does for a CPU module, pass device_ids=None; "
                "the `device_ids=[local_rank]` of a GPU script otherwise fails on every rank)")
        sparse = [f"{m}.weight" if m else "weight" for m, sub in module.named_modules()
                  if isinstance(sub, Embedding) and sub.sparse]
        if sparse:  # the same modules on every rank: every rank refuses here, before any communication
            raise RuntimeError(f"DistributedDataParallel: {', '.join(sparse)} would get sparse gradients "
                               "(sparse=True), which ember's DistributedDataParallel does not all-reduce "
                               "(PyTorch all-gathers them); use sparse=False")
        group = dist.process_group.resolve(process_group, "DistributedDataParallel")
        self.module = module
        self.process_group = group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self._bucket_cap_bytes = int((25.0 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True  # whether the next grad-mode forward copies rank 0's buffers
        self.replica_check_interval = replica_check_interval
        self._forwards = 0
        self._joining = False
        self._divide_by_initial_world_size = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._comm = group.comm
        self._check_same_parameters(named)
        self._copied_buffers = self._buffer_versions()  # the buffers as the last copy from rank 0 left them
        self._sync_module_state(init_sync_buffers)
        self.reducer = Reducer(
            [p for _, p in named], [n for n, _ in named],
            dist.comm.world(self._comm.timeout) if group is dist.group.WORLD else self._comm,
            bucket_cap_mb=25.0 if bucket_cap_mb is None else bucket_cap_mb,
            find_unused_parameters=find_unused_parameters, static_graph=static_graph,
            gradient_as_bucket_view=gradient_as_bucket_view,
            grad_reduction=grad_reduction, nonfinite_grads=nonfinite_grads)

    # ------------------------------------------------------------------ construction checks
    def _check_same_parameters(self, named) -> None:
        """Every rank must hold the same parameters; otherwise name the first difference and the rank."""
        mine = [(n, list(p.shape), str(p.dtype)) for n, p in named]
        everyone = [[(n, tuple(s), d) for n, s, d in theirs] for theirs in _allgather_json(self._comm, mine)]
        reference = everyone[0]
        for rank, theirs in enumerate(everyone):
            if theirs == reference:
                continue
            if len(theirs) != len(reference):
                raise RuntimeError(
                    f"DistributedDataParallel: rank {rank} has {len(theirs)} parameters but rank 0 has "
                    f"{len(reference)}; every rank must wrap the same model"
                )
            for (n0, s0, d0), (n1, s1, d1) in zip(reference, theirs):
                if (n0, s0, d0) != (n1, s1, d1):
                    raise RuntimeError(
                        f"DistributedDataParallel: parameter '{n1}' on rank {rank} has shape {list(s1)} and "
                        f"dtype {d1}, but rank 0 has '{n0}' with shape {list(s0)} and dtype {d0}; every rank "
                        "must wrap the same model"
                    )

    def _sync_module_state(self, buffers: bool, root: int = 0) -> None:
        """Copy rank ``root``'s parameters (and buffers) to every rank, in one broadcast."""
        from ...distributed.utils import _sync_module_states

        _sync_module_states(self.module, self.process_group, 0, root, (), broadcast_buffers=buffers)
        if buffers:
            self._copied_buffers = self._buffer_versions()

    def _sync_buffers(self, root: int = 0) -> None:
        """Copy rank ``root``'s buffers to every rank (0; inside ``join()``, the highest rank still training)."""
        started = _trace.start()
        broadcast_from_rank0(self._comm, [b for b in self.module.buffers() if b is not None], root)
        self._copied_buffers = self._buffer_versions()
        _trace.finish("broadcast buffers", "ddp", started)

    def _buffer_versions(self) -> list:
        """Which tensor each buffer is and its version: a buffer changed in place (a BatchNorm's
        ``num_batches_tracked`` in a training forward) or replaced has a different entry."""
        return [(id(b), b._version) for b in self.module.buffers() if b is not None]

    # ------------------------------------------------------------------ training
    def forward(self, *inputs, **kwargs):
        # As in PyTorch, a forward inside no_sync() copies no buffers after the first of its cycle, and a no_grad()
        # forward copies them only as said below (an evaluation on rank 0 alone stays local).
        grad_mode = _GradState.enabled
        if grad_mode:  # before any collective of this forward (its buffer broadcast would meet another's all-reduce)
            self.reducer.ensure_prior_reduction_finished()
        will_sync = grad_mode and self.require_backward_grad_sync
        root = 0  # whose buffers every rank takes
        # PyTorch copies rank 0's buffers at a forward that follows a synchronised one (or the first): with
        # gradient accumulation, the first no_sync() forward of each cycle, not the synchronised last one; and at a
        # no_grad forward that comes next (every rank evaluating through the wrapper then normalises with rank 0's
        # BatchNorm statistics), after which the next grad-mode forward does not copy. ember copies at that no_grad
        # forward only when a buffer changed since the last copy: buffers that none changed (a causal mask) are rank
        # 0's already, and the forward stays local, so an evaluation on rank 0 alone does not wait for the others
        copy_buffers = self.require_forward_param_sync and (
            grad_mode or (self.broadcast_buffers and not self._joining
                          and self._buffer_versions() != self._copied_buffers))
        if grad_mode or copy_buffers:
            self.require_forward_param_sync = will_sync
        if self._joining:  # (the ranks that ran out of data copy the buffers where these synchronise)
            active, _, root = self._join_round(1, will_sync)
            copy_buffers = will_sync
            if will_sync and not self._divide_by_initial_world_size:
                self.reducer.set_divisor(active)
        elif will_sync:  # (ranks that joined run fewer forwards: no periodic check inside join())
            self._forwards += 1
            if self.replica_check_interval and self._forwards % self.replica_check_interval == 0:
                self.check_replicas()
        if copy_buffers and self.broadcast_buffers:
            self._sync_buffers(root)
        if will_sync:
            self.reducer.prepare_for_backward()
        return self.module(*inputs, **kwargs)

    # ------------------------------------------------------------------ uneven inputs
    @contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False, main_hooks: Sequence[Callable[[], None]] = ()):
        """Let ranks with fewer batches finish early (PyTorch's ``Join`` for DDP).

        Inside the block every forward first counts the ranks still training. A rank whose
        loop has ended waits at the end of the block, taking part in the others' collectives
        with zero gradients, until every rank has left its loop. Gradients are divided by the
        initial world size (default) or by the number of ranks still training. As in PyTorch,
        forwards take the buffers of the highest rank still training (rank 0 may have stopped),
        and at the end of the block every rank takes the parameters (and, with
        ``broadcast_buffers``, the buffers) of the highest rank among those that ran out of data
        last: ranks that stopped early skipped the last optimizer steps.

        ``main_hooks`` (ember's, what ``Join`` passes on): the other joinables' part of each round this rank
        shadows, called after the shadowed backward, in order (a ZeroRedundancyOptimizer's ``step()``, which takes
        part in the others' broadcasts of the shards).
        """
        if not enable:
            yield
            return
        if throw_on_early_termination:
            raise NotImplementedError("join(throw_on_early_termination=True) is not supported by ember")
        self._joining, self._divide_by_initial_world_size = True, divide_by_initial_world_size
        last_joiner = True  # no other rank was still training when this one ran out of data
        try:
            yield
            while True:  # this rank is out of data: shadow the others until all are
                active, syncing, root = self._join_round(0, False)
                if active == 0:
                    break
                last_joiner = False
                if syncing:
                    if self.broadcast_buffers:
                        self._sync_buffers(root)
                    self.reducer.shadow_backward()
                for hook in main_hooks:
                    hook()
            authority = xp.array([self._comm.rank if last_joiner else -1], dtype=xp.int64)
            self._comm.allreduce_(authority, dist.ReduceOp.MAX)
            self._sync_module_state(self.broadcast_buffers, int(authority[0]))
        finally:
            self._joining = False
            self.reducer.reset_divisor()

    def _join_round(self, active: int, will_sync: bool) -> tuple[int, int, int]:
        """One round of ``join()``'s bookkeeping, one all-reduce: (ranks still training, ranks about to synchronise
        a backward, the highest rank still training, -1 when none)."""
        counts = xp.zeros(2 + self._comm.size, dtype=xp.int64)
        counts[0], counts[1], counts[2 + self._comm.rank] = active, int(will_sync), active
        self._comm.allreduce_(counts)
        training = xp.flatnonzero(counts[2:])
        return int(counts[0]), int(counts[1]), int(training[-1]) if training.size else -1

    # ------------------------------------------------------------------ replica checksums
    def check_replicas(self) -> None:
        """Compare every parameter across ranks (checksums); name the parameters and ranks that differ.

        Collective: every rank must call it. Raises RuntimeError when replicas diverged.
        """
        named = list(self.module.named_parameters())
        sums = xp.array([[xp.sum(p._data, dtype=xp.float64), xp.sum(xp.square(p._data, dtype=xp.float64))]
                         for _, p in named]).reshape(-1)
        table = xp.empty((self._comm.size, sums.size), dtype=xp.float64)
        self._comm.allgather(sums, table)
        table = table.reshape(self._comm.size, len(named), 2)
        diverged = []
        for i, (name, _) in enumerate(named):
            ranks = [r for r in range(self._comm.size) if not xp.array_equal(table[r, i], table[0, i])]
            if ranks:
                diverged.append(f"'{name}' differs from rank 0's on rank(s) {ranks}")
        if diverged:
            raise RuntimeError(
                "DistributedDataParallel: replicas diverged: " + "; ".join(diverged[:10])
                + ". Something changed parameters on some ranks only (an update outside optimizer.step(), "
                "a different optimizer or learning rate per rank, or a step taken on some ranks only)."
            )

    def _get_ddp_logging_data(self) -> dict[str, int | str]:
        """The wrapper's settings as PyTorch's DDP logs them (``_get_ddp_logging_data()``; libraries read it to
        advise on the settings). Difference from PyTorch: only the settings' keys, not its runtime statistics
        (timings, ``can_set_static_graph``), which ember's reducer does not collect."""
        named = [p for p in self.module.parameters() if p.requires_grad]
        return {"backend_name": self.process_group.backend, "module_name": type(self.module).__name__,
                "broadcast_buffers": int(self.broadcast_buffers), "bucket_cap_bytes": self._bucket_cap_bytes,
                "find_unused_parameters": int(self.find_unused_parameters),
                "gradient_as_bucket_view": int(self.gradient_as_bucket_view), "static_graph": int(self.static_graph),
                "is_multi_device_module": 0, "output_device": -1, "num_parameter_tensors": len(named),
                "total_parameter_size_bytes": sum(p.numel() * p.element_size() for p in named),
                "rank": self.process_group.rank(), "world_size": self.process_group.size()}

    @contextmanager
    def no_sync(self):
        """Accumulate gradients locally: backward inside this block communicates nothing.

        The first backward after the block (with a forward outside it) all-reduces the
        accumulated gradients.
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def register_comm_hook(self, state: object, hook) -> None:
        """Reduce gradient buckets with ``hook(state, bucket)`` instead of the default all-reduce-and-average.

        ``bucket`` is a ``GradBucket`` (``buffer()``, ``gradients()``, ``parameters()``, ``index()``,
        ``is_last()``, ``set_buffer()``) holding this rank's gradients, not yet divided by the world size; the
        hook returns a ``torch.futures.Future`` whose value is the reduced buffer. Built-in hooks live in
        ``ember.distributed.algorithms.ddp_comm_hooks`` (``default_hooks.allreduce_hook``,
        ``fp16_compress_hook``, ``bf16_compress_hook``, ``powerSGD_hook.powerSGD_hook``). Call it once, on every
        rank at the same point: before training or between iterations, as PyTorch allows (the next backward
        uses it). Lockstep safety is kept: the non-finite scan and the per-backward rank table run as without a
        hook.
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        try:
            arguments = len(inspect.signature(hook).parameters)
        except (TypeError, ValueError):
            arguments = 2
        if arguments != 2:
            raise ValueError("Communication hook must take two arguments (state, bucket); "
                             f"{getattr(hook, '__name__', hook)!r} takes {arguments}")
        self.reducer.register_comm_hook(state, hook)

    @property
    def bucket_sizes(self) -> list[int]:
        """Bytes in each gradient bucket, in launch order."""
        return self.reducer.bucket_sizes()

    def __del__(self) -> None:
        reducer = self.__dict__.get("reducer") if hasattr(self, "__dict__") else None
        if reducer is not None:
            reducer.close()


def broadcast_from_rank0(comm, tensors, root: int = 0) -> None:
    """Copy rank 0's (or rank ``root``'s) values of ``tensors`` into every rank's, in one broadcast over ``comm``
    (the bytes of all of them; FullyShardedDataParallel's ``sync_module_states`` uses it too)."""
    if comm.size == 1 or not tensors:
        return
    flat = xp.concatenate([xp.ascontiguousarray(t._data).reshape(-1).view(xp.uint8) for t in tensors])
    comm.broadcast_(flat, root)
    offset = 0
    for t in tensors:
        n = t._data.nbytes
        t._data[...] = flat[offset:offset + n].view(t._data.dtype).reshape(t._data.shape)
        t._bump_version()
        offset += n


def _allgather_json(comm, value) -> list:
    """Every rank's JSON-serialisable ``value``, in rank order (two bounded all-gathers, no pickle)."""
    payload = xp.frombuffer(json.dumps(value).encode(), dtype=xp.uint8)
    lengths = xp.empty(comm.size, dtype=xp.int64)
    comm.allgather(xp.array([payload.size], dtype=xp.int64), lengths)
    padded = xp.zeros(int(lengths.max()), dtype=xp.uint8)
    padded[:payload.size] = payload
    table = xp.empty((comm.size, padded.size), dtype=xp.uint8)
    comm.allgather(padded, table)
    return [json.loads(bytes(row[:n])) for row, n in zip(table, lengths)]
