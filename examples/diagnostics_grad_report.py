"""Print the gradient report of the seed documents' MLP after one backward, and chart the norms.

    python examples/diagnostics_grad_report.py --out docs/images       # writes grad_report.png

The table is the seed's ``inspect_gradients`` built in: per parameter its shape and the
mean, std, 2-norm and fraction of non-finite elements of its gradient.
"""

import argparse
import os

import ember
import ember.nn as nn
from ember.diagnostics import plot_grad_norms, print_grad_report

parser = argparse.ArgumentParser()
parser.add_argument("--out", default=".", help="folder for grad_report.png")
args = parser.parse_args()

ember.manual_seed(42)
model = nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 256), nn.BatchNorm1d(256),
                      nn.ReLU(), nn.Linear(256, 10))
x, y = ember.randn(32, 784), ember.randint(0, 10, (32,))
nn.CrossEntropyLoss()(model(x), y).backward()

print_grad_report(model)
os.makedirs(args.out, exist_ok=True)
plot_grad_norms(model, os.path.join(args.out, "grad_report.png"), title="gradient norm per parameter (one batch)")
