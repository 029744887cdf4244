"""Each piece of the GPT inference forward under ``no_grad`` (``workloads.gpt_model``), ember against PyTorch.

    python bench/gpt_pieces.py                 # gpt_infer1's sizes: 64 tokens, width 128, 4 heads (batch 1)
    python bench/gpt_pieces.py 16 32 2         # gpt_tiny's sizes: 16 tokens, width 32, 2 heads

One thread for both (OMP/OPENBLAS_NUM_THREADS=1 are set here). A piece is a layer or the few calls between two
layers of a block (the head split: ``split`` then ``view`` and ``transpose`` of each piece; the merge: ``transpose``,
``contiguous``, ``view``); ``block`` and ``model`` are the whole things. Least µs of CPU time per call over the
rounds (blocks of 50 calls, the frameworks alternating, their order flipping every round). At the small sizes the
difference is the per-op cost; nothing here is a test.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's ember
import workloads  # noqa: E402

import ember  # noqa: E402


def pieces(fw, tokens: int, width: int, heads: int) -> dict:
    """name -> a zero-argument call of that piece, on the model's first block and fixed inputs."""
    F = fw.nn.functional
    model = workloads.gpt_model(fw, 0, 65, tokens, width, heads)
    block = model.blocks[0]
    rng = np.random.default_rng(0)
    x = fw.tensor(rng.standard_normal((1, tokens, width)).astype(np.float32))
    idx = fw.tensor(rng.integers(0, 65, (1, tokens)))
    B, T, C = x.shape
    with fw.no_grad():
        h = block.ln1(x)
        qkv = block.qkv(h)
        q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in qkv.split(C, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = y.transpose(1, 2).contiguous().view(B, T, C)
        f = block.fc(h)
    return {
        "LayerNorm": lambda: block.ln1(x),
        "qkv Linear": lambda: block.qkv(h),
        "head split": lambda: [t.view(B, T, heads, C // heads).transpose(1, 2) for t in qkv.split(C, dim=2)],
        "attention (sdpa)": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        "head merge": lambda: y.transpose(1, 2).contiguous().view(B, T, C),
        "proj Linear": lambda: block.proj(merged),
        "residual x + y": lambda: x + merged,
        "fc Linear": lambda: block.fc(h),
        "GELU": lambda: block.gelu(f),
        "out Linear": lambda: block.out(f),
        "embeddings + positions": lambda: model.tok(idx) + model.pos(fw.arange(T)),
        "final LayerNorm + head": lambda: model.head(model.ln_f(x)),
        "block": lambda: block(x),
        "model": lambda: model(idx),
    }


def main() -> None:
    tokens, width, heads = (int(a) for a in (sys.argv[1:4] if len(sys.argv) > 3 else (64, 128, 4)))
    rounds = 9
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    sides = {"ember": (ember, pieces(ember, tokens, width, heads)),
             "torch": (torch, pieces(torch, tokens, width, heads))}
    least = {(name, side): float("inf") for name in sides["ember"][1] for side in sides}
    for r in range(rounds + 1):  # round 0 warms up
        for name in sides["ember"][1]:
            for side in (("ember", "torch") if r % 2 else ("torch", "ember")):
                fw, calls = sides[side]
                fn = calls[name]
                with fw.no_grad():
                    start = time.process_time()
                    for _ in range(50):
                        fn()
                    us = (time.process_time() - start) / 50 * 1e6
                if r:
                    least[(name, side)] = min(least[(name, side)], us)
    print(f"{tokens} tokens, width {width}, {heads} heads, no_grad, one thread; least µs of {rounds} blocks")
    print(f"{'piece':<24}{'ember':>9}{'torch':>9}{'ember - torch':>15}{'ratio':>7}")
    for name in sides["ember"][1]:
        e, t = least[(name, "ember")], least[(name, "torch")]
        print(f"{name:<24}{e:>9.1f}{t:>9.1f}{e - t:>15.1f}{e / t:>7.2f}")


if __name__ == "__main__":
    main()
