"""A 1-D GAN: a generator learns to produce samples of a Gaussian, a discriminator tells real from fake.
Two optimizers, in the usual order: update D on real and detached fake, then G through D.

    python gan.py [--steps N]
"""

import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from _support import rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()
torch.manual_seed(0)
data, noise = rng(0), rng(1)
batch_size, nz = 32, 4

netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
netD = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 16),
                     nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1), nn.Sigmoid())
same_weights(netG, netD)
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for step in range(args.steps):
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    real = torch.from_numpy(data.normal(4.0, 1.25, size=(batch_size, 1)).astype("float32"))
    label = torch.full((batch_size,), real_label, dtype=torch.float)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    z = torch.from_numpy(noise.standard_normal((batch_size, nz)).astype("float32"))
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
    print(f"[{step}] Loss_D: {errD.item():.8f} Loss_G: {errG.item():.8f} D(x): {D_x:.6f} D(G(z)): {D_G_z:.6f}")
