"""Seed MLP training step, ember vs PyTorch, side by side in one run.

    python bench/bench_mlp.py [--batch 32 256] [--steps 200] [--repeats 5]

The model is seed document 003's MLP (784-256-256-10, BatchNorm, ReLU, Dropout),
CrossEntropyLoss, Adam, clip_grad_norm_ — one full training step each iteration.
Frameworks alternate repeat by repeat so drift on the machine hits both alike;
the table shows the median ms/step of each and the ratio ember/PyTorch
(lower is better). Both run with the same number of BLAS/intra-op threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np


def build(fw, batch: int, seed: int = 0):
    nn = fw.nn
    fw.manual_seed(seed)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.bn1 = nn.Linear(784, 256), nn.BatchNorm1d(256)
            self.fc2, self.bn2 = nn.Linear(256, 256), nn.BatchNorm1d(256)
            self.fc3 = nn.Linear(256, 10)
            self.relu, self.dropout = nn.ReLU(), nn.Dropout(0.3)

        def forward(self, x):
            x = self.dropout(self.relu(self.bn1(self.fc1(x))))
            x = self.dropout(self.relu(self.bn2(self.fc2(x))))
            return self.fc3(x)

    model = MLP()
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    xs = [fw.tensor(rng.standard_normal((batch, 784)).astype(np.float32)) for _ in range(8)]
    ys = [fw.tensor(rng.integers(0, 10, batch)) for _ in range(8)]

    def step(i: int) -> None:
        optimizer.zero_grad()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()

    return step


def time_steps(step, steps: int) -> float:
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    return 1000 * (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import torch

    import ember

    threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))
    torch.set_num_threads(threads)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}, torch {torch.__version__}, threads {threads}")
    print(f"{'workload':<28}{'PyTorch ms':>12}{'ember ms':>12}{'ratio':>8}")
    for batch in args.batch:
        steps = {"torch": build(torch, batch), "ember": build(ember, batch)}
        for s in steps.values():
            time_steps(s, 20)  # warm-up
        times: dict[str, list[float]] = {"torch": [], "ember": []}
        for _ in range(args.repeats):
            for name, s in steps.items():
                times[name].append(time_steps(s, args.steps))
        t, e = statistics.median(times["torch"]), statistics.median(times["ember"])
        print(f"{'seed MLP step, batch ' + str(batch):<28}{t:>12.3f}{e:>12.3f}{e / t:>8.2f}")


if __name__ == "__main__":
    main()
