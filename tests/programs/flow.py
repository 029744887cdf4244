"""A small normalizing flow from torch.distributions: a standard-normal base pushed through learnable affine
maps, two coupling layers (a Transform subclass) and a final tanh, fitted to 2-D data in (-1, 1) by maximum
likelihood (TransformedDistribution.log_prob).

    python flow.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
from _support import rng, same_weights
from torch import nn
from torch.distributions import (
    AffineTransform,
    ComposeTransform,
    Independent,
    Normal,
    TanhTransform,
    TransformedDistribution,
    constraints,
    kl_divergence,
)
from torch.distributions.transforms import Transform

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=150)
args = parser.parse_args()


class Coupling(Transform):
    """y = x with one coordinate shifted and scaled by functions of the other (a RealNVP coupling)."""

    domain = constraints.independent(constraints.real, 1)
    codomain = constraints.independent(constraints.real, 1)
    bijective = True

    def __init__(self, net, flip):
        super().__init__()
        self.net, self.flip = net, flip

    def _split(self, x):
        return (x[..., 1:], x[..., :1]) if self.flip else (x[..., :1], x[..., 1:])

    def _join(self, a, b):
        return torch.cat([b, a], -1) if self.flip else torch.cat([a, b], -1)

    def _params(self, a):
        h = self.net(a)
        return torch.tanh(h[..., :1]), h[..., 1:]

    def _call(self, x):
        a, b = self._split(x)
        log_s, t = self._params(a)
        return self._join(a, b * log_s.exp() + t)

    def _inverse(self, y):
        a, b = self._split(y)
        log_s, t = self._params(a)
        return self._join(a, (b - t) * (-log_s).exp())

    def log_abs_det_jacobian(self, x, y):
        log_s, _ = self._params(self._split(x)[0])
        return log_s.sum(-1)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(2))
        self.log_scale = nn.Parameter(torch.zeros(2))
        self.nets = nn.ModuleList(nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 2)) for _ in range(2))

    def distribution(self):
        base = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
        layers = [AffineTransform(self.loc, self.log_scale.exp(), event_dim=1), Coupling(self.nets[0], False),
                  Coupling(self.nets[1], True), AffineTransform(0.0, 0.5), TanhTransform()]
        return TransformedDistribution(base, [ComposeTransform(layers[:3]), *layers[3:]])


def data(generator, n):
    """Two noisy arcs, squashed into (-1, 1)."""
    angle = generator.uniform(0, math.pi, n)
    side = generator.integers(0, 2, n)
    x = np.stack([np.cos(angle) - side, np.sin(angle) * (1 - 2 * side) + 0.4 * side], -1)
    x = x + 0.08 * generator.standard_normal((n, 2))
    return np.tanh(0.8 * x).astype(np.float32)


torch.manual_seed(0)
flow = Flow()
same_weights(flow)
optimizer = torch.optim.Adam(flow.parameters(), lr=0.01)
gen = rng(2)
test = torch.from_numpy(data(rng(3), 256))

for step in range(args.steps):
    batch = torch.from_numpy(data(gen, 128))
    dist = flow.distribution()
    loss = -dist.log_prob(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 24 or step == 0:
        with torch.no_grad():
            test_nll = -flow.distribution().log_prob(test).mean()
        print(f"step {step + 1}: nll {loss.item():.6f} test nll {test_nll.item():.6f}")

with torch.no_grad():
    dist = flow.distribution()
    print(f"batch_shape {tuple(dist.batch_shape)} event_shape {tuple(dist.event_shape)}")
    print("log_prob at test points:", " ".join(f"{v:.5f}" for v in dist.log_prob(test[:4]).tolist()))
    scale = flow.log_scale.exp()
    print(f"KL(affine base || N(0, 1)) {kl_divergence(Normal(flow.loc, scale), Normal(0.0, 1.0)).sum().item():.6f}")
    print("sample:", tuple(dist.sample((3,)).shape))
