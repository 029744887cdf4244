"""Elementwise work on several cores, with NumPy alone.

NumPy releases the GIL inside its ufunc loops and reductions, so the pieces of one large array
computed by a few Python threads run at the same time. ``parallel_for`` splits a range of rows
into one chunk per thread, runs all but the last in a small pool and the last on the calling
thread, and returns when every chunk is done. Small arrays run on the calling thread only: a
hand-off to the pool costs about 10-20 µs. The thresholds are fields of ``ember._kernels.policy``.

The thread count follows PyTorch's rules: ``OMP_NUM_THREADS`` at start-up, else the number of
cores; ``ember.set_num_threads(n)`` changes it, and the BLAS library's threads (matrix multiplies,
NumPy's OpenBLAS) with it, as PyTorch's call sets its BLAS threads too.

Every kernel that uses this must give the same bits for any thread count: chunks are split along
rows that are computed independently (no reduction across a split).
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable
from typing import NamedTuple

from ._backend import quiet_enter, quiet_exit, xp
from ._kernels import _omp, openblas
from ._kernels.policy import policy


def _threads_from_env() -> int:
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1



_num_threads = _threads_from_env()
_workers: list[_Worker] = []
_pool_lock = threading.Lock()  # held by the thread whose chunks the workers run (one caller at a time)
_in_worker = threading.local()


def get_num_threads() -> int:
    """Threads ember's own kernels use (``OMP_NUM_THREADS`` at start-up, else the cores)."""
    return _num_threads


def set_num_threads(n: int) -> None:
    """Set the threads ember's own kernels and NumPy's OpenBLAS use, as ``torch.set_num_threads`` sets
    PyTorch's intra-op and BLAS threads (``openblas.set_threads``).

    Raises RuntimeError, as PyTorch does, for a count that is not a positive int.
    """
    global _num_threads
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    _num_threads = n
    openblas.set_threads(n)


class _Worker:
    """One intra-op thread: it waits on a lock for a chunk, runs it, and releases another lock when done.

    A hand-off is two lock operations, each in C without the GIL while it waits, where a ``concurrent.futures``
    pool took a future, a work item, a queue and a condition per chunk: a whole ``parallel_for`` of two chunks
    measured 20 against 32 us of the caller's CPU time on a loaded 2-core machine (the hand-off itself 12 us). A
    daemon thread: at exit it is blocked on its lock, never inside a chunk (the caller waits for every chunk)."""

    def __init__(self, index: int) -> None:
        self.start, self.done = threading.Lock(), threading.Lock()
        self.start.acquire()
        self.done.acquire()
        self.task: tuple | None = None
        self.error: BaseException | None = None
        threading.Thread(target=self._loop, name=f"ember-intra-op_{index}", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.start.acquire()
            fn, start, stop = self.task
            self.task = None
            try:
                _run_in_worker(fn, start, stop)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
                self.error = exc
            self.done.release()

    def submit(self, fn: Callable[[int, int], None], start: int, stop: int) -> None:
        self.error = None
        self.task = (fn, start, stop)
        self.start.release()

    def wait(self) -> BaseException | None:
        """Block until the chunk is done; its exception, if it raised one."""
        self.done.acquire()
        return self.error


def _get_workers(count: int) -> list[_Worker]:
    while len(_workers) < count:  # (only the caller holding _pool_lock gets here)
        _workers.append(_Worker(len(_workers)))
    return _workers[:count]


def _forget_pool_in_child() -> None:
    """A forked child has none of its parent's threads: the workers it inherited would take work and never run it
    (a Hogwild worker hung in its first large op). The child starts its own workers when it needs them."""
    global _workers, _pool_lock
    _workers, _pool_lock = [], threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def _run_in_worker(fn: Callable[[int, int], None], start: int, stop: int) -> None:
    _in_worker.active = True
    quiet = quiet_enter()  # a worker thread starts with NumPy's default error state, not the caller's
    try:
        fn(start, stop)
    finally:
        quiet_exit(quiet)
        _in_worker.active = False


def in_worker() -> bool:
    """Whether this thread is running a chunk of ``parallel_for`` (on ember's workers or numba's OpenMP threads)."""
    return getattr(_in_worker, "active", False)


def chunks_for(rows: int, elements: int, min_elements: int | None = None) -> int:
    """How many chunks a kernel over ``rows`` rows and ``elements`` elements in all should use
    (one below ``min_elements``, default ``policy.min_parallel_elements``)."""
    threads = _num_threads
    least = policy.min_parallel_elements if min_elements is None else min_elements
    if threads <= 1 or rows < 2 or elements < least or in_worker():
        return 1
    return min(threads, rows, max(1, elements // (least // 2)))


def parallel_for(fn: Callable[[int, int], None], rows: int, elements: int, min_elements: int | None = None) -> None:
    """Call ``fn(start, stop)`` over ``range(rows)`` split into chunks, in parallel when large.

    ``elements`` is the work's total size; below ``min_elements`` (default ``policy.min_parallel_elements``)
    it runs on the calling thread. Chunk boundaries depend on the thread count, so ``fn`` must
    compute each row independently of the others. An exception in any chunk is raised here after
    every chunk has finished. While the workers run another thread's chunks, a second calling thread runs all of
    its own inline (the same bits: they never depend on the split). Under ``policy.omp_chunks`` (with
    ``policy.omp``) the chunks run as one region on numba's OpenMP threads instead (``_omp.run_chunks``): the same
    chunks, so the same bits, and ember's workers stay asleep.
    """
    k = chunks_for(rows, elements, min_elements)
    if k == 1 or not _pool_lock.acquire(blocking=False):  # small, or the workers serve another caller: inline
        fn(0, rows)
        return
    bounds = [rows * i // k for i in range(k + 1)]
    if policy.omp and policy.omp_chunks and policy.use_omp():
        try:
            _omp.run_chunks(fn, bounds)
        finally:
            _pool_lock.release()
        return
    error: BaseException | None = None
    submitted: list[_Worker] = []
    try:
        for i, worker in enumerate(_get_workers(k - 1)):
            worker.submit(fn, bounds[i], bounds[i + 1])
            submitted.append(worker)
        fn(bounds[k - 1], bounds[k])
    except BaseException as exc:  # noqa: BLE001 - re-raised below, after the other chunks finish
        error = exc
    finally:
        # Every handed-off chunk is waited for, whatever happened here (an exception in a chunk, Ctrl-C while
        # waiting): a worker whose "done" was never taken would answer the next caller's wait before its chunk ran.
        for worker in submitted:
            while True:
                try:
                    failed = worker.wait()
                    break
                except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt while waiting: wait on
                    error = error or exc
            error = error or failed
        _pool_lock.release()
    if error is not None:
        raise error


class Rows(NamedTuple):
    """A kernel over ``count`` independent rows, ready to run: ``run(lo, hi)`` computes rows lo..hi, ``elements`` is
    its size (the threading decision, as ``parallel_for``'s); ``whole``: its rows run on the calling thread in one
    call, never split (a GEMM too wide for ``gemm_block``'s blocks, which OpenBLAS's own threads split)."""

    run: Callable[[int, int], None]
    count: int
    elements: int
    whole: bool = False


def run_rows(rows: Rows) -> None:
    """``rows``' kernel over all its rows: split over threads as ``parallel_for`` splits them, unless whole."""
    if rows.whole:
        rows.run(0, rows.count)
    else:
        parallel_for(rows.run, rows.count, rows.elements)


def parallel_for_all(*works: Rows) -> None:
    """Several independent kernels' rows as one ``parallel_for``: one hand-off to the workers where each kernel
    split alone takes one (a convolution's weight and input gradients: two), and the serial steps between them
    gone. A hand-off to a sleeping worker costs 50-300 µs of wall clock on the idle 2-core VM (docs/benchmarks.md).

    The chunks take every kernel's rows in proportion (row i of a kernel of n rows sits at (i + 0.5) / n in the
    merged order), so each thread gets its share of each kernel, however their rows differ in cost; each chunk runs
    its rows of the first kernel, then of the next. Every kernel's rows are computed independently, so the bits do
    not depend on the split (at one thread: each kernel whole, in order). A kernel that must stay whole makes every
    kernel run on its own (``run_rows``), one after another."""
    if len(works) == 1 or any(w.whole for w in works):
        for w in works:
            run_rows(w)
        return
    total, elements = sum(w.count for w in works), sum(w.elements for w in works)
    if chunks_for(total, elements) == 1:  # one chunk (one thread, small, inside a worker): each whole, in order
        for w in works:
            w.run(0, w.count)
        return
    order = sorted(((i + 0.5) / w.count, j) for j, w in enumerate(works) for i in range(w.count))
    prefix = [[0] * len(works)]  # prefix[p][j]: kernel j's rows among the first p of the merged order
    for _, j in order:
        counts = prefix[-1].copy()
        counts[j] += 1
        prefix.append(counts)

    def run(lo: int, hi: int) -> None:
        for w, a, b in zip(works, prefix[lo], prefix[hi]):
            if b > a:
                w.run(a, b)

    parallel_for(run, total, elements)


def run_rows_in_step(first: Rows, second: Rows) -> None:
    """Two kernels over the same rows, row i of ``second`` reading what row i of ``first`` wrote (a convolution's
    column matrix, made by one row by row, read by the other row by row): each thread runs its rows of ``first``,
    then the same rows of ``second``, in one ``parallel_for``: one hand-off where running them in turn takes two, no
    wait for the slower thread between them, and each row's data still in that thread's cache. Every row computed
    as alone: the same bits. A kernel that must stay whole (or a different row count) runs them in turn."""
    if first.whole or second.whole or first.count != second.count:
        run_rows(first)
        run_rows(second)
        return

    def run(lo: int, hi: int) -> None:
        first.run(lo, hi)
        second.run(lo, hi)

    parallel_for(run, first.count, first.elements + second.elements)


def side_by_side(first: Callable, second: Callable, elements: int, *, one_blas: bool = False) -> tuple:
    """(``first()``, ``second()``), two independent computations (a node's input and weight gradients) run at once
    where there are two threads: ``first`` on ember's worker, ``second`` on the calling thread, each whole, instead of
    one after the other with each split over the threads (a hand-off or an OpenBLAS wake each, and the passes between
    them on the calling thread alone). ``elements`` is their size (``parallel_for``'s threading decision: below
    ``policy.min_parallel_elements``, or at one thread, or inside a worker, they run in turn). With ``one_blas``,
    OpenBLAS is held to one thread while both run (``openblas.hold``), so that each GEMM in them runs whole on its
    own thread: the bits of one OpenBLAS thread, those of the two in turn at one thread (OpenBLAS's threaded GEMM
    splits the sum over K for a few outputs of a long sum, which rounds otherwise). ``first`` runs on another
    thread: it must read no thread-local state (grad mode, the RNG's) that ``second``'s caller set."""
    results = [None, None]
    fns = (first, second)

    def run(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            results[i] = fns[i]()

    if chunks_for(2, elements) == 1:  # (one thread, small, or inside a worker: in turn, OpenBLAS as it is)
        run(0, 2)
    elif one_blas and openblas.hold():
        try:
            parallel_for(run, 2, elements)
        finally:
            openblas.release()
    else:
        parallel_for(run, 2, elements)
    return results[0], results[1]


def parallel_kernel(kern, call: Callable[..., None], rows: int, elements: int, min_elements: int | None = None) -> None:
    """``call(k, start, stop)`` runs compiled kernel ``k`` over rows start..stop: split as ``parallel_for`` splits
    them, but where ``policy.use_omp()``, as one call of ``kern.parallel`` over all rows (its ``prange`` loop on
    numba's OpenMP threads, a few µs to start instead of a hand-off to ember's workers), else ``parallel_for`` over
    ``kern`` itself. One chunk (small, one thread, inside a worker) calls ``kern`` on the calling thread either way.
    The same bits for any split: ``kern``'s rows are computed independently."""
    if _omp.region_threads(rows, elements):  # (from ``policy.omp_min_elements``)
        call(kern.parallel, 0, rows)
    else:
        parallel_for(lambda lo, hi: call(kern, lo, hi), rows, elements, min_elements)


def _plain(arrays) -> bool:
    """Whether every array is a NumPy array. A recorded array (create_graph) is not cut into pieces: a piece of it
    is a new recorded array, so a kernel's writes into it would be lost; ``fn`` gets the whole arrays, and a kernel
    written with ``out=`` then fails loudly (HigherOrderError) rather than writing into a piece."""
    for a in arrays:
        if a is not None and type(a) is not xp.ndarray:
            return False
    return True


def parallel_rows(fn: Callable[..., None], *arrays, min_elements: int | None = None) -> None:
    """Call ``fn(*pieces)`` on matching row ranges of same-length arrays (split along axis 0), in parallel.

    For kernels written as in-place ufuncs on views: ``fn(x[a:b], out[a:b])``. ``None`` entries
    are passed through unchanged (an optional argument). Threads from ``min_elements`` elements, by default
    ``policy.min_elementwise_elements`` (NumPy passes; a compiled kernel passes ``policy.min_parallel_elements``).
    Arrays that are not all NumPy arrays (``_plain``) are given to ``fn`` whole.
    """
    first = arrays[0] if arrays[0] is not None else next(a for a in arrays if a is not None)
    least = policy.min_elementwise_elements if min_elements is None else min_elements
    # One chunk (a small array: most arrays of a small-tensor program) is the whole arrays: called at once, with
    # none of the splitting's cost (a few µs per op).
    if first.size < least or first.ndim == 0 or not _plain(arrays):
        fn(*arrays)
        return
    rows = first.shape[0]

    def run(start: int, stop: int) -> None:
        fn(*(a if a is None else a[start:stop] for a in arrays))

    parallel_for(run, rows, first.size, least)


def multiply(a, b):
    """``a * b``: for NumPy arrays of one shape and dtype split among the intra-op threads (``parallel_rows``);
    otherwise (broadcasting, mixed dtypes, a recorded array under create_graph) the plain product."""
    if type(a) is not xp.ndarray or type(b) is not xp.ndarray or a.shape != b.shape or a.dtype != b.dtype:
        return a * b
    # In a's memory order: a batch-last gradient (behind a convolution) times a batch-last derivative stays
    # batch-last, with no copy to C order of either (reshape(-1) of such a view copies) nor of the result.
    out = xp.empty_like(a)
    parallel_flat(xp.multiply, a, b, out, kern=_multiply_kernel(a))
    return out


def _multiply_kernel(a):
    """``_kernels.activation.multiply`` (a ``prange`` product, for ``parallel_flat``'s regions on numba's OpenMP
    threads) where ``policy.omp`` could run it on ``a``'s dtype, else None (no numba import otherwise)."""
    if not policy.omp or a.dtype not in (xp.float32, xp.float64):
        return None
    from ._kernels import activation

    return activation.multiply


def parallel_blocks(fn: Callable[..., None], *arrays) -> None:
    """``parallel_rows``, with each thread's rows further cut into blocks of about ``policy.block_bytes`` per array.

    For elementwise kernels of many passes (each row computed independently): measured on a 6.4M-element
    Adam update, 15.4 -> 11.3 ms at one thread; GELU over 2M float32, 8.8 -> 6.7 ms.
    """
    first = arrays[0]
    if (first.size < policy.min_elementwise_elements and first.nbytes <= policy.block_bytes) or not _plain(arrays):
        fn(*arrays)  # one chunk of one block (a small array): at once
        return

    def blocks(*parts) -> None:
        first = next(a for a in parts if a is not None)
        n = first.shape[0] if first.ndim else 1
        step = max(1, policy.block_bytes * n // max(1, first.nbytes))
        if first.ndim == 0 or n <= step:
            fn(*parts)
            return
        for start in range(0, n, step):
            fn(*(a if a is None else a[start:start + step] for a in parts))

    parallel_rows(blocks, *arrays)


def parallel_flat(fn: Callable[..., None], *arrays, min_elements: int | None = None, kern=None,
                  flat: bool = False) -> None:
    """Call ``fn(*pieces)`` on matching chunks of same-shape arrays that share one memory order, in parallel.

    For elementwise kernels on arrays stored in any axis order (a batch-last (C, H, W, N) array behind an
    (N, C, H, W) view): each array's memory is split into contiguous chunks. When some array is not a
    permutation of a C-contiguous array with the others' axis order, ``fn`` gets the whole arrays; so it does below
    ``min_elements`` (``parallel_rows``'s default), where there is one chunk, with none of the splitting's cost.
    ``kern``: a compiled kernel of 1-D arrays, elementwise over a ``prange`` loop, computing what ``fn`` does; where
    the arrays would be split and ``policy.use_omp()``, ``kern.parallel`` runs once over the whole flattened arrays
    on numba's OpenMP threads (``parallel_kernel``) instead of ``fn`` in chunks. ``flat``: ``fn`` gets the flattened
    arrays below ``min_elements`` too (one chunk), where they share a memory order (a compiled kernel of 1-d arrays).
    """
    first = arrays[0]
    least = policy.min_elementwise_elements if min_elements is None else min_elements
    # numba's OpenMP threads from ``policy.omp_min_elements`` (``_omp.region_threads``), where ``kern`` is given
    regions = kern is not None and _plain(arrays) and _omp.region_threads(first.size, first.size) > 0
    if (first.size < least and not flat and not regions) or not _plain(arrays):
        fn(*arrays)
        return
    order = sorted(range(first.ndim), key=lambda i: -first.strides[i])
    flats = []
    for a in arrays:
        t = a.transpose(order)
        if a.shape != first.shape or not t.flags.c_contiguous:
            fn(*arrays)
            return
        flats.append(t.reshape(-1))
    if regions:
        kern.parallel(*flats)
        return
    parallel_rows(fn, *flats, min_elements=min_elements)


# Narrower blocks than this cost more than they save: such GEMMs are left whole (to OpenBLAS's threads).
_MIN_GEMM_BLOCK = 8


def on_one_blas_thread(fn: Callable, *args):
    """``fn(*args)`` run with OpenBLAS held to one thread (``_kernels.openblas.hold``), so that every GEMM in it runs
    whole on whichever of ember's threads computes it (``gemm_block`` is None inside); OpenBLAS's count is restored
    after. Where that count cannot be set at run time (no OpenBLAS found), or OpenBLAS has one thread anyway, or
    ``policy.one_blas_thread`` is False, ``fn`` runs as it is (its GEMMs in blocks or on OpenBLAS's threads).

    Why: GEMMs cut into blocks that OpenBLAS keeps on one thread ran at 60-65 % of a whole GEMM's speed (a DCGAN
    layer's tile GEMMs in blocks of 32 columns), and GEMMs left to OpenBLAS's threads keep the calling thread
    spinning while it waits for them. The count is the process's: a GEMM another thread runs meanwhile runs on
    one OpenBLAS thread too. Nested and concurrent uses keep it at one until the last ends. The bits do not depend
    on ember's thread count: every GEMM inside is whole on one OpenBLAS thread, for any count."""
    if policy.blas_threads == 1 or not policy.one_blas_thread or not openblas.hold():
        return fn(*args)
    try:
        return fn(*args)
    finally:
        openblas.release()


def one_blas_thread(method: Callable) -> Callable:
    """A convolution node's ``forward(self, x, ...)`` or ``backward(self, g, ...)`` run ``on_one_blas_thread``, unless
    its batch (x's or g's first dim) is one sample: ember's threads split a convolution by samples, bands or rows,
    but one sample's GEMMs are most of the work, which OpenBLAS's threads split (inference on one large image), so
    it runs as it is. Decided on the shape alone: the same bits for any count of ember's threads."""

    @functools.wraps(method)
    def run(self, first, *args, **kwargs):
        if first.shape[0] == 1:
            return method(self, first, *args, **kwargs)
        return on_one_blas_thread(functools.partial(method, **kwargs) if kwargs else method, self, first, *args)

    return run


def gemm_block(m: int, k: int, n: int) -> int | None:
    """The block of output columns (n >= m) or rows (n < m) that keeps an (m x k) @ (k x n) GEMM on one OpenBLAS
    thread: None when the whole GEMM already is, 0 when the blocks would be narrower than 8 (a very wide GEMM).
    It depends on the shape and OpenBLAS's thread count (``policy.blas_threads``, fixed at start-up; at 1 every
    GEMM is None: whole; while OpenBLAS is held to one thread, inside ``on_one_blas_thread``, None too), never on
    ember's, so blocked results are the same for any count of ember's threads."""
    return None if openblas.held() else _blas_block(m, k, n)


def _blas_block(m: int, k: int, n: int) -> int | None:
    """``gemm_block`` by the shape and ``policy.blas_threads`` alone (inside ``on_one_blas_thread`` too)."""
    limit = policy.blas_threaded_mnk  # the largest GEMM OpenBLAS keeps on one thread
    if m * k * n <= limit or policy.blas_threads == 1:
        return None
    block = limit // (k * min(m, n))
    return block if block >= _MIN_GEMM_BLOCK else 0


def matmul_blocks(a, b, out, block: int | None) -> None:
    """``numpy.matmul(a, b, out=out)`` over stacks, in ``gemm_block`` blocks of output columns or rows."""
    m, n = out.shape[-2], out.shape[-1]
    if not block or block >= max(m, n):
        xp.matmul(a, b, out=out)
    elif n >= m:
        for j in range(0, n, block):
            xp.matmul(a, b[..., j:j + block], out=out[..., j:j + block])
    else:
        for j in range(0, m, block):
            xp.matmul(a[..., j:j + block, :], b, out=out[..., j:j + block, :])


def matmul(a, b):
    """``numpy.matmul(a, b)`` of two float matrices (or stacks of one: leading dims of 1) of one dtype, as blocks of
    output columns (n >= m) or rows that OpenBLAS keeps on one thread (``gemm_block``), the blocks split among the
    intra-op threads. A GEMM OpenBLAS would thread itself wakes its threads, which then spin for a while after it
    (measured: a small CNN's one Linear kept OpenBLAS's second thread busy for the whole step, on the core ember's
    worker needed). The blocks depend on the shape and OpenBLAS's thread count only: the same bits for any
    ``set_num_threads``. Products too wide for blocks, small ones (one thread anyway) and other operands take the
    plain ``numpy.matmul``."""
    if (type(a) is not xp.ndarray or type(b) is not xp.ndarray or a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype
            or a.dtype not in (xp.float32, xp.float64) or b.shape[-2] != a.shape[-1]
            or any(d != 1 for d in a.shape[:-2] + b.shape[:-2])):
        return xp.matmul(a, b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    block = _blas_block(m, k, n)  # (inside ``on_one_blas_thread`` too: the blocks are what splits it over the pool)
    if not block:  # small (one OpenBLAS thread anyway), or too wide for blocks: OpenBLAS's threads, once
        return xp.matmul(a, b)
    rows, out = _matmul_blocks(a, b, block)
    parallel_for(rows.run, rows.count, rows.elements)
    return out


def matmul_rows(a, b) -> tuple[Rows, object]:
    """``matmul(a, b)`` of two float matrices (2-d, one dtype) not yet run, for a caller's own split beside other
    kernels (``parallel_for_all``): its ``gemm_block`` blocks as ``Rows``, or one row, the whole GEMM, where it takes
    none (``whole`` where OpenBLAS's threads take it: too wide for blocks); and the output they fill. The same GEMMs
    as ``matmul``'s: the same bits."""
    block = _blas_block(a.shape[0], a.shape[1], b.shape[1])
    if block:
        return _matmul_blocks(a, b, block)
    out = xp.empty((a.shape[0], b.shape[1]), a.dtype)
    return Rows(lambda lo, hi: xp.matmul(a, b, out=out), 1, a.size + b.size + out.size, block == 0), out


def _matmul_blocks(a, b, block: int) -> tuple[Rows, object]:
    """``matmul``'s blocks of output columns (n >= m) or rows as ``Rows``, and the output they fill."""
    m, n = a.shape[-2], b.shape[-1]
    out = xp.empty((*(a.shape[:-2] if a.ndim >= b.ndim else b.shape[:-2]), m, n), a.dtype)
    cols = n >= m
    count = -(-(n if cols else m) // block)

    def run(lo: int, hi: int) -> None:
        for i in range(lo * block, min(hi * block, n if cols else m), block):
            if cols:
                xp.matmul(a, b[..., i:i + block], out=out[..., i:i + block])
            else:
                xp.matmul(a[..., i:i + block, :], b, out=out[..., i:i + block, :])

    return Rows(run, count, a.size + b.size + out.size), out


def stack_matmul(a, b, out=None):
    """``numpy.matmul(a, b)`` of two stacks of matrices with the same leading dims, the stack split along its first
    dim of more than one among the intra-op threads (attention's per-head products, per-example weights under vmap).
    ``out``: an array of the product's shape and dtype, of any layout, that receives the product (the same bits)
    and is returned.

    NumPy runs a stack's products one after another on the calling thread, and OpenBLAS keeps each small product on
    one of its threads, so a stack of small GEMMs used one core however many there were; OpenBLAS's own threads, for
    a larger product, meet once per product (for a stack of them that costs more than the GEMMs on a busy machine).
    So every product runs in ``gemm_block`` blocks that OpenBLAS keeps on one thread. The blocks depend on OpenBLAS's
    thread count only, never on ember's: the bits are the same for any ``set_num_threads``. Other operands
    (broadcast stacks, mixed or non-float dtypes, recorded arrays under create_graph) take the plain ``numpy.matmul``.
    """
    if _num_threads <= 1 and policy.blas_threads == 1:
        # one thread for ember and for OpenBLAS: every way below is NumPy's matmul of the whole stacks (no blocks:
        # gemm_block is None; one chunk: chunks_for is 1), without the tests (attention's products at batch 1)
        return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)
    if (type(a) is not xp.ndarray or type(b) is not xp.ndarray or a.ndim < 3 or a.shape[:-2] != b.shape[:-2]
            or a.dtype != b.dtype or a.dtype not in (xp.float32, xp.float64) or b.shape[-2] != a.shape[-1]):
        # (a mismatch of the inner dims raises NumPy's error here)
        return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)
    block = gemm_block(a.shape[-2], a.shape[-1], b.shape[-1])
    if block == 0:  # products too wide for blocks: each on OpenBLAS's threads, from this thread alone
        return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)
    shape = (*a.shape[:-1], b.shape[-1])
    a0, b0 = a, b
    while a.ndim > 3 and a.shape[0] == 1:  # a stack of one ((1, H, T, T) attention at batch 1): split the next dim
        a, b = a[0], b[0]
    if block is None and chunks_for(a.shape[0], a.size + b.size + math.prod(a.shape[:-1]) * b.shape[-1]) == 1:
        # one chunk of whole products (a few small heads, or one thread): NumPy's loop over the stack, the same
        # GEMMs, without the chunking's closure and slices (4 heads of 64 x 32: 14.6 -> 11 us)
        return xp.matmul(a0, b0) if out is None else xp.matmul(a0, b0, out=out)
    product = xp.empty((*a.shape[:-1], b.shape[-1]), a.dtype)

    def run(lo: int, hi: int) -> None:
        matmul_blocks(a[lo:hi], b[lo:hi], product[lo:hi], block)

    parallel_for(run, a.shape[0], a.size + b.size + product.size)
    if out is None:
        return product.reshape(shape)
    out[...] = product.reshape(shape)
    return out


__all__ = ["chunks_for", "gemm_block", "get_num_threads", "in_worker", "matmul", "matmul_blocks", "matmul_rows",
           "multiply", "on_one_blas_thread", "one_blas_thread", "parallel_blocks", "parallel_flat", "parallel_for",
           "parallel_for_all", "parallel_kernel", "parallel_rows", "run_rows", "run_rows_in_step", "Rows",
           "set_num_threads", "side_by_side", "stack_matmul"]
