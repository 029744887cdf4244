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
computes the same bits. How long numba's OpenMP workers spin before they sleep is GNU OpenMP's, set by
``OMP_WAIT_POLICY`` / ``GOMP_SPINCOUNT`` in the environment before the process starts.
"""

from __future__ import annotations

import os
import threading

from ._jit import load_numba

_available: bool | None = None  # None: not decided yet
_policy = None  # ``policy.policy``, once ``region_threads`` first runs
_local = threading.local()  # numba's thread count is per calling thread: the count last set from this one


def _in_child() -> None:
    global _available
    _available = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_child)


def _choose_layer() -> bool:
    """Select numba's ``omp`` layer where the program left the choice to numba, start it, and say whether ``omp`` is
    the layer numba runs."""
    numba = load_numba()
    if numba is None:
        return False
    try:
        from numba.np.ufunc import parallel
        if not parallel._is_initialized:
            layer = str(numba.config.THREADING_LAYER).lower()
            if layer == "default" and not os.environ.get("NUMBA_THREADING_LAYER"):
                from numba.np.ufunc import omppool  # noqa: F401 - ImportError where libgomp.so.1 is missing
                numba.config.THREADING_LAYER = "omp"
            elif layer not in ("omp", "threadsafe"):
                return False  # the program's own choice, which is not OpenMP: numba's threads are left unstarted
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


__all__ = ["available", "region_threads", "use_threads"]
