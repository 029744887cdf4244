"""OpenBLAS's thread count for one GEMM: NumPy's OpenBLAS library, found once, and its ``set_num_threads``.

OpenBLAS threads a GEMM itself once M * N * K passes ``policy.blas_threaded_mnk``. Just above that, waking its
second thread and meeting it again costs more than the thread saves: measured on an idle 2-core machine, a GPT
forward at batch 1 (64 rows; Linear GEMMs of 0.5-4 M multiply-adds) took 2.2 ms of wall clock at two threads and
1.5 ms at one, its calling thread waiting while OpenBLAS's other thread worked. ``matmul`` runs such mid-sized GEMMs
with OpenBLAS held to one thread (up to ``policy.blas_one_thread_mnk``) and restores the count after: two calls
into the library of about 0.3 µs each, against GEMMs of 20 µs and more. ``hold`` / ``release`` hold it around more
than one GEMM: a convolution's whole forward or backward (``_parallel.one_blas_thread``), whose GEMMs ember's own
threads share out.

The library is NumPy's own (the ``scipy-openblas`` wheels NumPy ships, or a system OpenBLAS it was built with),
found among the shared libraries the process has loaded. Where there is none (another BLAS, another platform),
``matmul`` is ``numpy.matmul`` and nothing changes.

``matmul``'s hold is on up to ``policy.blas_one_thread_mnk`` (8 M multiply-adds) since 2026-12-06: ember lets
OpenBLAS's threads sleep at once after a GEMM (``OPENBLAS_THREAD_TIMEOUT=4``), so each threaded GEMM of a few
hundred µs or less paid a wake that its split did not save (``policy.py``). The convolutions' hold
(``policy.one_blas_thread``) is on too: two idle A/Bs put the convolution rows about 5 % faster with it.
"""

from __future__ import annotations

import ctypes
import os
import threading

from .._backend import xp
from .policy import policy

_SET_NAMES = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
              "openblas_set_num_threads")
_lock = threading.Lock()
_functions: tuple | None = None  # (set_num_threads, get_num_threads), or () when there is no OpenBLAS to call
_library: ctypes.CDLL | None = None  # the library those came from (``omp_gemm`` finds its GEMMs there)
# GEMMs running with OpenBLAS held to one thread, and its count before the first of them: threads calling
# ``matmul`` at once restore the count when the last one finishes, never to another's "1".
_held = 0
_held_from = 1


def _candidate_paths() -> list[str]:
    """Shared libraries named like OpenBLAS: NumPy's wheel's own first (SciPy ships another OpenBLAS, which holding
    would leave NumPy's threads as they are), then those the process has mapped (Linux: a system OpenBLAS)."""
    import glob  # (here: found once, on the first hold, not at ``import ember``)

    site = os.path.dirname(os.path.dirname(xp.__file__))
    paths: list[str] = []
    for folder in (os.path.join(site, "numpy.libs"), os.path.join(os.path.dirname(xp.__file__), ".dylibs")):
        paths += sorted(glob.glob(os.path.join(folder, "*openblas*")))
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(" ", 1)[-1].strip()
                if "openblas" in os.path.basename(path).lower() and "scipy.libs" not in path and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    return paths


def _find() -> tuple:
    global _library
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)  # already loaded by NumPy: the same library, not a second copy
        except OSError:
            continue
        for name in _SET_NAMES:
            setter = getattr(lib, name, None)
            getter = getattr(lib, name.replace("set_num_threads", "get_num_threads"), None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                _library = lib
                return setter, getter
    return ()


def functions() -> tuple:
    """``(set_num_threads, get_num_threads)`` of NumPy's OpenBLAS, or ``()`` where there is none."""
    global _functions
    if _functions is None:
        with _lock:
            if _functions is None:
                _functions = _find()
    return _functions


def library() -> ctypes.CDLL | None:
    """NumPy's OpenBLAS library itself (the one ``functions`` come from), or None where there is none."""
    functions()
    return _library


def one_thread(m: int, k: int, n: int) -> bool:
    """Whether an (m x k) @ (k x n) GEMM runs with OpenBLAS held to one thread: one OpenBLAS would thread and that
    is at most ``policy.blas_one_thread_mnk``, with OpenBLAS on more than one thread."""
    return policy.blas_threads > 1 and policy.blas_threaded_mnk < m * k * n <= policy.blas_one_thread_mnk


def hold() -> bool:
    """Hold OpenBLAS to one thread until the matching ``release``; False (nothing held, no ``release`` to call) where
    there is no OpenBLAS to call. Holds nest and may come from several threads at once: the count set before the
    first is restored when the last is released."""
    found = functions()
    if not found:
        return False
    global _held, _held_from
    setter, getter = found
    with _lock:
        if _held == 0:
            _held_from = getter()
            if _held_from != 1:
                setter(1)
        _held += 1
    return True


def held() -> bool:
    """Whether OpenBLAS is held to one thread now (by any thread)."""
    return _held > 0


def release() -> None:
    """End one ``hold``."""
    global _held
    with _lock:
        _held -= 1
        if _held == 0 and _held_from != 1:
            _functions[0](_held_from)


def set_threads(n: int) -> None:
    """Set OpenBLAS's thread count to ``n``, as ``torch.set_num_threads`` sets PyTorch's BLAS threads. While a
    ``hold`` is on, the count its ``release`` restores becomes ``n`` instead. Nothing where there is no OpenBLAS
    to call. ``policy.blas_threads`` (the start-up count) is left as it was: the GEMM blocks it decides, and so
    the bits of a blocked GEMM, do not depend on this call."""
    global _held_from
    found = functions()
    if not found:
        return
    with _lock:
        if _held:
            _held_from = n
        else:
            found[0](n)


def _release_all_in_child() -> None:
    """A child forked while a GEMM held OpenBLAS has none of the holding threads: it gets the count back at once
    (else its OpenBLAS stayed on one thread for good) and a fresh lock (the parent's may have been taken)."""
    global _held, _lock
    _lock = threading.Lock()
    if _held:
        _held = 0
        if _held_from != 1 and _functions:
            _functions[0](_held_from)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_release_all_in_child)


def matmul(a, b, out=None):
    """``numpy.matmul(a, b)`` (into ``out`` where given: an array of the product's shape and dtype, the same bits);
    for two plain matrices, a mid-sized GEMM (``one_thread``) with OpenBLAS held to one thread, and where
    ``policy.omp_gemm`` is on, any GEMM OpenBLAS would thread in blocks of rows on numba's OpenMP threads
    (``omp_gemm.matmul``: one thread's bits). A held GEMM's result depends on the shapes and the policy only; one
    OpenBLAS threads runs on the count ``ember.set_num_threads`` set last (OpenBLAS's threaded double-precision GEMM
    sums some shapes in another order, so held and threaded, or two counts, differ by rounding)."""
    if policy.blas_threads == 1:  # (one_thread's answer, without its call and the tests: every Linear's GEMM)
        return xp.matmul(a, b, out=out)
    if type(a) is not xp.ndarray or type(b) is not xp.ndarray or a.ndim != 2 or b.ndim != 2:
        return xp.matmul(a, b, out=out)
    if policy.omp_gemm and a.shape[0] * a.shape[1] * b.shape[1] > policy.blas_threaded_mnk:
        from . import omp_gemm  # (numba's threads: imported on the first such product, never at ``import ember``)

        product = omp_gemm.matmul(a, b)
        if product is not None:
            if out is None:
                return product
            out[...] = product
            return out
    if not one_thread(a.shape[0], a.shape[1], b.shape[1]) or not hold():
        return xp.matmul(a, b, out=out)
    try:
        return xp.matmul(a, b, out=out)
    finally:
        release()


__all__ = ["functions", "held", "hold", "matmul", "one_thread", "release", "set_threads"]
