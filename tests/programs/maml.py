"""MAML on sine-wave regression (Finn et al., 2017): the outer loop learns an initialisation from which one or two
plain gradient steps on a task's few examples fit that task. The inner step keeps the graph
(torch.autograd.grad(..., create_graph=True)) so the outer update differentiates through it (second order);
the adapted weights are applied with torch.func.functional_call.

    python maml.py [--steps N] [--first-order]
"""

import argparse

import torch
from _support import rng, same_weights
from torch import nn
from torch.func import functional_call

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--inner-steps", type=int, default=2)
parser.add_argument("--first-order", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
same_weights(model)
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = rng(0)
inner_lr = 0.01


def task_batch(n_tasks=4, shots=10):
    amp = data.uniform(0.1, 5.0, (n_tasks, 1, 1))
    phase = data.uniform(0, 3.14159, (n_tasks, 1, 1))
    x = data.uniform(-5, 5, (n_tasks, 2 * shots, 1))
    y = amp * torch.sin(torch.tensor(x) + torch.tensor(phase)).numpy()
    x, y = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    return x[:, :shots], y[:, :shots], x[:, shots:], y[:, shots:]


def adapt(params, x, y):
    for _ in range(args.inner_steps):
        loss = nn.functional.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, params.values(), create_graph=not args.first_order)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


for step in range(args.steps):
    xs, ys, xq, yq = task_batch()
    meta_opt.zero_grad()
    total = 0.0
    for i in range(xs.shape[0]):
        fast = adapt(dict(model.named_parameters()), xs[i], ys[i])
        query_loss = nn.functional.mse_loss(functional_call(model, fast, (xq[i],)), yq[i])
        (query_loss / xs.shape[0]).backward()
        total += query_loss.item()
    meta_opt.step()
    if step % 4 == 0 or step == args.steps - 1:
        grad_norm = sum(p.grad.pow(2).sum() for p in model.parameters()).sqrt().item()
        print(f"step {step} query loss {total / xs.shape[0]:.6f} meta-grad norm {grad_norm:.6f}")
