"""A small DCGAN on synthetic 16x16 images: a generator of transposed convolutions (BatchNorm, ReLU, Tanh) against
a discriminator of strided convolutions (LeakyReLU, BatchNorm, Sigmoid), trained in the usual order with BCE and
Adam(betas=(0.5, 0.999)): update D on a real and a detached fake batch, then G through D.

    python dcgan.py [--steps N]
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from _support import rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()
torch.manual_seed(0)
data, noise = rng(0), rng(1)
batch_size, nz, ngf, ndf = 16, 8, 16, 16


def real_batch():
    """Bright Gaussian blobs at random places on a dark background, in [-1, 1]."""
    yy, xx = np.mgrid[0:16, 0:16]
    centres = data.uniform(4, 12, size=(batch_size, 2))
    d2 = (yy - centres[:, 0, None, None]) ** 2 + (xx - centres[:, 1, None, None]) ** 2
    return torch.from_numpy((2 * np.exp(-d2 / 8) - 1)[:, None].astype("float32"))


netG = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),    # 4x4
    nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),       # 8x8
    nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh(),                                      # 16x16
)
netD = nn.Sequential(
    nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),                        # 8x8
    nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),  # 4x4
    nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid(),                                        # 1x1
)
same_weights(netG, netD)
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for step in range(args.steps):
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    real = real_batch()
    label = torch.full((batch_size,), real_label, dtype=torch.float)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    z = torch.from_numpy(noise.standard_normal((batch_size, nz, 1, 1)).astype("float32"))
    fake = netG(z)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()
    # (2) Update G: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z = output.mean().item()
    optimizerG.step()
    print(f"[{step}] Loss_D: {errD.item():.8f} Loss_G: {errG.item():.8f} D(x): {D_x:.6f} D(G(z)): {D_G_z:.6f} "
          f"fake mean: {fake.mean().item():.6f} G grad norm: "
          f"{sum(p.grad.norm() ** 2 for p in netG.parameters()).sqrt().item():.6f}")
