"""A GEMM split into blocks of output rows on numba's OpenMP threads, each block one call of NumPy's OpenBLAS held to
one thread: the same threads as ember's ``kernel.parallel`` kernels (``_omp.py``), so that at two threads a step
wakes neither OpenBLAS's own threads nor ember's Python workers (``policy.omp_gemm``, off by default).

Why: OpenBLAS's threads sleep right after a GEMM (ember sets ``OPENBLAS_THREAD_TIMEOUT=4``) and each threaded GEMM
pays their wake (50-300 µs of wall clock on the idle 2-core VM, docs/benchmarks.md); GNU OpenMP's workers spin a
while between regions, so a region starts in a few µs, as PyTorch's one OpenMP pool runs its GEMMs and kernels.

How: ``gemm_blocks``' ``prange`` loop runs one block of rows per thread; each calls ``cblas_sgemm`` of the library
``openblas.py`` found (NumPy's own), through its ctypes function pointer passed to the compiled kernel, with
OpenBLAS held to one thread meanwhile (``openblas.hold``). Block boundaries fall on multiples of ``_ROW_UNIT`` rows
and every block is over ``_SMALL_MNK``: then each row of a float32 block got the bits the whole GEMM on one thread
gives it, in every shape tried with OpenBLAS's SkylakeX and Zen kernels (tests/test_omp_gemm.py: ragged shapes,
transposed operands), so the result does not depend on the thread count. float64 is not split: OpenBLAS's dgemm
(SkylakeX kernels) summed some rows near its own panel boundaries in another order in blocks than whole (513 x 64
by 300: 8 rows differed by 7e-15), which OpenBLAS's threaded dgemm does too.
"""

from __future__ import annotations

import ctypes

from .._backend import xp
from . import _omp, openblas
from ._jit import kernel, prange
from .policy import policy

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # CBLAS's enums
# A block of rows is a multiple of this and at least this many (fewer rows than 2 * _ROW_UNIT run as one GEMM): a
# multiple of the rows of OpenBLAS's float32 micro-kernel, so that a block's rows are computed by the same kernel
# calls as in the whole product. That is 16 rows with its SkylakeX kernels and 24 with its Haswell/Zen ones (an AVX2
# EPYC: blocks cut at 16 or 32 rows gave other bits in 28-368 rows of every shape tried, cut at multiples of 24 the
# same bits); 48 holds for both.
_ROW_UNIT = 48
# OpenBLAS (0.3.x, x86-64 with AVX-512) computes a GEMM of at most 100 ** 3 multiply-adds with its small-matrix
# kernels, which sum in another order: a block at or under this while the whole GEMM is over it (or under it with
# other rows) gets other bits (measured: 32 x 512 by 64 in blocks of 16 rows). Every block is larger.
_SMALL_MNK = 100 ** 3
_sgemm = None  # cblas_sgemm as a ctypes function once looked for (False where not found)


@kernel
def gemm_blocks(gemm, trans_a, trans_b, n, k, a, lda, a_row_bytes, b, ldb, c, ldc, c_row_bytes, bounds):
    """C[lo:hi] = A[lo:hi] @ B for each block lo..hi of ``bounds``, one ``gemm`` call per block (row-major CBLAS;
    ``a``, ``b``, ``c`` the operands' addresses, ``a_row_bytes`` / ``c_row_bytes`` the bytes from one row to the
    next)."""
    for i in prange(bounds.size - 1):
        lo = bounds[i]
        rows = bounds[i + 1] - lo
        gemm(_ROW_MAJOR, trans_a, trans_b, rows, n, k, 1.0, a + lo * a_row_bytes, lda, b, ldb, 0.0,
             c + lo * c_row_bytes, ldc)


def _find_sgemm():
    """NumPy's OpenBLAS's ``cblas_sgemm``, or False where there is none."""
    lib = openblas.library()
    if lib is None:
        return False
    config = getattr(lib, "openblas_get_config64_", None) or getattr(lib, "openblas_get_config", None)
    for name, wide in (("scipy_cblas_sgemm64_", True), ("cblas_sgemm64_", True), ("scipy_cblas_sgemm", None),
                       ("cblas_sgemm", None)):
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        if wide is None:  # unsuffixed: 64-bit integers only where the library was built so
            if config is None:
                return False
            config.restype = ctypes.c_char_p
            wide = b"USE64BITINT" in (config() or b"")
        integer, address = (ctypes.c_int64 if wide else ctypes.c_int32), ctypes.c_size_t
        # Its own prototype class, not the library's shared ``_FuncPtr``: numba types a ctypes function argument
        # once per Python class, so two functions of that one class would share the first one's signature
        # (measured: dgemm, typed as sgemm, computed garbage).
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int, integer, integer, integer,
                                     ctypes.c_float, address, integer, address, integer, ctypes.c_float, address,
                                     integer)
        return prototype(ctypes.cast(fn, ctypes.c_void_p).value)
    return False


def _operand(x, rows: int, cols: int):
    """(CBLAS's transpose flag, leading dimension, bytes from one row to the next) of a 2-D operand whose rows or
    columns are contiguous, else None (NumPy's own product then)."""
    size = x.itemsize
    s0, s1 = x.strides
    if s1 == size and s0 >= max(1, cols) * size and s0 % size == 0:
        return _NO_TRANS, s0 // size, s0
    if s0 == size and s1 >= max(1, rows) * size and s1 % size == 0:
        return _TRANS, s1 // size, size
    return None


def matmul(a, b):
    """``a @ b`` of two 2-D float32 NumPy arrays on numba's OpenMP threads, in blocks of rows (one per ember
    thread), with NumPy's one-thread bits; None where it does not apply (blocks of fewer than ``_ROW_UNIT`` rows or
    ``_SMALL_MNK`` multiply-adds, one ember thread, one column (NumPy's GEMV), another dtype (float64: above),
    operands whose rows and columns are both strided, no OpenBLAS GEMM found, numba's ``omp`` layer unavailable or a
    forked child, inside a chunk of ember's pool): the caller computes the product then."""
    global _sgemm
    from .. import _parallel  # (imported by now: ``ember`` loads it before any product runs)

    m, k = a.shape
    n = b.shape[1]
    least = -(-(_SMALL_MNK + 1) // max(1, k * n))  # the fewest rows a block may have
    threads = min(_parallel.get_num_threads(), m // (-(-least // _ROW_UNIT) * _ROW_UNIT))
    if threads < 2 or a.dtype != xp.float32 or b.dtype != xp.float32 or n < 2 or _parallel.in_worker():
        return None  # (inside a chunk of ember's pool or of ``_omp.run_chunks``: no region nested in a region)
    if not policy.use_compiled() or not _omp.available():
        return None
    if _sgemm is None:
        _sgemm = _find_sgemm()
    left, right = _operand(a, m, k), _operand(b, k, n)
    if not _sgemm or left is None or right is None or not openblas.hold():
        return None
    try:
        out = xp.empty((m, n), a.dtype)
        units = -(-m // _ROW_UNIT)
        bounds = xp.array([min(m, units * i // threads * _ROW_UNIT) for i in range(threads + 1)], xp.int64)
        _omp.use_threads(threads)
        gemm_blocks.parallel(_sgemm, left[0], right[0], n, k, a.ctypes.data, left[1], left[2], b.ctypes.data, right[1],
                             out.ctypes.data, n, n * out.itemsize, bounds)
        return out
    finally:
        openblas.release()


__all__ = ["matmul"]
