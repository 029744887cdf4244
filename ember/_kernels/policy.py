"""The one object that decides which kernel runs: compiled (numba) or NumPy, threaded or not, and the convolution's
algorithm (Winograd or im2col, the transposed-convolution gradient as a convolution or by col2im, the DCGAN
transposed convolution by Winograd or col2im, interpolation's dense matrices or taps). Every threshold a kernel
consults lives here, with the measurement behind it.

``ember._kernels.policy`` is the process's instance. Its fields are plain attributes; ``policy.override(...)``
changes some for a ``with`` block and restores them after (how tests pin a path or lower a threshold for
themselves). Nothing here is read at import time but ``EMBER_KERNELS``, ``EMBER_OMP_KERNELS`` and
``EMBER_OMP_GEMM``: ``EMBER_KERNELS=numpy`` in the environment starts the process with the NumPy kernels (as when
numba cannot be imported); ``policy.compiled = False`` does the same later. ``EMBER_OMP_KERNELS=1`` starts it with
``omp`` on and, unless ``EMBER_OMP_GEMM`` says otherwise, ``omp_gemm`` (one pool for the whole step);
``EMBER_OMP_GEMM=1`` / ``0`` sets ``omp_gemm`` alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from . import _omp
from ._jit import load_numba, numba_loaded


def _compiled_from_env() -> bool:
    return os.environ.get("EMBER_KERNELS", "").strip().lower() != "numpy"


def _omp_from_env() -> bool:
    return os.environ.get("EMBER_OMP_KERNELS", "").strip().lower() in ("1", "on", "true", "yes")


def _omp_gemm_from_env() -> bool:
    """``EMBER_OMP_GEMM`` where set, else as ``omp`` (``EMBER_OMP_KERNELS``): one switch puts the row kernels and
    the GEMMs on numba's OpenMP threads together (``EMBER_OMP_GEMM=0`` keeps the GEMMs off)."""
    value = os.environ.get("EMBER_OMP_GEMM", "").strip().lower()
    return value in ("1", "on", "true", "yes") if value else _omp_from_env()


def _blas_threads_from_env() -> int:
    """OpenBLAS's thread count as it reads it at start-up: OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS,
    else the cores."""
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


@dataclass
class KernelPolicy:
    """Which kernel runs. Every field only picks a path or a split: never what a kernel computes beyond rounding
    (compiled and NumPy kernels agree bit for bit where their arithmetic is the same, to PyTorch's tolerance
    otherwise; threaded kernels give the same bits for any thread count)."""

    # Compiled (numba) kernels where one exists and numba imports; False: the NumPy reference kernels everywhere.
    compiled: bool = field(default_factory=_compiled_from_env)
    # Compiled kernels written with a ``prange`` loop split over threads as one parallel region on numba's OpenMP
    # layer (``kernel.parallel``, ``_omp.py``: a few µs to start when its workers are spinning) where that layer
    # loads, instead of in chunks over ember's Python workers (50-300 µs a hand-off on an idle VM). The same bits
    # either way. OFF (``EMBER_OMP_KERNELS=1`` turns it on): on the shared 2-core machine (load 13-16, ``nice -15``)
    # the ResNet-style step at two threads took 711-749 ms of CPU and 2.2-3.9 s of wall clock per step against
    # 156-177 ms and 0.5-0.9 s with ember's pool (GNU OpenMP's workers spin after each region, on the core ember's
    # own workers and OpenBLAS's need; PyTorch's OpenMP slowed the same way there: torch.exp at two threads 21 ms
    # against 0.12 at one). Idle (2026-12-06, both switches): the GPT-style step a fifth shorter, LLaMA-style a tenth,
    # the ResNet-style, WGAN-GP and per-sample rows 40-60 % longer (its workers spin on the convolutions' core: since
    # then the convolutions' chunks run on the same threads, ``omp_chunks``, and the spin is ``omp_spin_count``).
    # With it on, the row kernels (LayerNorm, softmax, GELU, Adam, ...) run as regions from ``omp_min_elements``;
    # with ``omp_gemm`` too, the GPT-style and LLaMA-style steps at two threads took 33.5 / 90.0 ms of wall clock
    # against 61.3 / 186.7 off, in one process alternating (load 18, ``nice -15``), GPT inference at batch 1 3.25
    # against 2.08 (docs/benchmarks.md, 2026-12-06, "row kernels on OpenMP's spinning threads", and its idle A/B).
    omp: bool = field(default_factory=_omp_from_env)
    # GEMMs OpenBLAS would thread (more than ``blas_threaded_mnk`` multiply-adds, 96 rows or more) split into blocks
    # of rows on numba's OpenMP threads, each block one OpenBLAS call held to one thread (``omp_gemm.py``), instead of
    # on OpenBLAS's threads or held whole (``blas_one_thread_mnk``): with ``omp``, one set of threads for the whole
    # process, as PyTorch's. The bits of a GEMM on one thread, for any thread count. OFF (``EMBER_OMP_GEMM=1`` turns
    # it on; unset, it follows ``EMBER_OMP_KERNELS``): measured idle without ``omp``'s row kernels (no gain) and
    # loaded with them (docs/benchmarks.md, 2026-12-06, "one set of threads", "row kernels on OpenMP's spinning
    # threads").
    omp_gemm: bool = field(default_factory=_omp_gemm_from_env)
    # With ``omp``, the chunks ember's own pool would run (``_parallel.parallel_for``: the convolutions' bands,
    # samples and GEMM blocks, their layout copies and col2im, stacked products) run as one region on numba's OpenMP
    # threads (``_omp.run_chunks``, each chunk a callback into Python, OpenBLAS held to one thread), so that a step
    # at two threads wakes one set of threads only: ember's Python workers are never woken, and none competes with
    # the OpenMP workers' spin after each region for the second core (idle, that spin made the convolution rows
    # 40-60 % longer with ``omp`` on: docs/benchmarks.md, 2026-12-06, "one set of threads under omp"). The same
    # chunks, so the same bits. Without ``omp`` nothing changes; False: ember's pool under ``omp`` too (the A/B).
    omp_chunks: bool = True
    # How long numba's OpenMP workers spin after a region before they sleep (GNU OpenMP's ``GOMP_SPINCOUNT``, in
    # pauses), set while ember starts numba's OpenMP layer and only where the program set neither ``GOMP_SPINCOUNT``
    # nor ``OMP_WAIT_POLICY`` (``_omp._spin_env``; read once, when libgomp loads: changing it later changes
    # nothing). The gaps between a convolution step's regions under ``omp`` with ``omp_chunks`` (loaded machine):
    # median 0.2-0.4 ms, 94-99 % under 1 ms; 20,000 pauses spin about that long here, GNU OpenMP's default (300,000)
    # a few ms and on after the step. ResNet-style step at two threads, alternating in one process (load 16-17,
    # raised), ms of CPU a step, calling thread / OpenMP worker: 72.8-83.9 / 68.5-79.0 at 20,000, 113.7-117.5 /
    # 104.2-104.4 at the default; wall clock within the load's noise (docs/benchmarks.md, 2026-12-06, "one set of
    # threads under omp"). None: GNU OpenMP's default.
    omp_spin_count: int | None = 20000
    # With ``omp``, the row kernels (LayerNorm / RMSNorm forward and backward, softmax / log_softmax, softmax's and
    # attention's gradient, GELU / SiLU, the embedding's gather, the optimizers' updates) run as one ``prange``
    # region over their rows on numba's OpenMP threads from this many elements (``_omp.region_threads``), instead
    # of from ``min_parallel_pass_elements`` over ember's pool: a region with spinning workers starts in a few µs,
    # where a hand-off to ember's workers costs 50-300 µs. Back-to-back calls, (R, 128) float32, one thread against
    # one region of two, µs (load 17, ``nice -15``): LayerNorm 4.6 / 4.6 at 8 Ki elements, 7.9 / 6.3 at 16 Ki,
    # 30.2 / 17.4 at 64 Ki; softmax 5.8 / 5.2, 10.5 / 7.5, 43.9 / 23.1; GELU with its derivative 6.3 / 4.8, 12.2 /
    # 7.3, 48.7 / 23.6 (docs/benchmarks.md, 2026-12-06, "row kernels on OpenMP's spinning threads"). The same
    # threshold for the passes with a ``kernel.parallel`` form that otherwise split from ``min_parallel_pass_elements``
    # or ``min_parallel_elements`` (BatchNorm's training forward and backward, ReLU's forward and gradient, max
    # pooling's compiled forward and backward: ``_parallel.parallel_kernel`` / ``parallel_flat``): serial / region at
    # two threads, 20th percentile of 200 calls, µs (load 15, in a raised session): BatchNorm forward 13 / 12 at
    # 32 Ki, 22 / 15 at 64 Ki, 41 / 29 at 128 Ki, 92 / 48 at 256 Ki; ReLU 4 / 4, 6 / 5, 11 / 7, 34 / 13 (break-even
    # near 32 Ki for these, 8-16 Ki for the row kernels); a region whose worker has gone to sleep
    # (``GOMP_SPINCOUNT=2000``) took 108-112 µs at 16-32 Ki.
    omp_min_elements: int = 1 << 14
    # Below this many elements per call a kernel runs on one thread (a pass over 64 Ki float32 takes ~15-30 µs,
    # about the cost of handing a chunk to the pool and waiting for it). For kernels whose chunks are a few long
    # NumPy/BLAS calls or one compiled loop: convolution bands, pooling, attention's stacked products, and the
    # compiled GELU and SiLU (64 Ki elements take them 33-60 µs at one thread, so two chunks save about as much as
    # the hand-off costs and larger arrays gain).
    min_parallel_elements: int = 1 << 16
    # The same for compiled kernels of one or two passes over a whole activation: ReLU's forward and gradient,
    # BatchNorm's training forward and backward, the convolutions' layout copies (``conv_layout``'s batch-last and
    # (N, C, *) copies), and the row kernels of a few passes: LayerNorm's and RMSNorm's forward and backward,
    # softmax, log_softmax and their gradients (attention's too), the embedding's gather (split from 64 Ki until
    # 2026-12-06: the GPT-style step's ten LayerNorm calls of 128 Ki handed off to the worker each time; the
    # LLaMA-style step's RMSNorm forward, 128 Ki a call, took 1.21 ms a step at one thread, 2.06 split at two, idle).
    # Their calls are short, so below this a split saves less than a hand-off costs on the idle 2-core VM (50-300
    # µs: the worker woken, the GIL handed back and forth, the caller woken again; RMSNorm at 128 Ki elements took
    # 1.7x as long split, idle). One thread, CPU, (32, C, H, W) float32 (load 11): ReLU forward / gradient,
    # BatchNorm forward / backward 33 / 30 / 91 / 68 µs at 128 Ki elements, 68 / 111 / 167 / 159 at 256 Ki, 157 /
    # 230 / 297 / 272 at 512 Ki; the padded batch-last copy 74 µs at 200 Ki, 160 at 324 Ki, 288 at 512 Ki. The
    # ResNet-style step at two threads (alternating in one process, load 9; from 64 Ki / 512 Ki): hand-offs 105 / 54
    # a step, the workers blocked 290 / 149 times, the calling thread's CPU 73.0 / 72.7 ms, the workers' 52.4 /
    # 46.6; the WGAN-GP critic step 63 / 31, 183 / 90, 40.7 / 44.1, 23.5 / 21.2 (docs/benchmarks.md).
    min_parallel_pass_elements: int = 1 << 19
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
    # OpenBLAS's own threads (fixed at start-up). At 1 no GEMM is split into blocks: it cannot thread anyway, and
    # blocks of 8-32 columns ran a strided convolution's GEMMs at 60-80 % of one whole GEMM's speed.
    blas_threads: int = field(default_factory=_blas_threads_from_env)
    # A convolution (forward or backward) of more than one sample holds OpenBLAS to one thread while it runs
    # (``_parallel.one_blas_thread``, through ``openblas.hold``), so its GEMMs run whole on whichever of ember's
    # threads computes them, instead of in ``gemm_block`` blocks or on OpenBLAS's threads (one sample's convolution
    # keeps them: its GEMMs are most of its work). Measured per-thread CPU time at two threads (ember's and
    # OpenBLAS's), alternating in one process, loaded machine: a DCGAN layer's ConvTranspose2d fwd + bwd 122 -> 86 ms
    # (one thread: 83; its 64 x 128 @ 128 x 512 tile GEMMs ran in blocks of 32 columns), the WGAN-GP critic step
    # 131 -> 70 (its wide GEMMs on OpenBLAS's threads, the caller spinning while it waited). False: the blocks.
    # ON since 2026-12-05: on the idle machine, wall clock at two threads beside PyTorch (``run_all.py --threads 2``,
    # medians of 3 processes, held / not held), two A/Bs that agree: 14:11 UTC WGAN-GP 1.43 / 1.50, ResNet-style
    # 1.39 / 1.42, small CNN 1.27 / 1.34, DCGAN layer 1.11 / 1.17, per-sample 1.37 / 1.31; 16:35-16:39 UTC (two runs
    # each) WGAN-GP 1.56, 1.53 / 1.63, 1.58, ResNet-style 1.35, 1.38 / 1.49, 1.42, small CNN 1.26, 1.31 / 1.33,
    # 1.35, DCGAN layer 1.17, 1.19 / 1.14, 1.17, per-sample 1.32, 1.26 / 1.31, 1.37. (On 2026-12-03 the hold had
    # measured far slower idle, the ResNet-style step 315-329 against 74-108 ms: not seen again since.)
    one_blas_thread: bool = True
    # Inter-op parallelism in a backward: two independent sets of GEMMs of one node run at once, the input gradient
    # whole on ember's worker and the weight gradient whole on the calling thread (``_parallel.side_by_side``), each
    # with its passes after the GEMMs, instead of one after the other (or as one split, each thread a share of both)
    # with each later pass split again: one hand-off instead of two or three, and the passes of one overlap the
    # other's GEMMs. For a per-example convolution's (``vmap(grad)``'s) gradients (``func/_per_example.py``) and a
    # batch-last im2col convolution's (``nn/_ops/conv.py``: the input gradient's GEMMs, col2im and its copy back to
    # (N, C, *in) on the worker; the weight gradient's GEMMs and their sum here). The same GEMMs, rows and channels,
    # so the same bits. Two threads, alternating in one process (``bench/policy_ab.py inter_op``, loaded machine,
    # docs/benchmarks.md 2026-12-07 afternoon): the calling thread's CPU 3-7 % lower, 28 -> 24 hand-offs a WGAN-GP
    # critic step and 16 -> 14 a per-sample step, all threads' CPU within the noise. OFF: the idle wall-clock A/B
    # (``bench/policy_ab.py inter_op``, 2026-12-07 14:17 UTC, load 1.4, medians of 6 x 3 steps) read WGAN-GP 52.2 ms
    # off against 55.6 on, per-sample gradients 18.3 / 18.2, ConvTranspose2d 46.1 / 47.0, ResNet-style 78.5 / 79.3.
    # (A convolution's weight and input GEMMs each whole on one thread inside ``parallel_for_all``, with col2im and
    # the copy back still split after, measured no different and was not kept.)
    inter_op: bool = False
    # A Linear's input and weight gradients (``nn/_ops/linear.py``), two GEMMs that OpenBLAS would each thread (each
    # over ``blas_one_thread_mnk``), run at once at two threads: the input gradient on ember's worker, the weight
    # gradient on the calling thread, OpenBLAS held to one thread (``_parallel.side_by_side``), instead of one after
    # the other on OpenBLAS's two threads: one hand-off instead of two OpenBLAS wakes, and no split of the weight
    # gradient's few output rows (out_features x in_features, summed over every input row). At more threads
    # OpenBLAS's threads, each GEMM over all (two GEMMs would leave the others idle; unmeasured). The bits of one
    # OpenBLAS thread, as at one thread: OpenBLAS's threaded GEMM splits the sum over K for a few outputs of a long
    # sum (a weight gradient of few features over many rows), which rounds otherwise. False: OpenBLAS's threads, one
    # GEMM after the other.
    linear_grads_at_once: bool = True
    # A float32 Linear's forward (two or more rows a half) as two GEMMs of half the rows each, at once in the same
    # way: the bits of one thread (double precision's GEMM sums an odd tail of rows in another order, and a one-row
    # half is a matrix-vector product: those stay one GEMM). False: one GEMM on OpenBLAS's threads.
    linear_forward_halves: bool = True
    # Attention's forward (the score GEMMs, the softmax, the products with v) and backward (four GEMMs and the
    # softmax's product) each as one split along the heads' first dim (``nn/_ops/attention.py``: ``_forward_at_once``,
    # ``_backward_at_once``) where ember's threads would split its stacked products (``stack_matmul``) anyway: one
    # hand-off instead of two forward and four backward, and the softmax rows (under ``min_parallel_pass_elements``
    # at the GPT- and LLaMA-style steps' (16, 4, 64, 64) scores) on both threads. The same bits. False: the products
    # one at a time.
    attention_at_once: bool = True
    # GEMMs OpenBLAS would thread, up to this M * N * K, run with OpenBLAS held to one thread (``openblas.matmul``:
    # Linear's products). ember sets OPENBLAS_THREAD_TIMEOUT=4, so OpenBLAS's second thread sleeps after each GEMM
    # and every threaded GEMM wakes it (50-300 µs of wall clock on the idle 2-core VM) to save at most half of a
    # GEMM that takes one thread ~110 µs at 3 M (64 x 128 by 384): below about 8 M (~300 µs) the wake costs more
    # than the split saves. GPT inference at batch 1 (nine GEMMs of 2.1-4.2 M) at two threads, alternating in one
    # process (load 10-13): 6.9 against 327 ms of wall clock a step and 1.9 against 91 ms of CPU (the caller and
    # OpenBLAS's thread spinning for each other on a busy machine); idle, 1.5 ms at one thread against 2.2 at two
    # (docs/benchmarks.md, 2026-12-06). The LLaMA-style and GPT-style steps' GEMMs (16-67 M, and the LM head's
    # 8.5 M) stay threaded. (Off until 2026-12-06: a hold up to 4 M measured no gain idle at batch 1 and a slower
    # LLaMA-style step, none of whose GEMMs it held; the lead's idle A/B of 1 M on the small CNN: within noise.)
    blas_one_thread_mnk: int = 1 << 23
    # A float32 Linear of a few rows computes ``(w @ x.T).T`` instead of ``x @ w.T`` where OpenBLAS's GEMM is slow on
    # the transposed weight (``nn/_ops/linear.py``: ``_swapped``): the same bits, up to 2.7x faster; False: always
    # ``x @ w.T``.
    swap_small_gemm: bool = True
    # Stride-1 3x3 convolutions take Winograd F(2x2, 3x3) when large enough (``winograd.applies``); False: im2col.
    winograd: bool = True
    # Input elements (C * rows * W * N) per Winograd band: fastest on a CIFAR ResNet's 16-64 channel layers
    # (smaller bands pay NumPy's per-call cost, larger ones fall out of cache).
    winograd_band_elements: int = 1 << 15
    # From this many tile columns per row (output width / 2) Winograd reads and writes (N, C, H, W) arrays directly
    # (its ``*_nchw`` transforms, a row at a time); narrower images take the batch-last transforms between layout
    # copies, where a row's few elements cost less than a loop's overhead. Measured on the CIFAR ResNet step
    # (batch 32; 32x32, 16x16 and 8x8 images: 16, 8 and 4 tiles), 1 thread, per-step CPU time min / lower
    # quartile (a loaded machine): direct from 16 tiles 97.7 / 101.3 ms, from 8 93.4 / 96.9, from 4 94.9 / 97.6,
    # never 108.3 / 113.3.
    winograd_nchw_min_tiles: int = 8
    # Narrower images at more than one thread: the batch-last transforms' bands gather their input from, and scatter
    # their output to, (N, C, H, W) themselves (``winograd.bands_nchw``), instead of whole-array layout copies on the
    # calling thread before and after the split (the same bits). False: the copies (the A/B's other side).
    winograd_bands_nchw: bool = True
    # ... for images of at most this many tile columns. Two threads, in one process alternating with the copies (CPU
    # a step, load 13-15): a CIFAR ResNet's 64-channel 8x8 layers (4 tiles) took 1.7-3.4 ms less of the calling
    # thread's time no worker matched and no more in all; a small CNN's 16 -> 32 channel 14x14 layer at batch 64 (7
    # tiles) none less of the calling thread's and 0.6-1.7 ms more in all (its gathers of 64 samples' 14-element
    # rows cost more than the copies they replace).
    winograd_bands_max_tiles: int = 4
    # A stride-1 convolution's input gradient (and a stride-1 transposed convolution's forward) as a convolution
    # with the flipped kernel; False: col2im's scatter-add, the general path.
    transposed_as_conv: bool = True
    # ... only where its GEMM work (a product per weight at every input position) is at most this many times
    # col2im's (at every output position): input positions / output positions, 1 for a 'same'-padded convolution.
    # A kernel as wide as its input (TextCNN's (3, 300)) makes it the input's width, and the correlation's column
    # matrix quadratic in the kernel's width (176 GiB asked at TextCNN's size). Measured forward + input gradient,
    # one thread, batch 32, 16-32 channels, least of 5 x 10, full correlation against col2im (loaded machine):
    # 'same' 3x3 and 5x5 equal (0.79 / 0.81, 4.31 / 4.15, 12.2 / 12.3 ms); valid 3x3 at ratio 1.31 and 1.44
    # 3.21 / 3.70 and 1.85 / 1.99 (Winograd takes the correlation), at 1.56 and 1.78 0.92 / 0.80 and 0.60 / 0.47;
    # valid 5x5 at 1.96 3.24 / 1.35, 7x7 at 3.1 15.7 / 4.2, 11x11 at 4 42.8 / 9.8.
    transposed_as_conv_max_ratio: float = 1.5
    # An im2col convolution (a kernel of more than one element) with at most this many output positions per sample
    # computes batch-last, one GEMM per output row over the whole batch, instead of in (N, C, *spatial) layout with
    # one GEMM per sample: GEMMs of 16-64 columns ran at half speed (a WGAN critic's 4x4 stride-2 convolutions to
    # 8x8 and 4x4, a ResNet's stride-2 3x3 to 8x8), more than the layout copies cost. 0: always (N, C, *spatial).
    batch_last_max_positions: int = 64
    # Those of them with a 4x4 kernel at stride 2 (a WGAN or DCGAN critic's) compute their forward by Winograd F(m, 2)
    # on the input's four stride-2 phases (``nn/_ops/conv_phases.py``: 9/16 or 25/64 of the GEMM work, no copy back
    # to (N, C, H, W)), and their weight gradient by the same Winograd's transpose on the kept input tiles; their
    # input gradient keeps col2im. False: the im2col forward and weight gradient. Measured one thread, batch 32, ms
    # of CPU, im2col / this / PyTorch (loaded machine): 32 -> 64 channels to 8 x 8 2.2 / 1.5 / 1.2 and 64 -> 128 to
    # 4 x 4 1.8 / 1.4 / 1.3 forward; the backward (three gradients) 5.4 / 3.8 / 4.1 and 4.8 / 4.4 / 3.8.
    strided_winograd: bool = True
    # The DCGAN transposed convolution (4x4 kernel, stride 2, padding 1) by Winograd F(4, 2) per output phase
    # (``conv_transpose_winograd.py``: 0.39x the GEMM work in each direction); False: col2im / im2col. Only with
    # at least ``_min_channels`` channels in and out and N * C_in * C_out * H * W of at least ``_min_work``:
    # measured fwd + bwd at one thread, Winograd against col2im: (64, 512, 4, 4) -> 256 channels 143 vs 161 ms,
    # (64, 256, 8, 8) -> 128 101 vs 162, (32, 128, 8, 8) -> 64 19.3 vs 23.4; even at (8, 128, 16, 16) -> 64 and
    # (32, 32, 16, 16) -> 16 (24.3 vs 24.6, 11.7 vs 11.9); slower for a 3-channel output layer ((64, 64, 32, 32)
    # 94 vs 48 ms: 100 GEMMs of 3 rows) and for small layers ((16, 32, 4, 4) -> 16: 0.55 vs 0.37 ms).
    transposed_winograd: bool = True
    transposed_winograd_min_channels: int = 64
    transposed_winograd_min_work: int = 1 << 24
    # Interpolation along an axis of at most this many input positions multiplies by a dense resampling matrix;
    # longer axes (or ``dense_resample`` False) gather and weight the taps: a dense row costs 2 * in flops for
    # the K taps' work.
    dense_resample: bool = True
    dense_resample_max_in: int = 320
    # One-pass kernels that only save NumPy a pass or two (optimizer updates, ReLU's gradient) take the NumPy path on
    # fewer elements than this: a pass over 16 Ki float32 takes a few microseconds either way, while the first
    # compiled kernel a process runs costs numba's import and the kernel's load from its cache (0.4-0.5 s on an
    # idle 2-core machine): a toy model's first ``step()`` paid it.
    min_compiled_elements: int = 1 << 14
    # Normal draws below ``min_compiled_elements`` run their transform compiled anyway once ember's kernels have
    # loaded numba, or once the NumPy-path transforms (0.2-0.5 ms a draw of 16-4096 float32 values, the compiled
    # one a few microseconds) have cost the process this many seconds, about numba's load (``ember._random_normals``).
    normal_numpy_budget_s: float = 0.5
    # A draw of the generator's words (``rand``, ``uniform_``, ``randint``, dropout's test, ``normal_``'s uniforms;
    # ``ember._kernels.mt19937``) runs compiled from this many values on: each compiled draw reads NumPy's mt19937
    # state out and writes it back (``MT19937.state``: 75 + 92 µs of CPU at load 14 on the 2-core AMD EPYC machine,
    # 2026-12-07; the kernel itself 4 µs on 16 values), where the NumPy path pays per word. ``torch.rand(n)``
    # float32, CPU µs per call, compiled / NumPy, medians of 5-9 alternating runs (load 11-16): 4 Ki 243-283 /
    # 65-94, 16 Ki 336-371 / 171-202, 32 Ki 325-455 / 224-313, 64 Ki 359-726 / 369-596 (NumPy / compiled
    # 0.82-1.03), 96 Ki 539 / 609 (1.13), 128 Ki 587-1097 / 729-1160 (0.88-1.24), 256 Ki 1032-1740 / 1423-2095
    # (1.0-1.38), 512 Ki 1931 / 2993 (1.55): the compiled draw pays from about 96 Ki on (docs/benchmarks.md,
    # "the compiled draw's threshold"; ``bench/compiled_draw_threshold.py``).
    min_compiled_draw: int = 96 << 10
    # A sparse gradient of nnz entries over a table of up to this many rows per entry is coalesced by the compiled
    # kernel, which marks every table row (``embedding.distinct_rows``); sparser ones are sorted (the reference).
    # 8192 entries of 128 float32, one thread: marked 0.20 / 0.35 / 0.58 / 1.01 ms at 6 / 32 / 64 / 128 rows per
    # entry, sorted 0.7-1.1 ms.
    coalesce_table_ratio: int = 64

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

    def compiles(self, elements: int, least: int) -> bool:
        """``use_compiled()`` for a kernel over ``elements`` values that is worth compiling from ``least`` on
        (below it, the NumPy path runs and numba is not loaded)."""
        return elements >= least and self.use_compiled()

    def compiles_or_loaded(self, elements: int) -> bool:
        """``use_compiled()`` for a kernel over ``elements`` values whose NumPy path is slow past a few rows (the
        replays of ``std::sort``: sort's order of equal values, mode's index): from ``min_compiled_elements`` on, or
        at any size once numba is loaded (a further kernel then costs only its load from the cache)."""
        return (elements >= self.min_compiled_elements or numba_loaded()) and self.use_compiled()

    def use_compiled(self) -> bool:
        """Whether compiled kernels run now: ``compiled`` is on and numba imports (the first call imports it, so
        call this only where a compiled kernel is about to run)."""
        return self.compiled and load_numba() is not None

    def use_omp(self) -> bool:
        """Whether ``kernel.parallel`` dispatchers run now (``omp`` and compiled kernels on, numba's OpenMP layer
        loaded, not a forked child); the first call decides the layer (``_omp.available``)."""
        return self.omp and self.use_compiled() and _omp.available()


policy = KernelPolicy()

__all__ = ["KernelPolicy", "policy"]
