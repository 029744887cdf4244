"""The Linear GEMMs of GPT inference at batch 1 (64 rows), one thread: OpenBLAS with the weight as Linear passes
it (``x @ w.T``, a transposed view), with a contiguous copy of ``w.T``, and PyTorch's ``F.linear``; least µs of
7 blocks per shape, the three interleaved.

    OMP_NUM_THREADS=1 python bench/gemm_layouts.py
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch

SHAPES = [(64, 128, 384), (64, 128, 128), (64, 128, 512), (64, 512, 128)]  # (rows, in, out): qkv, proj, fc, fc2


def least_us(fn, reps: int = 400, blocks: int = 7) -> float:
    for _ in range(30):
        fn()
    best = float("inf")
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - start) / reps * 1e6)
    return best


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"{'rows, in, out':>16} {'x @ w.T':>9} {'x @ copy':>9} {'F.linear':>9}  (µs)")
    for m, k, n in SHAPES:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((n, k), dtype=np.float32)
        wt, wt_copy = w.T, np.ascontiguousarray(w.T)
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        view = least_us(partial(np.matmul, x, wt))
        copy = least_us(partial(np.matmul, x, wt_copy))
        ref = least_us(partial(torch.nn.functional.linear, tx, tw))
        print(f"{str((m, k, n)):>16} {view:9.1f} {copy:9.1f} {ref:9.1f}")


if __name__ == "__main__":
    main()
