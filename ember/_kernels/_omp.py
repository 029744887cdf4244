"""Whether compiled kernels may run their ``prange`` loops on numba's OpenMP threads, decided on first use.

A parallel region on numba's ``omp`` threading layer (GNU OpenMP, whose workers spin a while before they sleep)
starts in a few microseconds, where handing a chunk to ember's Python worker threads costs 50-300 µs of wall clock
on a machine whose idle cores halt (docs/benchmarks.md). So the kernels written with an outer ``prange`` loop run
once over all their rows on that layer (``kernel.parallel``), instead of in chunks over ember's pool.

Available when all of these hold, else the kernels run as before (serial compiled kernels split over ember's pool):

- numba imports and ``policy.omp`` is on (off by default; ``EMBER_OMP_KERNELS=1`` in the environment starts the
  process with it on);
- numba's ``omp`` layer loads: numba's wheels link the system's ``libgomp.so.1`` rather than ship it. The layer is
  chosen here (``numba.config.THREADING_LAYER = "omp"``) only when the program has not chosen one itself and numba
  has not started its threads yet; a program that chose another layer (``NUMBA_THREADING_LAYER``, or the config)
  or already ran its own parallel code on one keeps it, and ember's kernels keep ember's pool;
- the process is not a forked child. GNU OpenMP is not fork-safe: numba ends a forked child that enters a parallel
  region after its parent ran one (a DataLoader worker whose dataset calls an ember op would die), so a child runs
  the serial kernels (``os.register_at_fork``).

The decision is made once per process (the first parallel kernel that would run), and never warns: the fallback
computes the same bits.

How long numba's OpenMP workers spin after a region before they sleep is GNU OpenMP's ``GOMP_SPINCOUNT``, which
libgomp reads once, when it loads. Where the program set neither ``GOMP_SPINCOUNT`` nor ``OMP_WAIT_POLICY``,
ember sets ``GOMP_SPINCOUNT`` to ``policy.omp_spin_count`` while numba's layer loads libgomp and removes it right
after (``_spin_env``): the process's environment, and so its children's and PyTorch's own OpenMP runtime (its own
copy of libgomp), are left as they were. The gaps between a step's regions are short (a ResNet-style step's: median
0.2-0.4 ms, 94-99 % under 1 ms), which 20,000 pauses cover; GNU OpenMP's default (300,000) spins several ms after
each region and after the step. Where libgomp was loaded already (another library's OpenMP), its spin stays as that
load set it.

``run_chunks`` runs the chunks of ember's own pool (``_parallel.parallel_for``: the convolutions' bands, samples and
GEMM blocks, layout copies, stacked products) on the same OpenMP threads under ``policy.omp_chunks``: one region
whose ``prange`` iterations call back into Python (a ctypes callback takes the GIL for its chunk; the chunk's NumPy
and compiled calls release it, as on ember's workers). Then a step at two threads has one set of threads, as
PyTorch's: ember's Python workers are never woken, and no second set competes for the core that numba's workers
spin on after each region.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator

from ._jit import kernel, load_numba, prange

_available: bool | None = None  # None: not decided yet
_policy = None  # ``policy.policy``, once ``region_threads`` first runs
_local = threading.local()  # numba's thread count is per calling thread: the count last set from this one


def _in_child() -> None:
    global _available
    _available = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_child)


@contextlib.contextmanager
def _spin_env(count: int | None) -> Iterator[None]:
    """``GOMP_SPINCOUNT=count`` in the environment for the block (libgomp loading inside it reads it), removed after;
    nothing where ``count`` is None or the program set ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` itself."""
    if count is None or "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = str(count)
    try:
        yield
    finally:
        os.environ.pop("GOMP_SPINCOUNT", None)


def _choose_layer() -> bool:
    """Select numba's ``omp`` layer where the program left the choice to numba, start it (libgomp loaded with
    ``policy.omp_spin_count``: ``_spin_env``), and say whether ``omp`` is the layer numba runs."""
    from .policy import policy

    numba = load_numba()
    if numba is None:
        return False
    try:
        from numba.np.ufunc import parallel
        if not parallel._is_initialized:
            layer = str(numba.config.THREADING_LAYER).lower()
            with _spin_env(policy.omp_spin_count):
                if layer == "default" and not os.environ.get("NUMBA_THREADING_LAYER"):
                    from numba.np.ufunc import omppool  # noqa: F401 - ImportError where libgomp.so.1 is missing
                    numba.config.THREADING_LAYER = "omp"
                elif layer not in ("omp", "threadsafe"):
                    return False  # the program's own choice, not OpenMP: numba's threads are left unstarted
                parallel._launch_threads()
        return numba.threading_layer() == "omp"
    except Exception:  # noqa: BLE001 - a layer that does not load is as absent: ember's own pool runs the kernels
        return False


def available() -> bool:
    """Whether ``kernel.parallel`` dispatchers may run in this process (decided on the first call; False in a forked
    child)."""
    global _available
    if _available is None:
        _available = _choose_layer()
    return _available


def use_threads(n: int) -> None:
    """Run this thread's next parallel regions on ``n`` threads (at most numba's launched count)."""
    if getattr(_local, "threads", 0) != n:
        numba = load_numba()
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
        _local.threads = n


def region_threads(rows: int, elements: int) -> int:
    """How many of numba's OpenMP threads one ``prange`` region over ``rows`` independent rows (``elements`` values
    in all) should run on, set for this thread's next regions; 0 where the serial kernel should run instead:
    ``policy.omp`` off or unavailable, one ember thread, fewer than ``policy.omp_min_elements`` values or two rows,
    or inside one of ember's workers (``_parallel.chunks_for``). The row kernels (``norm``, ``softmax``,
    ``activation``, ``embedding``, ``optim``) call their ``*_blocks`` form's ``parallel`` with this count."""
    global _policy
    if _policy is None:
        from .policy import policy as _policy  # (here: policy imports this module)
    if not _policy.omp:  # (the common case first: every row op asks, small tensors' too)
        return 0
    from .. import _parallel

    threads = _parallel.chunks_for(rows, elements, _policy.omp_min_elements)
    if threads < 2 or not _policy.use_omp():
        return 0
    use_threads(threads)
    return threads


@kernel
def _chunk_region(callback, count):
    """``callback(i)`` for each chunk i, one ``prange`` iteration each (numba spreads them over its threads)."""
    for i in prange(count):
        callback(i)


_kept = threading.local()  # ``kept``: this thread's Python thread state is kept between callbacks (``_keep_state``)


def _keep_state() -> None:
    """Keep the Python thread state of the OpenMP worker running this callback for the thread's lifetime.

    A ``ctypes`` callback on a thread Python did not start takes the GIL with ``PyGILState_Ensure``, which creates a
    thread state for it, and gives it back with ``PyGILState_Release``, which destroys that state when its count
    returns to zero: every chunk on numba's worker paid a thread state's creation and teardown (its thread-local
    data, NumPy's error state, lost each time), about half of a region's CPU (a region of two empty chunks, no
    spin: 21-25 against 11-13 µs of CPU, docs/benchmarks.md). One more ``PyGILState_Ensure`` here, never released,
    leaves the count at one after the callback: the state lives on, and later callbacks only take the GIL. (Called
    with the GIL held: the call returns at once. The interpreter frees the state at exit, when no region runs.)"""
    if not getattr(_kept, "kept", False):
        ctypes.pythonapi.PyGILState_Ensure()
        _kept.kept = True


class _Chunks:
    """The chunks of one ``run_chunks`` region: the ``ctypes`` callback every iteration calls, made once, reads the
    region's work from here (one region at a time: ``_parallel.parallel_for`` holds its pool lock around it)."""

    def __init__(self) -> None:
        self.fn: Callable[[int, int], None] | None = None
        self.bounds: list[int] = []
        self.errors: list[BaseException] = []
        self.caller = 0  # ``threading.get_ident()`` of the thread that runs the region
        self.callback = ctypes.CFUNCTYPE(None, ctypes.c_int64)(self._run)

    def _run(self, i: int) -> None:
        # On one of numba's OpenMP threads (or the calling thread), holding the GIL ctypes took for the call. An
        # exception cannot pass through the compiled region: it is kept and raised by ``run_chunks`` after it.
        from .. import _parallel

        if threading.get_ident() != self.caller:  # numba's worker (the caller has a Python thread state already)
            _keep_state()
        try:
            _parallel._run_in_worker(self.fn, self.bounds[i], self.bounds[i + 1])
        except BaseException as exc:  # noqa: BLE001 - raised by the caller once every chunk has finished
            self.errors.append(exc)


_chunks: _Chunks | None = None


def run_chunks(fn: Callable[[int, int], None], bounds: list[int]) -> None:
    """``fn(bounds[i], bounds[i + 1])`` for every chunk i, as one region on numba's OpenMP threads (one thread per
    chunk where there are as many), returning when all are done; the first exception a chunk raised is raised here
    after that. Each chunk runs as on ember's workers (``_parallel._run_in_worker``: floating-point errors quiet, a
    nested ``parallel_for`` or region inline), and OpenBLAS is held to one thread meanwhile (``openblas.hold``: the
    chunks' GEMMs are sized to run on one, as on ember's workers; two OpenMP threads calling a threaded OpenBLAS at
    once stalled). The caller makes sure ``available()`` and holds ``_parallel``'s pool lock."""
    global _chunks
    from . import openblas

    if _chunks is None:
        _chunks = _Chunks()
    chunks = _chunks
    count = len(bounds) - 1
    chunks.fn, chunks.bounds, chunks.errors, chunks.caller = fn, bounds, [], threading.get_ident()
    held = openblas.hold()
    try:
        use_threads(count)
        _chunk_region.parallel(chunks.callback, count)
    finally:
        if held:
            openblas.release()
        chunks.fn = None
    if chunks.errors:
        raise chunks.errors[0]


__all__ = ["available", "region_threads", "run_chunks", "use_threads"]
