"""Count a model's multiply-accumulates and parameters with forward hooks that keep float64 counters as buffers
(the way FLOPs-counting libraries do: ``register_buffer``, ``m.total_ops += torch.DoubleTensor([n])``, a counter
slot assigned a one-element tensor), remove the hooks and counters, then train the model a few steps.

    python hook_profiler.py [--steps N]
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
from _support import same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args()


def count_conv(m, x, y):
    kernel = m.weight.shape[1] * m.weight[0, 0].numel()
    m.total_ops += torch.DoubleTensor([int(y.numel() * (kernel + (m.bias is not None)))])


def count_linear(m, x, y):
    m.total_ops += torch.DoubleTensor([int(y.numel() * m.in_features)])


def count_norm(m, x, y):
    m.total_ops += torch.DoubleTensor([int(2 * x[0].numel())])


def count_gru(m, x, y):
    steps, batch = x[0].shape[:2]
    per_step = 3 * (m.input_size + m.hidden_size + 2) * m.hidden_size + 4 * m.hidden_size
    m.total_ops += torch.DoubleTensor([int(steps * batch * per_step)])


HOOKS = {nn.Conv1d: count_conv, nn.Linear: count_linear, nn.BatchNorm1d: count_norm, nn.GRU: count_gru}


def profile(model, inputs):
    handles = []

    def add_hooks(m):
        if list(m.children()):
            return
        m.register_buffer("total_ops", torch.zeros(1, dtype=torch.float64))
        m.register_buffer("total_params", torch.zeros(1, dtype=torch.float64))
        m.total_params[0] = sum((torch.DoubleTensor([p.numel()]) for p in m.parameters()), torch.zeros(1).double())
        fn = HOOKS.get(type(m))
        if fn is not None:
            handles.append(m.register_forward_hook(fn))

    training = model.training
    model.eval()
    model.apply(add_hooks)
    with torch.no_grad():
        model(*inputs)
    total_ops, total_params, rows = 0, 0, []
    for name, m in model.named_modules():
        if "total_ops" in m._buffers:
            total_ops += m.total_ops
            total_params += m.total_params
            rows.append(f"{name:10s} {type(m).__name__:12s} ops {int(m.total_ops.item()):9d} params {int(m.total_params.item()):6d}")
    for h in handles:
        h.remove()
    for m in model.modules():
        m._buffers.pop("total_ops", None)
        m._buffers.pop("total_params", None)
    model.train(training)
    return total_ops.item(), total_params.item(), rows


class Tagger(nn.Module):
    def __init__(self, channels=6, hidden=16, classes=5):
        super().__init__()
        self.conv = nn.Conv1d(channels, hidden, 5, padding=2)
        self.norm = nn.BatchNorm1d(hidden)
        self.act = nn.ReLU()
        self.gru = nn.GRU(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):  # x: (batch, channels, time)
        h = self.act(self.norm(self.conv(x)))
        out, _ = self.gru(h.permute(2, 0, 1))
        return self.head(out[-1])


model = Tagger()
same_weights(model)
gen = np.random.default_rng(3)
x = torch.from_numpy(gen.normal(size=(8, 6, 20)).astype(np.float32))
y = torch.from_numpy(gen.integers(0, 5, size=8))

ops, params, rows = profile(model, (x,))
print("\n".join(rows))
print(f"total: {ops / 1e6:.4f} M multiply-accumulates, {params / 1e3:.3f} K parameters")
print("buffers left:", sorted(name for name, _ in model.named_buffers()))

opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
for step in range(args.steps):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step}: loss {loss.item():.6f} lr {sched.get_last_lr()[0]:.4f}")
print("profile after training:", profile(model, (x,))[:2])
