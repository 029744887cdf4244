"""A temporal convolutional network as the TCN reference code (Bai et al.) writes it: residual blocks of dilated
causal ``Conv1d`` layers wrapped in ``nn.utils.weight_norm`` (``weight_g``/``weight_v`` parameters, the weight
recomputed by a forward pre-hook), a ``Chomp1d`` that cuts the padding off the right, a 1x1 downsample on the
residual path, and a weight-normalized ``Linear`` head (``dim=None``: one magnitude for the whole matrix). A
spectrally normalized ``Linear`` (``nn.utils.spectral_norm``, power iteration in training mode) scores the
features. It learns to predict the next value of noisy sums of sines; at the end the weight norms are removed
and the model must give the same predictions with plain weights.

    python tcn_weight_norm.py [--steps N]
"""

import argparse
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from _support import same_weights
from torch import nn
from torch.nn.utils import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

warnings.filterwarnings("ignore", category=FutureWarning)  # weight_norm's deprecation notice

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()

T, BATCH, CHANNELS, KERNEL = 32, 8, [8, 8, 8], 3


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding):
        super().__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size, stride=stride, padding=padding,
                                           dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size, stride=stride, padding=padding,
                                           dilation=dilation))
        self.net = nn.Sequential(self.conv1, Chomp1d(padding), nn.ReLU(), self.conv2, Chomp1d(padding), nn.ReLU())
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return F.relu(out + res)


class TCN(nn.Module):
    def __init__(self, input_size, channels, kernel_size):
        super().__init__()
        layers = []
        for i, out in enumerate(channels):
            d = 2 ** i
            layers.append(TemporalBlock(channels[i - 1] if i else input_size, out, kernel_size, 1, d,
                                        (kernel_size - 1) * d))
        self.network = nn.Sequential(*layers)
        self.head = weight_norm(nn.Linear(channels[-1], 1), dim=None)
        self.critic = spectral_norm(nn.Linear(channels[-1], 4), n_power_iterations=2)

    def forward(self, x):
        h = self.network(x).transpose(1, 2)
        return self.head(h).squeeze(-1), self.critic(h).mean()


gen = np.random.default_rng(5)


def batch():
    t = np.arange(T + 1)
    freq = gen.uniform(0.1, 0.5, size=(BATCH, 2, 1))
    phase = gen.uniform(0, 2 * np.pi, size=(BATCH, 2, 1))
    series = np.sin(freq * t + phase).sum(1) + 0.05 * gen.normal(size=(BATCH, T + 1))
    series = torch.from_numpy(series.astype(np.float32))
    return series[:, None, :-1], series[:, 1:]


torch.manual_seed(0)
model = TCN(1, CHANNELS, KERNEL)
same_weights(model)
print(f"parameters: {sum(p.numel() for p in model.parameters())}")
print("state_dict keys:", " ".join(k for k in model.state_dict() if "network.0." in k or "head" in k or "critic" in k))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(args.steps):
    x, y = batch()
    pred, score = model(x)
    loss = F.mse_loss(pred, y) + 0.01 * score
    optimizer.zero_grad()
    loss.backward()
    g = model.network[0].conv1.weight_g
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f} score {score.item():.6f} conv1 weight_g grad {g.grad.norm().item():.6f}"
          f" head g {model.head.weight_g.item():.6f} critic v {model.critic.weight_v.sum().item():.6f}")

model.eval()
with torch.no_grad():
    x, y = batch()
    before, score = model(x)
    print(f"eval mse {F.mse_loss(before, y).item():.6f} score {score.item():.6f}")
    for block in model.network:
        remove_weight_norm(block.conv1)
        remove_weight_norm(block.conv2)
    remove_weight_norm(model.head)
    remove_spectral_norm(model.critic)
    after, score_after = model(x)
    print(f"after removal: max change {(after - before).abs().max().item():.6f} score {score_after.item():.6f}")
    print("plain keys:", " ".join(k for k in model.state_dict() if "network.0." in k or "head" in k))
