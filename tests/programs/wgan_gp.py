"""WGAN-GP (Gulrajani et al., 2017) on 16x16 images: a conv critic trained with the gradient penalty
((||d critic(x_hat) / d x_hat||_2 - 1)^2 at points between real and fake images, taken with
torch.autograd.grad(..., create_graph=True) so the penalty's own gradient reaches the critic's weights), and a
transposed-conv generator. The "real" images are smooth random blobs from NumPy.

    python wgan_gp.py [--steps N] [--critic-iters K]
"""

import argparse

import numpy as np
import torch
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--critic-iters", type=int, default=3)
parser.add_argument("--batch", type=int, default=16)
args = parser.parse_args()
torch.set_default_dtype(torch.float64)  # the critic loss is a difference of means: float32 rounding would show
Z, LAMBDA = 16, 10.0


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.LayerNorm([32, 4, 4]), nn.LeakyReLU(0.2),
        )
        self.out = nn.Linear(32 * 4 * 4, 1)

    def forward(self, x):
        return self.out(self.features(x).flatten(1))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(Z, 32 * 4 * 4)
        self.net = nn.Sequential(
            nn.ReLU(), nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(self.fc(z).view(-1, 32, 4, 4))


def real_batch(gen, n):
    """Gaussian blobs at random places: an image distribution with some structure."""
    yy, xx = np.mgrid[0:16, 0:16]
    cy, cx = gen.uniform(4, 12, (2, n, 1, 1))
    img = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0) * 2 - 1
    return torch.tensor(img[:, None], dtype=torch.get_default_dtype())


def gradient_penalty(critic, real, fake, alpha):
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(x_hat)
    (grads,) = torch.autograd.grad(scores, x_hat, grad_outputs=torch.ones_like(scores), create_graph=True,
                                   retain_graph=True)
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


critic, generator = Critic(), Generator()
same_weights(critic, generator)
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.0, 0.9))
data = rng(0)
for step in range(args.steps):
    for _ in range(args.critic_iters):
        real = real_batch(data, args.batch)
        z = torch.tensor(data.standard_normal((args.batch, Z)), dtype=torch.get_default_dtype())
        alpha = torch.tensor(data.uniform(0, 1, (args.batch, 1, 1, 1)), dtype=torch.get_default_dtype())
        fake = generator(z).detach()
        gp = gradient_penalty(critic, real, fake, alpha)
        loss_c = critic(fake).mean() - critic(real).mean() + LAMBDA * gp
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
    z = torch.tensor(data.standard_normal((args.batch, Z)), dtype=torch.get_default_dtype())
    loss_g = -critic(generator(z)).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"step {step} critic {loss_c.item():.6f} penalty {gp.item():.6f} generator {loss_g.item():.6f}")
