"""CPU time of paths that were correct but slow (docs/benchmarks.md, "five slow paths", "sort's and mode's
std::sort"): ``mode`` on rows with ties, ``sort`` without ``stable=True``, half-precision ``nll_loss``,
``view``/``reshape``, binary ops and other small ops after a meta tensor exists, complex and real subtraction, and
the activations' backward on a row-major 32x32 input.

    PYTHONPATH=<an ember checkout> python bench/slow_paths.py [mode|sort|nll|view|sub|act|small ...] [--torch] [--meta]

Run it from each checkout in turn (alternating) to compare; ``--torch``: the same calls on PyTorch where they
exist (mode, sort, nll); ``--meta``: make one meta tensor first (view, sub, small). Each figure is the least of several
samples of ``time.thread_time`` (one thread's CPU time: meaningful on a loaded machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def best(f, calls: int, samples: int = 5, warm: int = 1) -> float:
    """The least CPU seconds per call of ``f`` over ``samples`` samples of ``calls`` calls."""
    for _ in range(warm):
        f()
    least = float("inf")
    for _ in range(samples):
        t = time.thread_time()
        for _ in range(calls):
            f()
        least = min(least, (time.thread_time() - t) / calls)
    return least


def bench_mode(m) -> str:
    rng = np.random.default_rng(0)
    out = []
    for shape, levels, dt in [((1000, 1000), 10, "int64"), ((100, 100), 5, "float32"), ((10000, 20), 3, "int64"),
                              ((10, 100000), 50, "float64")]:
        a = m.tensor(rng.integers(0, levels, size=shape).astype(dt))
        out.append(f"{shape} {dt}: {best(lambda a=a: a.mode(1), 1, 3) * 1e3:.1f} ms")
    return "ms per call: " + "; ".join(out)


def bench_sort(m) -> str:
    rng = np.random.default_rng(0)
    out = []
    for shape, levels, dt, desc in [((64, 32), 0, "float32", False), ((100, 1000), 0, "float32", False),
                                    ((100, 1000), 10, "int64", False), ((1000, 64), 4, "int64", True),
                                    ((100000,), 0, "float32", False), ((100000,), 100, "float32", True),
                                    ((100, 1000), 20, "float64", True)]:
        x = rng.standard_normal(shape) if not levels else rng.integers(0, levels, size=shape)
        a = m.tensor(x.astype(dt))
        kind = "ties" if levels else "distinct"
        out.append(f"{shape} {dt} {kind}{' desc' if desc else ''}: "
                   f"{best(lambda a=a, d=desc: m.sort(a, descending=d), 5, 5) * 1e3:.3f}")
    return "sort without stable=, ms per call: " + "; ".join(out)


def bench_nll(m) -> str:
    rng = np.random.default_rng(0)
    out = []
    for n, c in [(64, 10), (4096, 10), (65536, 10), (262144, 4)]:
        x = rng.standard_normal((n, c)).astype(np.float32) * 3
        t = m.tensor(rng.integers(0, c, n))
        for dt in ("float16", "bfloat16"):
            xx = m.tensor(x).to(getattr(m, dt))
            out.append(f"{n}x{c} {dt} {best(lambda xx=xx, t=t: m.nn.functional.nll_loss(xx, t), 1) * 1e3:.2f}")
    return "nll_loss forward, ms: " + " | ".join(out)


def bench_view(m) -> str:
    x = m.randn(8, 64)
    y = m.randn(64, 8).t()
    w = m.randn(8, 64, requires_grad=True)
    cases = [("view(4, 2, 64)", lambda: x.view(4, 2, 64)), ("reshape(512)", lambda: x.reshape(512)),
             ("t().view(8, 8, 8)", lambda: y.view(8, 8, 8)), ("view of a leaf needing grad", lambda: w.view(512)),
             ("x + y", lambda: x + x), ("x.tanh()", lambda: x.tanh()), ("w * y", lambda: w * x)]
    return "µs: " + " | ".join(f"{name} {best(f, 20000, warm=2000) * 1e6:.2f}" for name, f in cases)


def bench_small(m) -> str:
    x, w = m.randn(8, 64), m.randn(64, 32, requires_grad=True)
    i = m.tensor([0, 3, 5])
    cases = [("x.sum()", lambda: x.sum()), ("x.sum(1)", lambda: x.sum(1)), ("x.exp()", lambda: x.exp()),
             ("x @ w", lambda: x @ w), ("x[i]", lambda: x[i]), ("x.t() + 1", lambda: x.t() + 1),
             ("x * 2 + x", lambda: x * 2 + x),
             ("relu(x @ w).sum().backward()", lambda: (x @ w).relu().sum().backward())]
    return "µs: " + " | ".join(f"{name} {best(f, 3000, 5, 300) * 1e6:.2f}" for name, f in cases)


def bench_sub(m) -> str:
    x, y, i = m.randn(8, 64), m.randn(64), m.ones(8, 64, dtype=m.int64)
    z, zy = m.randn(8, 64, dtype=m.complex64), m.randn(64, dtype=m.complex64)
    cases = [("x - y (broadcast)", lambda: x - y), ("x - 2.0", lambda: x - 2.0), ("i - 1", lambda: i - 1),
             ("2.0 - x", lambda: 2.0 - x), ("z - zy", lambda: z - zy), ("z - 1j", lambda: z - 1j),
             ("1j - z", lambda: 1j - z)]
    return "µs: " + " | ".join(f"{name} {best(f, 10000, 7, 2000) * 1e6:.2f}" for name, f in cases)


def bench_act(m) -> str:
    import ember

    fns = {"tanh": ember.tanh, "sigmoid": ember.sigmoid, "relu": ember.relu, "gelu": ember.nn.functional.gelu,
           "hardtanh": ember.nn.functional.hardtanh}
    out = []
    for name, f in fns.items():
        node = f(ember.randn(32, 32, requires_grad=True)).grad_fn
        g = ember.ones(32, 32)._data
        out.append(f"{name} {best(lambda node=node, g=g: node.backward(g), 20000, 7, 3000) * 1e6:.2f}")
    return "node.backward on 32x32 float32, µs: " + " | ".join(out)


BENCHES = {"mode": bench_mode, "sort": bench_sort, "nll": bench_nll, "view": bench_view, "sub": bench_sub,
           "act": bench_act,
           "small": bench_small}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", default=list(BENCHES), choices=list(BENCHES) + [[]])
    parser.add_argument("--torch", action="store_true", help="PyTorch's figures (mode, nll)")
    parser.add_argument("--meta", action="store_true", help="make a meta tensor first")
    args = parser.parse_args()
    if args.torch:
        import torch as m

        torch_benches = {"mode", "nll", "sort"}
        m.set_num_threads(1)
    else:
        import ember as m

        torch_benches = set(BENCHES)
        print("ember from", os.path.dirname(m.__file__))
    if args.meta:
        m.empty(3, device="meta")
    for name in args.which:
        if name in torch_benches:
            print(f"{name}: {BENCHES[name](m)}", flush=True)


if __name__ == "__main__":
    main()
