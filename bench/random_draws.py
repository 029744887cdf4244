"""Random draws: ember against PyTorch, interleaved in one process (medians of repeated runs).

    PYTHONPATH=<an ember checkout> python bench/random_draws.py [--repeat 7] [--no-gpt2] [--cpu] [--large]

Rows: randn(1M) float32 and float64, rand(1M), randint(0, 1000, 1M), randperm(60000), nn.Linear(1024, 1024)
construction, dropout's forward on 1M float32 values (training), and one initialisation each of a GPT-2-small-sized
model (124M parameters: token and position embeddings, 12 blocks of attention and MLP Linears and LayerNorms;
``--no-gpt2`` leaves it out) and of a VGG-11-sized one (133M parameters: torchvision's ``vgg11`` layers with
PyTorch's default inits; its ``Linear(25088, 4096)`` holds 103M of them), timed once. Run it against two checkouts
(PYTHONPATH) to compare ember before and after a change: the PyTorch column of each run says how loaded the machine
was. ``--cpu`` times the process's CPU time instead of wall clock: steadier on a machine shared with other work
(every row runs on one thread). ``--large``: rows at a model's sizes instead (``large_rows``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

N = 1_000_000


def rows(m):
    x = m.ones(N)
    return {
        "randn(1M) float32": lambda: m.randn(N),
        "randn(1M) float64": lambda: m.randn(N, dtype=m.float64),
        "rand(1M) float32": lambda: m.rand(N),
        "randint(0, 1000, 1M)": lambda: m.randint(0, 1000, (N,)),
        "randperm(60000)": lambda: m.randperm(60000),
        "nn.Linear(1024, 1024)": lambda: m.nn.Linear(1024, 1024),
        "dropout(1M, p=0.1) forward": lambda: m.nn.functional.dropout(x, 0.1, training=True),
    }


def large_rows(m):
    """``--large``: the sizes a model's construction draws (16M values; a VGG classifier's first Linear)."""
    side, x = 4096, m.ones(32, 4096, 128)
    return {
        "randn(4096, 4096)": lambda: m.randn(side, side),
        "rand(4096, 4096)": lambda: m.rand(side, side),
        "rand(4096, 4096) float64": lambda: m.rand(side, side, dtype=m.float64),
        "normal_(0.5, 2) on 4096 x 4096": lambda: m.empty(side, side).normal_(0.5, 2.0),
        "uniform_(-0.1, 0.1) on 4096 x 4096": lambda: m.empty(side, side).uniform_(-0.1, 0.1),
        "dropout(32 x 4096 x 128, p=0.1)": lambda: m.nn.functional.dropout(x, 0.1, training=True),
        "nn.Linear(25088, 4096)": lambda: m.nn.Linear(25088, 4096),
    }


def gpt2_small(m):
    nn = m.nn
    layers = [nn.Embedding(50257, 768), nn.Embedding(1024, 768)]
    for _ in range(12):
        layers += [nn.LayerNorm(768), nn.Linear(768, 3 * 768), nn.Linear(768, 768), nn.LayerNorm(768),
                   nn.Linear(768, 4 * 768), nn.Linear(4 * 768, 768)]
    return nn.ModuleList(layers + [nn.LayerNorm(768)])


def vgg11_sized(m):
    """``torchvision.models.vgg11``'s convolutions and classifier Linears, each with PyTorch's default
    initialisation (torchvision re-initialises them; torchvision is not needed here)."""
    nn, layers, channels = m.nn, [], 3
    for width in (64, 128, 256, 256, 512, 512, 512, 512):
        layers.append(nn.Conv2d(channels, width, 3, padding=1))
        channels = width
    layers += [nn.Linear(512 * 7 * 7, 4096), nn.Linear(4096, 4096), nn.Linear(4096, 1000)]
    return nn.ModuleList(layers)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-gpt2", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="process CPU time instead of wall clock")
    ap.add_argument("--large", action="store_true", help="the rows at a model's sizes (16M values and more)")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    import torch

    import ember

    torch.set_num_threads(1)
    libs = {"ember": ember, "torch": torch}
    make_rows = large_rows if args.large else rows
    table = {name: {lib: [] for lib in libs} for name in make_rows(torch)}
    fns = {lib: make_rows(m) for lib, m in libs.items()}
    for lib in libs:  # warm-up: compiled kernels loaded, first allocations made
        for fn in fns[lib].values():
            fn()
    for _ in range(args.repeat):
        for name in table:
            for lib in libs:
                start = clock()
                fns[lib][name]()
                table[name][lib].append(clock() - start)
    print(f"{'row':30s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for name, times in table.items():
        e, t = statistics.median(times["ember"]) * 1e3, statistics.median(times["torch"]) * 1e3
        print(f"{name:30s} {e:10.2f} {t:10.2f} {e / t:7.2f}")
    models = {"VGG-11-sized": vgg11_sized} if args.no_gpt2 else {"GPT-2-small": gpt2_small, "VGG-11-sized": vgg11_sized}
    for model_name, build in models.items():
        for lib, m in libs.items():
            start = clock()
            model = build(m)
            took = clock() - start
            count = sum(p.numel() for p in model.parameters())
            print(f"{model_name} init ({count / 1e6:.0f}M params), {lib}: {took:.2f} s")
            del model


if __name__ == "__main__":
    main()
