"""A physics-informed network: u(x, t) fitted to the 1-D heat equation u_t = k u_xx on [0, 1] x [0, 1], with
u(x, 0) = sin(pi x) and u(0, t) = u(1, t) = 0. The loss uses first and second derivatives of the network's output
with respect to its input (torch.autograd.grad with create_graph=True), and Adam steps through them.

    python pinn.py [--steps N]
"""

import argparse
import math

import torch
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()
torch.set_default_dtype(torch.float64)
K = 0.1


class PINN(nn.Module):
    def __init__(self, width=24):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def residual(model, x, t):
    """u_t - k u_xx at the collocation points (x, t)."""
    x.requires_grad_(True)
    t.requires_grad_(True)
    u = model(x, t)
    u_x, u_t = torch.autograd.grad(u, (x, t), grad_outputs=torch.ones_like(u), create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
    return u_t - K * u_xx


model = PINN()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
data = rng(0)
for step in range(args.steps):
    x = torch.tensor(data.uniform(0, 1, (64, 1)))
    t = torch.tensor(data.uniform(0, 1, (64, 1)))
    x0 = torch.tensor(data.uniform(0, 1, (32, 1)))
    tb = torch.tensor(data.uniform(0, 1, (32, 1)))
    physics = residual(model, x, t).pow(2).mean()
    initial = (model(x0, torch.zeros_like(x0)) - torch.sin(math.pi * x0)).pow(2).mean()
    boundary = model(torch.zeros_like(tb), tb).pow(2).mean() + model(torch.ones_like(tb), tb).pow(2).mean()
    loss = physics + initial + boundary
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0 or step == args.steps - 1:
        print(f"step {step} loss {loss.item():.8f} physics {physics.item():.8f}")

# The exact solution is exp(-k pi^2 t) sin(pi x): how far the network is from it at a few points.
xs = torch.linspace(0.1, 0.9, 5).reshape(-1, 1)
with torch.no_grad():
    u = model(xs, torch.full_like(xs, 0.5))
exact = torch.exp(torch.tensor(-K * math.pi ** 2 * 0.5)) * torch.sin(math.pi * xs)
print("u(x, 0.5):", " ".join(f"{v:.6f}" for v in u.flatten().tolist()))
print(f"max error {(u - exact).abs().max().item():.6f}")
