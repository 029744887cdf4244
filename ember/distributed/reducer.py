"""DDP's reducer: from a parameter's gradient hook to the bucket all-reduce.

    loss.backward()
      └ AccumulateGrad(p): p.grad += g ── post-accumulate-grad hook ──▶ _on_grad_ready(p)
            bucket complete? ──▶ _launch_ready_buckets(): strictly in bucket order
                 _gradients_of(bucket): the bucket's stretch of the gradient buffer laid out at
                 construction, where backward wrote the gradients (reduced in place; a missing
                 gradient is zeros in its home); only when one is not there (an old .grad someone
                 still holds, one assigned by hand), the bucket's spare buffer; times 1/world
                 └ MPI_Iallreduce of the gradients (nonblocking); behind the last bucket, the
                   backward's lockstep table (lockstep.py)
            _progress(): test the all-reduces in flight (MPI moves data only inside MPI calls)
      └ end of backward (queue_callback) ──▶ _finalize_backward()
            parameters with no gradient: error, or zeros with find_unused_parameters
            wait for every bucket (bounded by the process group's timeout)
            p.grad = the reduced values (already, when reduced in place; else copied from the spare buffer)

Buckets are fixed at construction: parameters in reverse registration order
(about the order backward produces their gradients), a small first bucket so
communication starts early, then ``bucket_cap_mb`` each, one dtype per bucket.
Gradients become ready in any order, but every rank launches bucket 0, 1, 2...
in the same sequence, which is what MPI collectives require.

The all-reduces run on a private communicator and are nonblocking: each starts
the moment its bucket is complete and proceeds while backward computes the
remaining gradients (there is no communication thread); every later hook gives
MPI a chance to make progress, so by the end of backward most buckets are
already reduced.

Interface with DistributedDataParallel: keyword-only construction with named
defaults; per iteration ``prepare_for_backward()``; for ``join()``
``set_divisor(n)`` / ``reset_divisor()`` and ``shadow_backward()``. Every piece
of the work is a trace span (``cat="ddp"``), which is how bench/bench_ddp.py
times it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _trace as trace
from .. import _warnings
from .._backend import xp
from .._tensor import Tensor
from ..autograd.engine import queue_callback
from ..autograd.grad_home import flat_grads, lay_out, zeroed_home
from . import lockstep
from .comm import Communicator
from .reduce_op import ReduceOp

FIRST_BUCKET_BYTES = 1 << 20  # PyTorch's small first bucket (1 MiB)


class Bucket:
    """Several parameters' gradients, reduced in one collective.

    They are normally reduced where they lie: a stretch of the gradient buffer the reducer laid out
    at construction. ``grads`` (one view per parameter in ``views``) is the spare buffer used only
    when they do not lie there, and for a joined rank's zeros.
    """

    def __init__(self, index: int, params: list[Tensor], names: list[str]) -> None:
        self.index = index
        self.params = params
        self.names = names
        dtype = params[0]._data.dtype
        sizes = [p._data.size for p in params]
        offsets = [0]
        for n in sizes[:-1]:
            offsets.append(offsets[-1] + n)
        self.grads = xp.zeros(sum(sizes), dtype=dtype)
        self.views = [self.grads[o:o + p._data.size].reshape(p._data.shape) for o, p in zip(offsets, params)]
        self.pending = len(params)
        self.work = None  # the all-reduce in flight (comm.Work)
        self.future = None  # with a communication hook: the Future of the reduced buffer
        self.reducing = None  # with a communication hook: the array handed to it (what the result must fill)
        self.in_place = False  # reduced in the parameters' own gradient buffer (nothing to copy back)
        self.started: float | None = None  # trace timestamp of its launch

    @property
    def nbytes(self) -> int:
        return self.grads.nbytes


def assign_buckets(params: Sequence[Tensor], names: Sequence[str], cap_bytes: int,
                   first_cap_bytes: int = FIRST_BUCKET_BYTES) -> list[Bucket]:
    """Group parameters (reverse order) into buckets of at most ``cap_bytes`` (the first: ``first_cap_bytes``)."""
    buckets: list[Bucket] = []
    current: list[int] = []
    size = 0
    cap = min(first_cap_bytes, cap_bytes)
    for i in reversed(range(len(params))):
        p = params[i]
        if current and (size + p._data.nbytes > cap or p._data.dtype != params[current[0]]._data.dtype):
            buckets.append(Bucket(len(buckets), [params[j] for j in current], [names[j] for j in current]))
            current, size, cap = [], 0, cap_bytes
        current.append(i)
        size += p._data.nbytes
    if current:
        buckets.append(Bucket(len(buckets), [params[j] for j in current], [names[j] for j in current]))
    return buckets


def _dtype_runs(params: Sequence[Tensor]) -> list[list[Tensor]]:
    """``params`` cut where the dtype changes (buckets never span such a cut)."""
    runs: list[list[Tensor]] = []
    for p in params:
        if runs and runs[-1][0]._data.dtype == p._data.dtype:
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


class Reducer:
    """Averages (or sums) gradients across ranks during backward. One per DistributedDataParallel."""

    def __init__(self, params: Sequence[Tensor], names: Sequence[str], comm: Communicator, *,
                 bucket_cap_mb: float = 25.0, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False, grad_reduction: str = "mean",
                 nonfinite_grads: str = "skip") -> None:
        if grad_reduction not in ("mean", "sum"):
            raise ValueError(f"grad_reduction must be 'mean' or 'sum', got {grad_reduction!r}")
        self.comm = comm
        self.world = comm.size
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.averages = grad_reduction == "mean"
        self.scale = 1.0 / self.world if self.averages else 1.0  # what gradients are multiplied by before the sum
        self.nonfinite_policy = ""
        self.set_nonfinite_policy(nonfinite_grads)
        self.buckets = assign_buckets(params, names, int(bucket_cap_mb * (1 << 20)))
        # The gradients' homes, laid out now in registration order (one buffer per run of one dtype): each
        # bucket is a stretch of one, so backward writes the gradients where they are reduced, from the
        # first step on (autograd/grad_home.py; parameters that already have homes keep them).
        self.grad_buffers = [buf for run in _dtype_runs(params) if (buf := lay_out(run)) is not None]
        self.table = lockstep.new_table(self.world)
        self.layout = lockstep.layout_hash([([p._data.shape for p in b.params], str(b.grads.dtype))
                                            for b in self.buckets])
        self._table_work = None  # the table's all-reduce in flight
        self._nonfinite = False  # some bucket of this backward held NaN or inf (on this rank)
        self._where: dict[int, tuple[Bucket, int]] = {}
        for bucket in self.buckets:
            for slot, p in enumerate(bucket.params):
                self._where[id(p)] = (bucket, slot)
        self._ready = [[False] * len(b.params) for b in self.buckets]
        self._armed = False
        self._callback_queued = False
        self._next_launch = 0
        self._in_flight: list[Bucket] = []
        self.iteration = 0
        self._comm_hook = None  # (state, hook) from register_comm_hook
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in params]

    # ------------------------------------------------------------------ settings
    def set_divisor(self, ranks: int) -> None:
        """Average over ``ranks`` instead of the world size (``join()`` with ranks that ran out of data).
        Has no effect with ``grad_reduction="sum"``."""
        if self.averages:
            self.scale = 1.0 / ranks

    def reset_divisor(self) -> None:
        """Average over the world size again."""
        self.set_divisor(self.world)

    def set_nonfinite_policy(self, policy: str) -> None:
        """What a NaN/inf gradient on any rank does: ``"skip"`` the step, ``"raise"``, or ``"off"`` (no scan)."""
        if policy not in ("skip", "raise", "off"):
            raise ValueError(f"nonfinite_grads must be 'skip', 'raise' or 'off', got {policy!r}")
        self.nonfinite_policy = policy

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, GradBucket)`` instead of the built-in all-reduce.

        The hook gets the bucket's summed-up local gradients, not yet divided by the world size (it does its
        own averaging, as PyTorch's hooks do), and returns a Future of the reduced buffer. Hooks are called in
        bucket order during backward; their Futures are waited for in bucket order at the end of backward, so
        collectives issued from ``then`` callbacks keep one order on every rank.
        """
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if self.iteration:
            raise RuntimeError("register_comm_hook must be called before the first forward of the "
                               "DistributedDataParallel model (the buckets of a backward all use one hook)")
        self._comm_hook = (state, hook)

    # ------------------------------------------------------------------ per iteration
    def prepare_for_backward(self) -> None:
        """Called by DDP's forward: the next backward is to be synchronised."""
        self.iteration += 1
        for bucket, ready in zip(self.buckets, self._ready):
            bucket.pending = len(bucket.params)
            bucket.work = None
            bucket.future = None
            bucket.in_place = False
            ready[:] = [False] * len(ready)
        self._next_launch = 0
        self._nonfinite = False
        self._callback_queued = False
        self._armed = True

    def shadow_backward(self) -> None:
        """For a rank that has joined (run out of data): take part in one backward's all-reduces with zeros."""
        for bucket in self.buckets:
            bucket.grads[...] = 0
        self.reduce_all()
        self._check_lockstep(joined=True)

    def reduce_all(self) -> None:
        """All-reduce every bucket as it stands, as a backward does once all gradients have landed."""
        self.prepare_for_backward()
        self._armed = False
        for bucket in self.buckets:
            bucket.pending = 0
        self._launch_ready_buckets(from_params=False)
        self._wait_all()

    def _on_grad_ready(self, param: Tensor) -> None:
        """Post-accumulate-grad hook: ``param.grad`` is final for this backward."""
        if not self._armed:
            return  # no_sync(), or a backward with no DDP forward before it: gradients stay local
        if param._grad is not None and param._grad.is_sparse:  # F.embedding(..., sparse=True) in a forward
            bucket, slot = self._where[id(param)]
            raise RuntimeError(f"DistributedDataParallel: parameter {bucket.names[slot]} got a sparse gradient, "
                               "which ember's DistributedDataParallel does not all-reduce (PyTorch all-gathers "
                               "sparse gradients); use sparse=False")
        if not self._callback_queued:
            queue_callback(self._finalize_backward)
            self._callback_queued = True
        bucket, slot = self._where[id(param)]
        if self._ready[bucket.index][slot]:
            return
        self._ready[bucket.index][slot] = True
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()
        if self._in_flight:
            self._progress()

    def _launch_ready_buckets(self, from_params: bool = True) -> None:
        """Start the all-reduces of every complete bucket whose predecessors have started.

        Every rank issues the same collectives in the same order: one per bucket, in bucket
        order (in place in the parameters' own gradient buffer when possible, else in the
        bucket's), then, behind the last bucket, the backward's small lockstep table.
        """
        while self._next_launch < len(self.buckets) and self.buckets[self._next_launch].pending == 0:
            bucket = self.buckets[self._next_launch]
            bucket.started = started = trace.start()
            grads = self._gradients_of(bucket) if from_params else bucket.grads
            if started is not None:
                trace.finish("scale", "ddp", started, bucket=bucket.index)
            if self.nonfinite_policy != "off" and not self._nonfinite:
                t = trace.start()
                self._nonfinite = lockstep.has_nonfinite(grads)
                trace.finish("non-finite scan", "ddp", t, bucket=bucket.index)
            t = trace.start()
            if self._comm_hook is None:
                bucket.work = self.comm.iallreduce_(grads, ReduceOp.SUM)
                self._in_flight.append(bucket)
            else:
                bucket.future = self._run_comm_hook(bucket, grads)
            trace.finish("start all-reduce", "ddp", t, bucket=bucket.index)
            self._next_launch += 1
            if self._next_launch == len(self.buckets):
                lockstep.stamp(self.table, self.comm.rank, self.iteration, len(self.buckets), self.layout,
                               self._nonfinite)
                self._table_work = self.comm.iallreduce_(self.table, ReduceOp.SUM)

    def _gradients_of(self, bucket: Bucket):
        """The array to all-reduce for ``bucket``, already multiplied by the 1/world scale.

        Normally the bucket's stretch of the gradient buffer (autograd/grad_home.py), where backward
        wrote the gradients: reduced in place, nothing copied in or out. A parameter that got no
        gradient in this backward (find_unused_parameters) contributes zeros, written in its home.
        Only when a gradient is not in its home (held elsewhere, set by hand), the bucket's spare
        buffer, filled from the gradients. Scaling before summing keeps magnitudes small, as
        PyTorch does.
        """
        factor = 1.0 if self._comm_hook is not None else self.scale  # a communication hook averages itself
        scale = bucket.grads.dtype.type(factor)
        ready = self._ready[bucket.index]
        if not all(ready):
            for p, done in zip(bucket.params, ready):
                if not done and (home := zeroed_home(p)) is not None:
                    p._grad = Tensor._make(home) if p._grad is None else p._grad
        # bucket.params are in reverse registration order; gradient buffers in registration order
        region = flat_grads(bucket.params[::-1])
        if region is not None:
            bucket.in_place = True
            if factor != 1.0:
                xp.multiply(region, scale, out=region)
            return region
        for slot, (p, view) in enumerate(zip(bucket.params, bucket.views)):
            if not ready[slot]:
                view[...] = 0
            elif factor == 1.0:
                if p._grad._data is not view:
                    view[...] = p._grad._data
            else:
                xp.multiply(p._grad._data, scale, out=view)
        return bucket.grads

    def _run_comm_hook(self, bucket: Bucket, grads):
        """Hand ``grads`` (the bucket's gradients end to end) to the communication hook; its Future."""
        from ..futures import Future
        from .grad_bucket import GradBucket

        order = bucket.params[::-1] if grads is not bucket.grads else bucket.params  # how they lie in grads
        offsets, offset = [], 0
        for p in order:
            offsets.append(offset)
            offset += p._data.size
        state, hook = self._comm_hook
        view = GradBucket(bucket.index, Tensor._make(grads), order, offsets, bucket.index == len(self.buckets) - 1)
        future = hook(state, view)
        if not isinstance(future, Future):
            raise TypeError(f"DistributedDataParallel: the communication hook {getattr(hook, '__name__', hook)!r} "
                            f"returned {type(future).__name__}; it must return a torch.futures.Future whose value "
                            "is the bucket's reduced buffer (e.g. dist.all_reduce(..., async_op=True).get_future())")
        bucket.reducing = grads
        return future

    def _progress(self) -> None:
        """Let MPI advance the all-reduces in flight; note the ones that finished."""
        started = trace.start()
        still = []
        for bucket in self._in_flight:
            if bucket.work.is_completed():
                trace.finish("all-reduce", "ddp", bucket.started, bucket=bucket.index, bytes=bucket.nbytes)
            else:
                still.append(bucket)
        self._in_flight = still
        trace.finish("progress", "ddp", started)

    def _finalize_backward(self) -> None:
        """End of backward: every bucket reduced, every ``.grad`` holding the result."""
        self._armed = False
        missing = [(b, s) for b in self.buckets for s, ready in enumerate(self._ready[b.index]) if not ready]
        if missing and not self.find_unused:
            names = [b.names[s] for b, s in missing]
            raise RuntimeError(
                f"DistributedDataParallel: {len(names)} parameter(s) received no gradient in this backward on "
                f"rank {self.comm.rank}: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}. "
                "Every rank must reduce every parameter. If these parameters are unused in some iterations "
                "(an unused branch, a detached or frozen part), pass find_unused_parameters=True (ember then "
                "reduces them as zeros); otherwise make the loss depend on them or set requires_grad=False "
                "before wrapping the model."
            )
        for bucket, _ in missing:  # reduced as zeros (see _gradients_of)
            bucket.pending -= 1
        self._launch_ready_buckets()
        self._wait_all()
        started = trace.start()
        synchronised = self._check_lockstep()
        trace.finish("read lockstep table", "ddp", started)
        if not synchronised:
            return
        for bucket in self.buckets:
            if bucket.in_place:
                continue  # the gradients themselves were reduced
            for p, view in zip(bucket.params, bucket.views):
                if self.as_view:
                    if p._grad is None:
                        p._grad = Tensor._make(view)
                    else:
                        p._grad._data = view
                elif p._grad is None:
                    p._grad = Tensor._make(view.copy())
                else:
                    p._grad._data[...] = view

    def _check_lockstep(self, joined: bool = False) -> bool:
        """Read the backward's rank table. False when this step's gradients must be dropped on every rank."""
        problem = lockstep.out_of_step(self.table)
        if problem:
            raise RuntimeError(problem)
        bad = lockstep.nonfinite_ranks(self.table)
        if not bad or self.nonfinite_policy == "off" or joined:
            return True
        where = (f"non-finite (NaN or inf) gradients on rank(s) {bad} at DDP iteration {self.iteration}")
        if self.nonfinite_policy == "raise":
            raise RuntimeError(f"DistributedDataParallel: {where} (nonfinite_grads='raise').")
        _warnings.warn(f"DistributedDataParallel: {where}; every rank skips this optimizer step "
                       "(all .grad set to None), so the replicas stay identical.", RuntimeWarning)
        for bucket in self.buckets:
            for p in bucket.params:
                p._grad = None
        return False

    def _wait_all(self) -> None:
        """Wait for every all-reduce (each bounded by the process group's timeout)."""
        started = trace.start()
        for bucket in self._in_flight:
            self._wait(bucket.work, f"the all-reduce of gradient bucket {bucket.index}")
            trace.finish("all-reduce", "ddp", bucket.started, bucket=bucket.index, bytes=bucket.nbytes)
        self._in_flight = []
        for bucket in self.buckets:  # with a communication hook: its Futures, in bucket order
            if bucket.future is not None:
                self._wait(bucket.future, f"the communication hook of gradient bucket {bucket.index}")
                result = bucket.future.value()
                if not isinstance(result, Tensor) or result.numel() != bucket.reducing.size:
                    raise RuntimeError(f"DistributedDataParallel: the communication hook's Future for bucket "
                                       f"{bucket.index} holds {type(result).__name__}, not the bucket's "
                                       f"{bucket.reducing.size} reduced values")
                if result._data is not bucket.reducing:
                    bucket.reducing[...] = result._data.reshape(-1)
                bucket.future = None
                trace.finish("all-reduce", "ddp", bucket.started, bucket=bucket.index, bytes=bucket.nbytes)
        self._wait(self._table_work, "the all-reduce of the lockstep table")
        trace.finish("wait all-reduces", "ddp", started)

    def _wait(self, work, what: str) -> None:
        try:
            work.wait()
        except RuntimeError as err:
            raise RuntimeError(
                f"DistributedDataParallel: {what} (iteration {self.iteration}) did not complete on rank "
                f"{self.comm.rank}: another rank did not take part (it stopped, is stuck, or ran a different "
                f"number of backward passes). {err}"
            ) from err

    def close(self) -> None:
        """Remove the gradient hooks (the model is no longer synchronised)."""
        for handle in self._hooks:
            handle.remove()

