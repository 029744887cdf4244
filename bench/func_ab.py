"""ember alone: changed functions against their source in an earlier checkout, alternating in one process.

    git archive 0d31017 | tar -x -C /tmp/before        # the code before, as a folder
    python bench/func_ab.py /tmp/before ember._parallel:stack_matmul ember.ops.activation:softmax_rows \\
        --workloads gpt_infer1 gpt_tiny --ops sdpa_tiny arange

Each named function (``module:qualname``) is compiled again from the earlier checkout's source, in its module's own
namespace, and the two versions' code is swapped into the function object itself, so every binding and wrapper of
it runs the version chosen (``ember.arange`` is the out= wrapper of the allocation wrapper of the function). Then
rounds of one block per version, the order flipping every round, so drift on a shared machine hits both alike; the
least CPU time per step (per call for ``--ops``) over the rounds, and the ratio. One thread. A function's earlier
source must have the same closure variables; module-level names it reads are this checkout's.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's ember
import ember  # noqa: E402


def earlier(base: str, modname: str, qual: str):
    """The function ``qual`` of module ``modname`` as the checkout in ``base`` defines it (decorators included),
    compiled in the live module's namespace (which keeps its own binding of the name)."""
    mod = importlib.import_module(modname)
    path = os.path.join(base, *modname.split(".")) + ".py"
    with open(path, encoding="utf-8") as f:
        src = f.read()
    body, node = ast.parse(src).body, None
    for part in qual.split("."):
        node = next(n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
        body = node.body
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    code = "\n".join(line[node.col_offset:] for line in src.splitlines()[first:node.end_lineno])
    name, space = qual.split(".")[-1], mod.__dict__
    had, kept = name in space, space.get(name)
    exec(compile(code, path, "exec"), space)  # noqa: S102 - the checkout's own source, a benchmark's input
    fn = space[name]
    if had:
        space[name] = kept
    else:
        del space[name]
    return fn


def innermost(fn):
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    return fn


def ops() -> dict:
    """Small ops by name (one call each): where a change shows apart from a whole step."""
    rng = np.random.default_rng(0)
    F = ember.nn.functional

    def t(*shape):
        return ember.tensor(rng.standard_normal(shape).astype(np.float32))

    q, q64, x, piece = t(1, 2, 16, 16), t(1, 4, 64, 32), t(1, 16, 32), t(1, 16, 96).split(32, dim=2)[0]
    a, b = t(4).requires_grad_(), t(4).requires_grad_()
    lin, ln = ember.nn.Linear(32, 96), ember.nn.LayerNorm(32)
    xg, qg = t(1, 16, 32).requires_grad_(), t(1, 2, 16, 16).requires_grad_()
    lin128, x4, x16, x64, x3 = ember.nn.Linear(128, 384), t(1, 4, 128), t(1, 16, 128), t(1, 64, 128), t(1, 16, 96)
    xp = t(16, 32, 32).requires_grad_()
    tok, pos, h = t(1, 64, 128), t(64, 128), t(1, 64, 384)  # gpt_infer1's embeddings and its qkv output
    tokg = t(1, 64, 128).requires_grad_()
    table, idx = ember.nn.Embedding(65, 128), ember.tensor(rng.integers(0, 65, (1, 64)))  # gpt_infer1's lookups
    fc, out, f64 = ember.nn.Linear(128, 512), ember.nn.Linear(512, 128), t(1, 64, 512)  # its MLP's Linear layers

    def pooled(pool):
        xp.grad = None
        pool(xp).sum().backward()

    logits = {(r, n): t(r, n).requires_grad_() for r, n in ((64, 8192), (512, 65))}
    targets = {(r, n): ember.tensor(rng.integers(0, n, r)) for r, n in logits}

    def cross_entropy(r, n):
        z = logits[r, n]
        z.grad = None
        F.cross_entropy(z, targets[r, n]).backward()

    return {  # name -> (call, under no_grad)
        "log_softmax_64x8192": (lambda: F.log_softmax(logits[64, 8192], -1), True),
        "log_softmax_512x65": (lambda: F.log_softmax(logits[512, 65], -1), True),
        "cross_entropy_64x8192": (lambda: cross_entropy(64, 8192), False),
        "cross_entropy_512x65": (lambda: cross_entropy(512, 65), False),
        "max_pool1d": (lambda: pooled(lambda v: F.max_pool1d(v, 2)), False),
        "max_pool1d_k3s2p1": (lambda: pooled(lambda v: F.max_pool1d(v, 3, 2, 1)), False),
        "adaptive_avg_pool1d": (lambda: pooled(lambda v: F.adaptive_avg_pool1d(v, 8)), False),
        "sdpa_tiny": (lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True), True),
        "sdpa_64x32": (lambda: F.scaled_dot_product_attention(q64, q64, q64, is_causal=True), True),
        "arange": (lambda: ember.arange(64), False),
        "linear": (lambda: lin(x), True),
        "layer_norm": (lambda: ln(x), True),
        "view": (lambda: piece.view(1, 16, 2, 16), True),
        "view_contiguous": (lambda: x.view(1, 16, 2, 16), True),
        "reshape": (lambda: x.reshape(16, 32), True),
        "permute": (lambda: q.permute(0, 2, 1, 3), True),
        "unsqueeze": (lambda: x.unsqueeze(0), True),
        "contiguous": (lambda: q.transpose(1, 2).contiguous(), True),
        "split": (lambda: x3.split(32, dim=2), True),
        "linear_4x128": (lambda: lin128(x4), True),
        "linear_16x128": (lambda: lin128(x16), True),
        "linear_64x128": (lambda: lin128(x64), True),
        "linear_fc_64x128": (lambda: fc(x64), True),
        "linear_out_64x512": (lambda: out(f64), True),
        "embedding_1x64": (lambda: table(idx), True),
        "embedding_1x64_recorded": (lambda: table(idx), False),
        "transpose": (lambda: piece.transpose(1, 2), True),
        "view_recorded": (lambda: xg.view(1, 16, 2, 16), False),
        "permute_recorded": (lambda: qg.permute(0, 2, 1, 3), False),
        "unsqueeze_recorded": (lambda: xg.unsqueeze(0), False),
        "contiguous_recorded": (lambda: qg.transpose(1, 2).contiguous(), False),
        "add_recorded": (lambda: a + b, False),
        "add_broadcast": (lambda: tok + pos, True),
        "add_broadcast_recorded": (lambda: tokg + pos, False),
        "head_split": (lambda: [p.view(1, 64, 4, 32).transpose(1, 2) for p in h.split(128, dim=2)], True),
        "add_no_grad": (lambda: a + b, True),
        "sub_recorded": (lambda: a - b, False),
        "mul_recorded": (lambda: a * b, False),
        "div_recorded": (lambda: a / b, False),
        "add_number": (lambda: a + 1.0, False),
        "add_function": (lambda: ember.add(a, b), False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="a folder holding the earlier checkout")
    parser.add_argument("functions", nargs="+", help="module:qualname of each changed function")
    parser.add_argument("--workloads", nargs="*", default=["gpt_infer1", "gpt_tiny"])
    parser.add_argument("--ops", nargs="*", default=[])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20,
                        help="steps per block (ops: 2,000 calls, 300 for sdpa_64x32, the Linear layers, pooling, "
                             "log_softmax and cross_entropy)")
    args = parser.parse_args()
    ember.set_num_threads(1)
    import workloads

    cases = {}
    for name in args.workloads:
        build, batch, _ = workloads.WORKLOADS[name]
        step = build(ember, batch)
        cases[name] = (lambda step=step: [step(i) for i in range(args.steps)], args.steps, False)
    table = ops()
    for name in args.ops:
        call, no_grad = table[name]
        heavy = ("linear_", "max_pool", "adaptive", "log_softmax", "cross_entropy")
        n = 300 if name == "sdpa_64x32" or name.startswith(heavy) else 2000
        cases[name] = (lambda call=call, n=n: [call() for _ in range(n)], n, no_grad)
    swaps = []  # (function, this checkout's code, the earlier code): swapped in place
    for spec in args.functions:
        modname, qual = spec.split(":")
        fn = importlib.import_module(modname)
        for part in qual.split("."):
            fn = getattr(fn, part)
        fn, old = innermost(fn), innermost(earlier(args.base, modname, qual))
        if fn.__code__.co_freevars != old.__code__.co_freevars:
            parser.error(f"{spec}: its closure variables changed; it cannot be swapped")
        swaps.append((fn, (fn.__code__, fn.__defaults__, fn.__kwdefaults__),
                      (old.__code__, old.__defaults__, old.__kwdefaults__)))

    def use(which: int) -> None:
        for fn, *versions in swaps:
            fn.__code__, fn.__defaults__, fn.__kwdefaults__ = versions[which]

    least = {(name, v): float("inf") for name in cases for v in (0, 1)}
    for r in range(args.rounds + 1):  # round 0 warms up
        for name, (run, n, no_grad) in cases.items():
            for v in ((1, 0) if r % 2 else (0, 1)):
                use(v)
                with ember.no_grad() if no_grad else ember.enable_grad():
                    start = time.process_time()
                    run()
                    us = (time.process_time() - start) / n * 1e6
                if r:
                    least[(name, v)] = min(least[(name, v)], us)
    use(0)
    print(f"least µs per step (ops: per call) of {args.rounds} blocks, one thread")
    print(f"{'case':<14}{'before':>10}{'after':>10}{'after / before':>16}")
    for name in cases:
        before, after = least[(name, 1)], least[(name, 0)]
        print(f"{name:<14}{before:>10.2f}{after:>10.2f}{after / before:>16.3f}")


if __name__ == "__main__":
    main()
