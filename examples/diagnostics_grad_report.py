"""Print the gradient report of an MLP after one backward, and chart the gradient norms.

    python examples/diagnostics_grad_report.py                     # writes out/grad_report.png
    python examples/diagnostics_grad_report.py --out docs/images   # refreshes the picture in the docs

The MLP is 784-256-256-10 with BatchNorm and ReLU, on one random batch. The table is what one usually
prints by hand while debugging a training loop: per parameter its shape and the mean, std, 2-norm and
fraction of non-finite elements of its gradient. The chart needs matplotlib.
"""

import argparse
import os

import ember
import ember.nn as nn
from ember.diagnostics import plot_grad_norms, print_grad_report

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="out", help="folder for grad_report.png (default: out)")
args = parser.parse_args()

ember.manual_seed(42)
model = nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 256), nn.BatchNorm1d(256),
                      nn.ReLU(), nn.Linear(256, 10))
x, y = ember.randn(32, 784), ember.randint(0, 10, (32,))
nn.CrossEntropyLoss()(model(x), y).backward()

print_grad_report(model)
os.makedirs(args.out, exist_ok=True)
path = os.path.join(args.out, "grad_report.png")
plot_grad_norms(model, path, title="gradient norm per parameter (one batch)")
print(f"\nchart of the gradient norms written to {os.path.abspath(path)}")
