"""DDP's reducer: from a parameter's gradient hook to the bucket all-reduce.

    loss.backward()
      └ AccumulateGrad(p): p.grad += g ── post-accumulate-grad hook ──▶ _on_grad_ready(p)
            bucket complete? ──▶ _launch_ready_buckets(): strictly in bucket order
                 _gradients_of(bucket): the bucket's slice of the gradient store built at
                 construction, where backward wrote the gradients (reduced in place; a missing
                 gradient is its .grad as it was, or zeros in its slot); only when one is not there
                 (a .grad assigned by hand, or kept from before a zero_grad that cleared only some),
                 a staging copy; times 1/world
                 └ MPI_Iallreduce of the gradients (nonblocking); behind the last bucket, the
                   backward's lockstep table (lockstep.py) and, with find_unused_parameters, how
                   many ranks used each parameter
            _progress(): test the all-reduces in flight (MPI moves data only inside MPI calls)
            (the table also carries each rank's wait and step time: straggler.py notices a slow rank)
      └ end of backward (queue_callback) ──▶ _finalize_backward()
            parameters with no gradient: error, or (find_unused_parameters) reduced as they are
            wait for every bucket (bounded by the process group's timeout)
            .grad = the reduced values (already, when reduced in place; else copied from the staging copy),
            except for a parameter no rank used since the last synchronised backward: its .grad stays as it
            was (None stays None), as PyTorch leaves it

Buckets are fixed at construction: contiguous slices of the gradient store
(``autograd/grad_store.py``, parameters in registration order, one store per run
of one dtype), taken from the end (about the order backward produces the
gradients): a small first bucket so communication starts early, then
``bucket_cap_mb`` each. ``gradient_as_bucket_view`` is the store's mode.
Gradients become ready in any order, but every rank launches bucket 0, 1, 2...
in the same sequence, which is what MPI collectives require.

The all-reduces run on a private communicator and are nonblocking: each starts
the moment its bucket is complete and proceeds while backward computes the
remaining gradients (there is no communication thread); every later hook gives
MPI a chance to make progress, so by the end of backward most buckets are
already reduced.

Interface with DistributedDataParallel: keyword-only construction with named
defaults; per iteration ``ensure_prior_reduction_finished()`` and ``prepare_for_backward()``; for ``join()``
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
from ..autograd.grad_store import GradStore, build_stores, set_first_grad, zero_grads
from . import _waits, lockstep
from .comm import Communicator
from .reduce_op import ReduceOp
from .straggler import StragglerMonitor

FIRST_BUCKET_BYTES = 1 << 20  # PyTorch's small first bucket (1 MiB)


class Bucket:
    """Several parameters' gradients, reduced in one collective: slots ``lo``..``hi - 1`` of ``store``.

    ``params`` are in slot order (as their gradients lie in the store). The gradients are normally
    reduced where they lie; ``staging`` is a copy, made only for a backward where some gradient is
    not in its slot (see ``Reducer._gradients_of``).
    """

    def __init__(self, index: int, store: GradStore, lo: int, hi: int, names: list[str]) -> None:
        self.index = index
        self.store, self.lo, self.hi = store, lo, hi
        self.params = store.params()[lo:hi]
        self.names = names
        self.numel = store.offsets[hi] - store.offsets[lo]
        self.pending = len(self.params)
        self.work = None  # the all-reduce in flight (comm.Work)
        self.future = None  # with a communication hook: the Future of the reduced buffer
        self.reducing = None  # with a communication hook: the array handed to it (what the result must fill)
        self.in_place = False  # reduced in the store itself (nothing to copy back)
        self.staging = None  # the rare path's copy of the gradients (copied back into .grad at the end)
        self.started: float | None = None  # trace timestamp of its launch
        self.arrival: list[int] = []  # the slots in the order their gradients became ready, this backward
        # The slots in the order of the first synchronised backward (a static graph's second): PyTorch rebuilds its
        # buckets in that order after it (ember keeps its layout), and a communication hook that orders work by the
        # bucket's gradients (PowerSGD's random draws) follows it to match PyTorch. None until then, or where
        # PyTorch does not rebuild (find_unused_parameters=True without static_graph).
        self.rebuilt_order: list[int] | None = None

    @property
    def dtype(self):
        return self.store.dtype

    @property
    def nbytes(self) -> int:
        return self.numel * self.store.dtype.itemsize

    def piece(self, flat, i: int):
        """Slot ``i``'s part of ``flat`` (an array laid out like this bucket's slice), shaped like its parameter and
        laid out as the store lays that slot out (so a staging copy lines up with another rank's in-place slots)."""
        offsets, base = self.store.offsets, self.store.offsets[self.lo]
        return self.store.shaped(flat[offsets[i] - base:offsets[i + 1] - base], i)


def assign_buckets(stores: Sequence[GradStore], names: Sequence[str], cap_bytes: int,
                   first_cap_bytes: int = FIRST_BUCKET_BYTES) -> list[Bucket]:
    """Cut ``stores`` (in order; ``names`` of all their parameters, in order) into buckets of contiguous slots,
    from the last slot backwards: at most ``cap_bytes`` each (the first: ``first_cap_bytes``)."""
    buckets: list[Bucket] = []
    cap = min(first_cap_bytes, cap_bytes)
    starts = [0]
    for store in stores:
        starts.append(starts[-1] + len(store))
    for store, start in reversed(list(zip(stores, starts))):
        hi, size = len(store), 0
        for i in reversed(range(len(store))):
            nbytes = (store.offsets[i + 1] - store.offsets[i]) * store.dtype.itemsize
            if i + 1 < hi and size + nbytes > cap:
                buckets.append(Bucket(len(buckets), store, i + 1, hi, list(names[start + i + 1:start + hi])))
                hi, size, cap = i + 1, 0, cap_bytes
            size += nbytes
        buckets.append(Bucket(len(buckets), store, 0, hi, list(names[start:start + hi])))
        cap = cap_bytes
    return buckets


class Reducer:
    """Averages (or sums) gradients across ranks during backward. One per DistributedDataParallel.

    What DistributedDataParallel uses, and all it uses (tests/test_architecture_doc.py checks): the constructor's
    keyword arguments; ``ensure_prior_reduction_finished()`` at each grad-mode forward; ``prepare_for_backward()``
    before a synchronised backward; ``set_divisor(n)`` /
    ``reset_divisor()`` and ``shadow_backward()`` for ``join()``; ``register_comm_hook(state, hook)``;
    ``bucket_sizes()``; ``close()``. The buckets, the store and the lockstep table are the reducer's own.
    """

    def __init__(self, params: Sequence[Tensor], names: Sequence[str], comm: Communicator, *,
                 bucket_cap_mb: float = 25.0, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False, grad_reduction: str = "mean",
                 nonfinite_grads: str = "skip", static_graph: bool = False) -> None:
        if grad_reduction not in ("mean", "sum"):
            raise ValueError(f"grad_reduction must be 'mean' or 'sum', got {grad_reduction!r}")
        self.comm = comm
        self.world = comm.size
        self.find_unused = find_unused_parameters
        # static_graph, PyTorch's rule: the first synchronised backward finds (with find_unused_parameters' count)
        # which parameters the graph does not use; later backwards trust that and skip the count's all-reduce, and
        # a backward whose parameters differ from the first's raises PyTorch's error on every rank (lockstep table).
        self.static = static_graph
        self._static_unused: set[int] | None = None  # flat indices this rank's first backward did not use
        self._static_unused_everywhere: set[int] = set()  # those no rank used in the first backward
        self._graph_changed: list[str] = []  # this backward, under a static graph: what differs from the first
        self.as_view = gradient_as_bucket_view
        self.averages = grad_reduction == "mean"
        self.scale = 1.0 / self.world if self.averages else 1.0  # what gradients are multiplied by before the sum
        self.nonfinite_policy = ""
        self.set_nonfinite_policy(nonfinite_grads)
        # The gradient store, built now in registration order (one per run of one dtype; an optimizer's store
        # made before for exactly these parameters is kept): each bucket is a slice of it, so backward writes
        # the gradients where they are reduced, from the first step on (autograd/grad_store.py).
        self.grad_stores = build_stores(list(params), as_view=gradient_as_bucket_view, reuse=True)
        self.buckets = assign_buckets(self.grad_stores, names, int(bucket_cap_mb * (1 << 20)))
        self.table = lockstep.new_table(self.world)
        self.layout = lockstep.layout_hash([([p._data.shape for p in b.params], str(b.dtype))
                                            for b in self.buckets] + [find_unused_parameters, static_graph])
        self._table_work = None  # the table's all-reduce in flight
        self.stragglers = StragglerMonitor(self.world, self.comm.rank)
        self._forward_at: tuple[int, int, int, int] | None = None  # _waits.snapshot() at the previous DDP forward
        self._step_us = 0  # the previous iteration's time, forward to forward
        self._wait_us = 0  # how long the previous iteration waited in communication (any, on this thread)
        self._queued_us = 0  # ... and, outside communication, for a core while other processes ran
        self._nonfinite = False  # some bucket of this backward held NaN or inf (on this rank)
        self._where: dict[int, tuple[Bucket, int]] = {}
        self._index = {id(p): i for i, p in enumerate(params)}  # (the position PyTorch's errors name)
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
        # find_unused_parameters, PyTorch's rule: which parameters this rank used since the last synchronised
        # backward (a no_sync() backward, or one without DDP's forward, counts); summed over the ranks behind the
        # lockstep table. A parameter no rank used keeps its .grad as it was before the backward: ``_before``
        # holds, per flat index (bucket by bucket, slot by slot), what to put back (None: it had no gradient).
        self._first = [0]
        for bucket in self.buckets:
            self._first.append(self._first[-1] + len(bucket.params))
        self._used = xp.zeros(self._first[-1], xp.int32)
        self._used_counts = None  # this backward's sum over the ranks (in flight, then read)
        self._used_work = None
        self._before: dict = {}
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
        collectives issued from ``then`` callbacks keep one order on every rank. As PyTorch's, it may be called
        after forwards and backwards have run (the next backward's buckets use it), once; not while a
        backward's buckets are being reduced (some by the all-reduce, the others would take the hook).
        """
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if 0 < self._next_launch < len(self.buckets):
            raise RuntimeError("register_comm_hook cannot be called while a backward of the DistributedDataParallel "
                               f"model is reducing its gradient buckets ({self._next_launch} of "
                               f"{len(self.buckets)} started); call it before or after that backward")
        self._comm_hook = (state, hook)

    # ------------------------------------------------------------------ per iteration
    def ensure_prior_reduction_finished(self) -> None:
        """Raise PyTorch's error (with what happened) when the previous synchronised backward started reducing
        gradients and never finished: an exception raised inside ``loss.backward()`` on this rank and caught. This
        rank's all-reduces then stopped partway while the other ranks' went on, so no later collective of this
        model pairs up with theirs; going on would mix iterations or fail on an abandoned request."""
        if not (self._armed and self._callback_queued):
            return
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. "
            f"DistributedDataParallel: on rank {self.comm.rank}, the backward of iteration {self.iteration} stopped "
            f"partway (an exception raised inside loss.backward() was caught) after this rank had started the "
            f"all-reduces of {self._next_launch} of its {len(self.buckets)} gradient bucket(s); the other ranks "
            "expect the rest of them, so this model cannot run another iteration. Under DistributedDataParallel an "
            "exception raised in backward must end the program (the launcher then stops every rank and names this "
            "one), or every rank must skip that step together (nonfinite_grads='skip' does so for NaN/inf "
            "gradients)."
        )

    def prepare_for_backward(self) -> None:
        """Called by DDP's forward: the next backward is to be synchronised."""
        self.iteration += 1
        now = _waits.snapshot()
        if self._forward_at is not None:
            step, blocked, queued_in_waits, queued = (a - b for a, b in zip(now, self._forward_at))
            self._step_us, self._wait_us = step // 1000, blocked // 1000
            self._queued_us = max(queued - queued_in_waits, 0) // 1000
        self._forward_at = now
        for bucket, ready in zip(self.buckets, self._ready):
            bucket.pending = len(bucket.params)
            bucket.work = None
            bucket.future = None
            bucket.in_place = False
            bucket.staging = None
            bucket.arrival = []
            ready[:] = [False] * len(ready)
        self._next_launch = 0
        self._nonfinite = False
        self._callback_queued = False
        self._before = {}
        self._armed = True

    def shadow_backward(self) -> None:
        """For a rank that has joined (run out of data): take part in one backward's all-reduces with zeros."""
        self.reduce_all()
        self._check_lockstep(joined=True)
        self._unused_everywhere()

    def reduce_all(self) -> None:
        """All-reduce zeros for every bucket (a joined rank's part), as a backward does once all gradients
        have landed."""
        self.prepare_for_backward()
        self._armed = False
        for bucket in self.buckets:
            bucket.pending = 0
        self._launch_ready_buckets(from_params=False)
        self._wait_all()

    def _on_grad_ready(self, param: Tensor) -> None:
        """Post-accumulate-grad hook: ``param.grad`` is final for this backward."""
        bucket, slot = self._where[id(param)]
        if self._counts_used():
            self._used[self._first[bucket.index] + slot] = 1
        if not self._armed:
            return  # no_sync(), or a backward with no DDP forward before it: gradients stay local
        if self._static_unused is not None and self._first[bucket.index] + slot in self._static_unused:
            self._graph_changed.append(f"{bucket.names[slot]} got a gradient, which it did not in the first "
                                       "iteration")
        if param._grad is not None and param._grad.is_sparse:  # F.embedding(..., sparse=True) in a forward
            raise RuntimeError(f"DistributedDataParallel: parameter {bucket.names[slot]} got a sparse gradient, "
                               "which ember's DistributedDataParallel does not all-reduce (PyTorch all-gathers "
                               "sparse gradients); use sparse=False")
        if not self._callback_queued:
            queue_callback(self._finalize_backward)
            self._callback_queued = True
        if self._ready[bucket.index][slot]:  # a second gradient in one backward: its bucket may be reduced already
            raise RuntimeError(self._marked_twice(param, bucket.names[slot]))
        self._ready[bucket.index][slot] = True
        bucket.arrival.append(slot)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()
        if self._in_flight:
            self._progress()

    def _marked_twice(self, param: Tensor, name: str) -> str:
        """PyTorch's error for a parameter whose gradient became final twice in one backward (a parameter used
        inside and outside a reentrant checkpoint, or in two of them: each inner backward accumulates into it).
        The first one may have been all-reduced already, so going on would leave the replicas' gradients apart.
        Difference from PyTorch: ember's static_graph does not make it work (PyTorch counts each parameter's
        gradients in the first iteration and waits for all of them)."""
        static = ("\n(ember: static_graph=True does not support this yet; use "
                  "torch.utils.checkpoint.checkpoint(..., use_reentrant=False).)" if self.static else "")
        return (
            "Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) "
            "Use of a module parameter outside the `forward` function. Please make sure model parameters are not "
            "shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a "
            "workaround if this module graph does not change during training loop.2) Reused parameters in multiple "
            "reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same "
            "part of your model, it would result in the same set of parameters been used by different reentrant "
            "backward passes multiple times, and hence marking a variable ready multiple times. DDP does not "
            "support such use cases in default. You can try to use _set_static_graph() as a workaround if your "
            "module graph does not change over iterations.\n"
            f"Parameter at index {self._index[id(param)]} with name {name} has been marked as ready twice. This "
            "means that multiple autograd engine  hooks have fired for this particular parameter during this "
            f"iteration.{static}"
        )

    def _launch_ready_buckets(self, from_params: bool = True) -> None:
        """Start the all-reduces of every complete bucket whose predecessors have started.

        Every rank issues the same collectives in the same order: one per bucket, in bucket
        order (in place in the bucket's slice of the gradient store when possible, else in a
        staging copy; zeros for a joined rank), then, behind the last bucket, the backward's small lockstep table.
        """
        while self._next_launch < len(self.buckets) and self.buckets[self._next_launch].pending == 0:
            bucket = self.buckets[self._next_launch]
            bucket.started = started = trace.start()
            grads = self._gradients_of(bucket) if from_params else xp.zeros(bucket.numel, bucket.dtype)
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
                               self._nonfinite, self._wait_us, self._step_us, bool(self._graph_changed),
                               self._queued_us)
                self._table_work = self.comm.iallreduce_(self.table, ReduceOp.SUM)
                if self._counts_used():  # (a joined rank used nothing)
                    self._used_counts = self._used.copy() if from_params else xp.zeros_like(self._used)
                    self._used[...] = 0
                    self._used_work = self.comm.iallreduce_(self._used_counts, ReduceOp.SUM)

    def _counts_used(self) -> bool:
        """Whether this backward counts which parameters each rank used (find_unused_parameters; static_graph
        until its first synchronised backward has ended)."""
        if self.static:  # (it takes precedence over find_unused_parameters, as in PyTorch)
            return self._static_unused is None
        return self.find_unused

    def _gradients_of(self, bucket: Bucket):
        """The array to all-reduce for ``bucket``, already multiplied by the 1/world scale.

        Normally the bucket's slice of the gradient store (autograd/grad_store.py), where backward
        wrote the gradients: reduced in place, nothing copied in or out. A parameter that got no
        gradient in this backward (find_unused_parameters) contributes its ``.grad`` as it is (one
        accumulated under no_sync(), or left from before), or zeros written in its slot when it has none,
        as PyTorch does; what it had is noted, to be put back if no rank used it.
        Only when a gradient is not in its slot (one assigned by hand, one kept from before a
        zero_grad that cleared only some): with ``gradient_as_bucket_view`` it is copied into its
        slot, which becomes its ``.grad`` (as PyTorch does); else the bucket is gathered into a
        staging copy whose result is copied back into each ``.grad`` at the end (PyTorch copies too).
        Scaling before summing keeps magnitudes small, as PyTorch does.
        """
        factor = 1.0 if self._comm_hook is not None else self.scale  # a communication hook averages itself
        store, ready = bucket.store, self._ready[bucket.index]
        if not all(ready):
            self._refuse_reshaped(bucket)
            first = self._first[bucket.index] - bucket.lo
            for i, (p, done) in enumerate(zip(bucket.params, ready), bucket.lo):
                if done:
                    continue
                if p._grad is None:
                    self._before[first + i] = None
                    store.issue_zeros(i)
                elif store.holds(i, p._grad) and not store.as_view and not self._used[first + i]:
                    # reduced in place below: keep its values (in view mode PyTorch's .grad, a view of the bucket,
                    # holds the reduced values too)
                    self._before[first + i] = p._grad._data.copy()
        region = store.region(bucket.lo, bucket.hi)
        if region is None and store.as_view:  # (adopt never fails in this mode)
            for i, p in enumerate(bucket.params, bucket.lo):
                if not store.holds(i, p._grad):
                    store.adopt(i)
            region = store.region(bucket.lo, bucket.hi)
        if region is not None:
            bucket.in_place = True
        else:
            self._refuse_reshaped(bucket)
            region = bucket.staging = xp.empty(bucket.numel, bucket.dtype)
            for i, p in enumerate(bucket.params, bucket.lo):
                bucket.piece(region, i)[...] = 0 if p._grad is None else p._grad._data
        if factor != 1.0:
            xp.multiply(region, region.dtype.type(factor), out=region)
        return region

    @staticmethod
    def _refuse_reshaped(bucket: Bucket) -> None:
        """A parameter whose shape changed since wrapping (``p.data = ...``) no longer fits its bucket: name it.
        (A changed dtype still fits: its gradient is reduced in the bucket's dtype and copied back, as PyTorch
        does.)"""
        for i, p in enumerate(bucket.params, bucket.lo):
            if p is not None and p._data.shape != bucket.store.shapes[i]:
                name = bucket.names[i - bucket.lo]
                raise RuntimeError(
                    f"DistributedDataParallel: parameter {name} has shape {list(p._data.shape)}, but it had shape "
                    f"{list(bucket.store.shapes[i])} when the model was wrapped, which its gradient bucket was laid "
                    "out for: a parameter's shape changed after wrapping (p.data = ... with another shape, a layer "
                    "resized). PyTorch fails too (its autograd reports an invalid gradient shape). Change the model "
                    "before wrapping it, or wrap it again.")

    def _run_comm_hook(self, bucket: Bucket, grads):
        """Hand ``grads`` (the bucket's gradients end to end) to the communication hook; its Future."""
        from ..futures import Future
        from .grad_bucket import GradBucket

        offsets = [o - bucket.store.offsets[bucket.lo] for o in bucket.store.offsets[bucket.lo:bucket.hi]]
        state, hook = self._comm_hook
        view = GradBucket(bucket.index, Tensor._make(grads), bucket.params, offsets,
                          bucket.index == len(self.buckets) - 1, bucket.rebuilt_order)
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
        # PyTorch's buckets are laid out again in the arrival order of the first synchronised backward, a static
        # graph's second (its first only counts each parameter's hooks), never with find_unused_parameters alone
        rebuild = self._static_unused is not None if self.static else not self.find_unused
        if rebuild:
            for bucket in self.buckets:
                if bucket.rebuilt_order is None:
                    bucket.rebuilt_order = bucket.arrival + [s for s in range(len(bucket.params))
                                                             if s not in bucket.arrival]
        if self._static_unused is not None:  # static graph: the same parameters as in the first backward
            self._graph_changed += [f"{b.names[s]} got no gradient, which it did in the first iteration"
                                    for b, s in missing if self._first[b.index] + s not in self._static_unused]
        elif missing and not (self.find_unused or self.static):
            names = [b.names[s] for b, s in missing]
            raise RuntimeError(
                f"DistributedDataParallel: {len(names)} parameter(s) received no gradient in this backward on "
                f"rank {self.comm.rank}: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}. "
                "Every rank must reduce every parameter. If these parameters are unused in some iterations "
                "(an unused branch, a detached or frozen part), pass find_unused_parameters=True (a parameter "
                "no rank used then keeps its .grad as it was, None after zero_grad(), as in PyTorch); otherwise "
                "make the loss depend on them or set requires_grad=False before wrapping the model."
            )
        for bucket, _ in missing:  # reduced as they are (see _gradients_of)
            bucket.pending -= 1
        self._launch_ready_buckets()
        self._wait_all()
        started = trace.start()
        synchronised = self._check_lockstep()
        unused = self._unused_everywhere()
        if self.static and self._static_unused is None:  # the first synchronised backward of a static graph
            self._static_unused = {self._first[b.index] + s for b, s in missing}
            self._static_unused_everywhere = unused
        before, self._before = self._before, {}  # (its copies are not kept until the next backward)
        trace.finish("read lockstep table", "ddp", started)
        if not synchronised:
            return
        for bucket, slot in missing:  # PyTorch leaves the .grad of a parameter no rank used untouched
            index = self._first[bucket.index] + slot
            if index not in unused or index not in before:
                continue  # (a .grad assigned by hand: its staging copy is not copied back, below)
            if before[index] is None:
                bucket.store.retract(bucket.lo + slot)
            else:
                bucket.params[slot]._grad._data[...] = before[index]
        for bucket in self.buckets:
            if bucket.staging is None:
                continue  # the gradients themselves were reduced
            for i, p in enumerate(bucket.params, bucket.lo):
                if self._first[bucket.index] + i - bucket.lo in unused:
                    continue
                reduced = bucket.piece(bucket.staging, i)
                if p._grad is None:
                    set_first_grad(p, reduced)
                else:
                    p._grad._data[...] = reduced

    def _unused_everywhere(self) -> set[int]:
        """With find_unused_parameters: the flat indices of the parameters no rank used since the last
        synchronised backward (waits for the count's all-reduce, which follows the lockstep table's); with a static
        graph after its first backward, those no rank used in that one."""
        if self._used_work is None:
            return self._static_unused_everywhere
        self._wait(self._used_work, "the all-reduce of which parameters each rank used")
        self._used_work = None
        return {int(i) for i in xp.flatnonzero(self._used_counts == 0)}

    def _check_lockstep(self, joined: bool = False) -> bool:
        """Read the backward's rank table. False when this step's gradients must be dropped on every rank."""
        problem = lockstep.out_of_step(self.table)
        if problem:
            raise RuntimeError(problem)
        changed, mine, self._graph_changed = lockstep.graph_changed_ranks(self.table), self._graph_changed, []
        if changed:
            here = f"; on this rank: {'; '.join(mine[:5])}{' ...' if len(mine) > 5 else ''}" if mine else ""
            raise RuntimeError(
                "Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, "
                "but then got used in the second iteration, or the other way round. this is not compatible with "
                f"static_graph set to True. (DistributedDataParallel(static_graph=True), iteration {self.iteration}: "
                f"the graph changed on rank(s) {changed}{here}. Every rank raises this; pass "
                "find_unused_parameters=True instead of static_graph=True when the parameters used vary.)")
        if not joined:
            self.stragglers.observe(*lockstep.timings(self.table), lockstep.queued(self.table))
        bad = lockstep.nonfinite_ranks(self.table)
        if not bad or self.nonfinite_policy == "off" or joined:
            return True
        where = (f"non-finite (NaN or inf) gradients on rank(s) {bad} at DDP iteration {self.iteration}")
        if self.nonfinite_policy == "raise":
            raise RuntimeError(f"DistributedDataParallel: {where} (nonfinite_grads='raise').")
        _warnings.warn(f"DistributedDataParallel: {where}; every rank skips this optimizer step "
                       "(all .grad set to None), so the replicas stay identical.", RuntimeWarning)
        zero_grads([p for bucket in self.buckets for p in bucket.params], set_to_none=True)
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
            first = err  # (a hook's Future wraps what its callback raised: the first exception in that chain)
            while first.__cause__ is not None:
                first = first.__cause__
            if not isinstance(first, RuntimeError):  # a communication failure is a RuntimeError; this is not
                raise RuntimeError(
                    f"DistributedDataParallel: {what} (iteration {self.iteration}) failed on rank {self.comm.rank}: "
                    f"the communication hook raised {type(first).__name__} on this rank (in the hook or in a "
                    f"callback it chained with Future.then()): {first}") from err
            raise RuntimeError(
                f"DistributedDataParallel: {what} (iteration {self.iteration}) did not complete on rank "
                f"{self.comm.rank}: another rank did not take part (it stopped, is stuck, or ran a different "
                f"number of backward passes). {err}"
            ) from err

    def bucket_sizes(self) -> list[int]:
        """Bytes in each gradient bucket, in launch order."""
        return [b.nbytes for b in self.buckets]

    def close(self) -> None:
        """Remove the gradient hooks (the model is no longer synchronised)."""
        for handle in self._hooks:
            handle.remove()

