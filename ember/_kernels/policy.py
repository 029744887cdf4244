"""The one object that decides which kernel runs: compiled (numba) or NumPy, threaded or not, and the convolution's
algorithm (Winograd or im2col, the transposed-convolution gradient as a convolution or by col2im, interpolation's
dense matrices or taps). Every threshold a kernel consults lives here, with the measurement behind it.

``ember._kernels.policy`` is the process's instance. Its fields are plain attributes; ``policy.override(...)``
changes some for a ``with`` block and restores them after (how tests pin a path or lower a threshold for
themselves). Nothing here is read at import time but ``EMBER_KERNELS``: ``EMBER_KERNELS=numpy`` in the environment
starts the process with the NumPy kernels (as when numba cannot be imported); ``policy.compiled = False`` does
the same later.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from ._jit import load_numba


def _compiled_from_env() -> bool:
    return os.environ.get("EMBER_KERNELS", "").strip().lower() != "numpy"


@dataclass
class KernelPolicy:
    """Which kernel runs. Every field only picks a path or a split: never what a kernel computes beyond rounding
    (compiled and NumPy kernels agree bit for bit where their arithmetic is the same, to PyTorch's tolerance
    otherwise; threaded kernels give the same bits for any thread count)."""

    # Compiled (numba) kernels where one exists and numba imports; False: the NumPy reference kernels everywhere.
    compiled: bool = field(default_factory=_compiled_from_env)
    # Below this many elements per call a kernel runs on one thread (a pass over 64 Ki float32 takes ~15-30 µs,
    # about the cost of handing a chunk to the pool and waiting for it). For kernels whose chunks are a few long
    # NumPy/BLAS calls or one compiled loop: convolution bands, pooling, BatchNorm.
    min_parallel_elements: int = 1 << 16
    # The same for NumPy elementwise kernels of many short passes. Every NumPy call takes the GIL back when it
    # returns, so two threads making ~20 calls each hand the GIL to each other ~40 times per kernel: measured on
    # 2 cores, softmax and LayerNorm on 128 Ki elements took 1.7-1.9x as long on two threads as on one, broke
    # even near 256 Ki and won from 512 Ki (LayerNorm 2.06 -> 1.52 ms, GELU 1.73 -> 1.12 ms).
    min_elementwise_elements: int = 1 << 19
    # Kernels of many passes over arrays larger than the caches work on pieces of about this many bytes per
    # array, so that a piece stays in cache across the passes (6.4M-element Adam 15.4 -> 11.3 ms at one thread).
    block_bytes: int = 1 << 20
    # OpenBLAS may thread a GEMM itself once M * N * K exceeds this (OpenBLAS 0.3.31 at 2 threads, per-thread CPU
    # time: (16 x 144) @ (144 x 1024), (64 x 64) @ (64 x 256) and (32 x 256) @ (256 x 64) ran on both threads,
    # the last at 2.6x the CPU time of one thread; every shape of 2**18 or less ran on one). Kernels keep such
    # GEMMs out of ember's threads (in blocks below this, or from the calling thread).
    blas_threaded_mnk: int = 1 << 18
    # Stride-1 3x3 convolutions take Winograd F(2x2, 3x3) when large enough (``winograd.applies``); False: im2col.
    winograd: bool = True
    # Input elements (C * rows * W * N) per Winograd band: fastest on a CIFAR ResNet's 16-64 channel layers
    # (smaller bands pay NumPy's per-call cost, larger ones fall out of cache).
    winograd_band_elements: int = 1 << 15
    # A stride-1 convolution's input gradient (and a stride-1 transposed convolution's forward) as a convolution
    # with the flipped kernel; False: col2im's scatter-add, the general path.
    transposed_as_conv: bool = True
    # Interpolation along an axis of at most this many input positions multiplies by a dense resampling matrix;
    # longer axes (or ``dense_resample`` False) gather and weight the taps: a dense row costs 2 * in flops for
    # the K taps' work.
    dense_resample: bool = True
    dense_resample_max_in: int = 320

    @contextlib.contextmanager
    def override(self, **changes) -> Iterator[KernelPolicy]:
        """Set some fields for a ``with`` block, restoring them after (an unknown name raises TypeError)."""
        names = {f.name for f in fields(self)}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"KernelPolicy has no field(s) {sorted(unknown)}")
        saved = {name: getattr(self, name) for name in changes}
        for name, value in changes.items():
            setattr(self, name, value)
        try:
            yield self
        finally:
            for name, value in saved.items():
                setattr(self, name, value)

    def use_compiled(self) -> bool:
        """Whether compiled kernels run now: ``compiled`` is on and numba imports (the first call imports it, so
        call this only where a compiled kernel is about to run)."""
        return self.compiled and load_numba() is not None


policy = KernelPolicy()

__all__ = ["KernelPolicy", "policy"]
