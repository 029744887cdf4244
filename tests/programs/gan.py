"""A GAN: a generator learns to produce samples of the data, a discriminator tells real from fake. Two
optimizers, in the usual order: update D on real and detached fake, then G through D.

Default: 1-D samples of a Gaussian, MLPs. ``--images``: 16x16 synthetic images of a bright Gaussian blob at a
random place; the generator upsamples with nn.Upsample + Conv2d (the resize-convolution generator, the usual
remedy for transposed convolutions' checkerboard artefacts: nearest, then bilinear, with a ReflectionPad2d),
the discriminator is a strided CNN.

    python gan.py [--steps N] [--images]
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from _support import rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
parser.add_argument("--images", action="store_true")
args = parser.parse_args()
torch.manual_seed(0)
data, noise = rng(0), rng(1)
batch_size, nz = (16, 8) if args.images else (32, 4)


def blobs(n, size=16):
    """n images (n, 1, size, size) in [-1, 1]: a Gaussian blob of random centre and width."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    cy, cx = data.uniform(4, size - 4, (2, n, 1, 1))
    width = data.uniform(1.5, 3.0, (n, 1, 1))
    img = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * width ** 2))
    return torch.from_numpy((2 * img - 1).astype(np.float32)[:, None])


class ImageGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Linear(nz, 16 * 4 * 4)
        self.body = nn.Sequential(
            nn.BatchNorm2d(16), nn.ReLU(True),
            nn.Upsample(scale_factor=2),  # 4 -> 8, nearest
            nn.Conv2d(16, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),  # 8 -> 16
            nn.ReflectionPad2d(1), nn.Conv2d(8, 1, 3), nn.Tanh())

    def forward(self, z):
        return self.body(self.project(z).view(-1, 16, 4, 4))


if args.images:
    netG = ImageGenerator()
    netD = nn.Sequential(
        nn.Conv2d(1, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True),  # 16 -> 8
        nn.Conv2d(8, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2, inplace=True),  # 8 -> 4
        nn.Flatten(), nn.Linear(16 * 4 * 4, 1), nn.Sigmoid())
    lr = 2e-4
else:
    netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    netD = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 16),
                         nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1), nn.Sigmoid())
    lr = 2e-3
same_weights(netG, netD)
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for step in range(args.steps):
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    if args.images:
        real = blobs(batch_size)
    else:
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
    print(f"[{step}] Loss_D: {errD.item():.8f} Loss_G: {errG.item():.8f} D(x): {D_x:.6f} D(G(z)): {D_G_z:.6f} "
          f"fake mean: {fake.mean().item():.6f} std: {fake.std().item():.6f}")
