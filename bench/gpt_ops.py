"""Where the GPT-style step's time goes: each of its ops, forward + backward, ember against PyTorch.

    python bench/gpt_ops.py              # one thread for both (OMP/OPENBLAS_NUM_THREADS=1 are set here)

Shapes are those of ``workloads.build_gpt`` (batch 16, sequence 64, width 128, 4 heads, MLP 512,
vocabulary 65); the right column says how often the op runs per training step. Each op is timed in
blocks of 20 calls, alternating the frameworks, best block of 5 per framework; nothing here is a test.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def linear(i: int, o: int):
    def make(fw):
        x, w, b = (fw.tensor(a, requires_grad=True) for a in (arr(16, 64, i), arr(o, i), arr(o)))
        return (lambda: fw.nn.functional.linear(x, w, b)), (16, 64, o)
    return make


def gelu(fw):
    x = fw.tensor(arr(16, 64, 512), requires_grad=True)
    return (lambda: fw.nn.functional.gelu(x)), (16, 64, 512)


def layer_norm(fw):
    x = fw.tensor(arr(16, 64, 128), requires_grad=True)
    w, b = fw.ones(128, requires_grad=True), fw.zeros(128, requires_grad=True)
    return (lambda: fw.nn.functional.layer_norm(x, (128,), w, b)), (16, 64, 128)


def attention(fw):
    q, k, v = (fw.tensor(arr(16, 4, 64, 32), requires_grad=True) for _ in range(3))
    return (lambda: fw.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)), (16, 4, 64, 32)


def embedding(fw):
    w, idx = fw.tensor(arr(65, 128), requires_grad=True), fw.tensor(RNG.integers(0, 65, (16, 64)))
    return (lambda: fw.nn.functional.embedding(idx, w)), (16, 64, 128)


def cross_entropy(fw):
    x, y = fw.tensor(arr(1024, 65), requires_grad=True), fw.tensor(RNG.integers(0, 65, 1024))
    return (lambda: fw.nn.functional.cross_entropy(x, y)), ()


OPS = [  # name, builder, calls per step
    ("linear 128->384 (qkv)", linear(128, 384), 2), ("linear 128->128 (proj)", linear(128, 128), 2),
    ("linear 128->512 (fc)", linear(128, 512), 2), ("linear 512->128 (out)", linear(512, 128), 2),
    ("linear 128->65 (head)", linear(128, 65), 1), ("gelu (16, 64, 512)", gelu, 2),
    ("layer_norm (16, 64, 128)", layer_norm, 5), ("sdpa causal (16, 4, 64, 32)", attention, 2),
    ("embedding (65 and 64 rows)", embedding, 2), ("cross_entropy (1024, 65)", cross_entropy, 1),
]


def best_ms(fw, make) -> float:
    f, shape = make(fw)
    g = fw.tensor(arr(*shape))
    f().backward(g)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(20):
            f().backward(g)
        best = min(best, (time.perf_counter() - start) / 20 * 1000)
    return best


def main() -> None:
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    print(f"{'op (forward + backward), ms':32s}{'PyTorch':>9s}{'ember':>9s}{'per step':>10s}")
    total = {"torch": 0.0, "ember": 0.0}
    for name, make, calls in OPS:
        t = {"torch": [], "ember": []}
        for fw in (torch, ember, torch, ember):
            t[fw.__name__].append(best_ms(fw, make))
        row = {k: min(v) for k, v in t.items()}
        for k in total:
            total[k] += calls * row[k]
        print(f"{name:32s}{row['torch']:9.3f}{row['ember']:9.3f}{'x' + str(calls):>10s}")
    print(f"{'sum over one step':32s}{total['torch']:9.3f}{total['ember']:9.3f}")


if __name__ == "__main__":
    main()
