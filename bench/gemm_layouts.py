"""The Linear GEMMs of GPT inference at batch 1 (64 rows; ``--rows`` for others), one thread: OpenBLAS with the
weight as Linear passed it before (``x @ w.T``, a transposed view), with the operands' roles swapped
(``(w @ x.T).T`` copied to C order: Linear's way for a few rows, ``linear._swapped``), with a contiguous copy of
``w.T``, and PyTorch's ``F.linear``; least µs of CPU time of 7 blocks per shape, one after the other; "same bits"
says whether the swapped and the copy's products are the bits of ``x @ w.T``.

    OMP_NUM_THREADS=1 python bench/gemm_layouts.py
    OMP_NUM_THREADS=1 python bench/gemm_layouts.py --rows 4 16 64
"""

from __future__ import annotations

import argparse
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
        start = time.process_time()  # (CPU time: the wall clock of a shared machine counts the others' work)
        for _ in range(reps):
            fn()
        best = min(best, (time.process_time() - start) / reps * 1e6)
    return best


def swapped(x, w):
    return np.matmul(w, x.T).T.copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[64])
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"{'rows, in, out':>16} {'x @ w.T':>9} {'swapped':>9} {'x @ copy':>9} {'F.linear':>9}  (µs)  same bits")
    for rows in args.rows:
        for _, k, n in SHAPES:
            m = rows
            x = rng.standard_normal((m, k), dtype=np.float32)
            w = rng.standard_normal((n, k), dtype=np.float32)
            wt, wt_copy = w.T, np.ascontiguousarray(w.T)
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)
            view = least_us(partial(np.matmul, x, wt))
            swap = least_us(partial(swapped, x, w))
            copy = least_us(partial(np.matmul, x, wt_copy))
            ref = least_us(partial(torch.nn.functional.linear, tx, tw))
            same = (np.array_equal(swapped(x, w), x @ wt), np.array_equal(x @ wt_copy, x @ wt))
            print(f"{str((m, k, n)):>16} {view:9.1f} {swap:9.1f} {copy:9.1f} {ref:9.1f}        {same[0]}, {same[1]}")


if __name__ == "__main__":
    main()
