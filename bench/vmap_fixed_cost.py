"""vmap's fixed cost: ``vmap(f)(x)`` of a tiny ``f``, ember and PyTorch, least of 15 blocks (wall and CPU).

    python bench/vmap_fixed_cost.py                                  # this checkout's ember, and PyTorch
    PYTHONPATH=/tmp/before python bench/vmap_fixed_cost.py --no-torch  # another checkout's ember

What a call costs besides its function's ops: the inputs' and outputs' pytrees and wrapping, entering and leaving
the vmap (ember swaps the bindings of its public functions in every loaded ember module: ``ember/_rebind.py``).
One thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if not os.environ.get("PYTHONPATH"):  # this checkout's ember (PYTHONPATH=another/checkout measures that one's)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def least(fn, x, blocks: int = 15, calls: int = 200) -> tuple[float, float]:
    """(wall, CPU) seconds per call, each the least over ``blocks`` blocks of ``calls`` calls."""
    wall = cpu = float("inf")
    for _ in range(blocks):
        w, c = time.perf_counter(), time.thread_time()
        for _ in range(calls):
            fn(x)
        wall = min(wall, (time.perf_counter() - w) / calls)
        cpu = min(cpu, (time.thread_time() - c) / calls)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-torch", action="store_true", help="ember only")
    parser.add_argument("--blocks", type=int, default=15)
    args = parser.parse_args()
    import ember

    frameworks = [("ember", ember)]
    if not args.no_torch:
        import torch

        torch.set_num_threads(1)
        frameworks.append(("torch", torch))
    print(f"ember from {os.path.dirname(os.path.dirname(ember.__file__))}; µs per call, least of {args.blocks} blocks")
    for label, fw in frameworks:
        x = fw.randn(4, 3)
        for name, f in (("identity", lambda a: a), ("a + 1", lambda a: a + 1)):
            mapped = fw.func.vmap(f)
            wall, cpu = least(mapped, x, args.blocks)
            print(f"{label:6} vmap({name}): wall {wall * 1e6:7.1f}  CPU {cpu * 1e6:7.1f}")


if __name__ == "__main__":
    main()
