"""Per-sample gradients with torch.func, as PyTorch's tutorial computes them: a small CNN's loss for one example
(functional_call), its gradient with respect to the parameters (grad), mapped over the batch (vmap) with the
parameters shared (in_dims=(None, None, 0, 0)); checked against one backward pass per example, then used for a
DP-SGD-style step (each example's gradient clipped to norm 1, averaged, plus nothing else).

    python per_sample_grads.py [--steps N]
"""

import argparse

import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.func import functional_call, grad, vmap

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--batch", type=int, default=16)
args = parser.parse_args()


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = torch.flatten(F.max_pool2d(x, 2), 1)
        return self.fc2(F.relu(self.fc1(x)))


model = SimpleCNN()
same_weights(model)
data = rng(0)


def compute_loss(params, buffers, sample, target):
    batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
for step in range(args.steps):
    x = torch.tensor(data.standard_normal((args.batch, 1, 28, 28)), dtype=torch.float32)
    y = torch.tensor(data.integers(0, 10, args.batch))
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    per_sample = ft_compute_sample_grad(params, buffers, x, y)
    if step == 0:  # the same as one backward pass per example
        worst = 0.0
        for i in range(args.batch):
            model.zero_grad()
            F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            for name, p in model.named_parameters():
                worst = max(worst, (per_sample[name][i] - p.grad).abs().max().item())
        print(f"per-sample grads match per-example backward: {worst < 1e-5}")
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()], dim=1).norm(dim=1)
    scale = (1.0 / norms).clamp(max=1.0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            clipped = per_sample[name] * scale.view(-1, *([1] * (per_sample[name].dim() - 1)))
            p -= 0.05 * clipped.mean(dim=0)
    loss = F.cross_entropy(model(x), y)
    print(f"step {step} loss {loss.item():.6f} mean per-sample grad norm {norms.mean().item():.6f} "
          f"shapes {tuple(per_sample['conv1.weight'].shape)}")
