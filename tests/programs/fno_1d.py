"""A 1-D Fourier neural operator as the FNO reference code writes it: each spectral layer takes ``rfft`` of its input,
multiplies the lowest ``modes`` frequencies by learned complex weights (stored as real parameters of shape
(..., 2) and read through ``view_as_complex``), writes them into a zero spectrum and returns ``irfft``; a pointwise
``Conv1d`` path beside it. It learns to map a function u to its antiderivative-like smoothing, whose targets are
made spectrally with ``torch.fft`` itself (``rfftfreq``, a complex multiplier, ``irfft``); a Hann-windowed spectrum
of the prediction is printed at the end.

    python fno_1d.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()

N, MODES, WIDTH, BATCH = 64, 8, 16, 16


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.in_channels, self.out_channels, self.modes = in_channels, out_channels, modes
        self.scale = 1 / (in_channels * out_channels)
        self.weights = nn.Parameter(self.scale * torch.rand(in_channels, out_channels, modes, 2))

    def compl_mul1d(self, input, weights):
        return torch.einsum("bix,iox->box", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(batchsize, self.out_channels, x.size(-1) // 2 + 1, device=x.device, dtype=torch.cfloat)
        out_ft[:, :, :self.modes] = self.compl_mul1d(x_ft[:, :, :self.modes], torch.view_as_complex(self.weights))
        return torch.fft.irfft(out_ft, n=x.size(-1))


class FNO1d(nn.Module):
    def __init__(self, modes, width):
        super().__init__()
        self.fc0 = nn.Linear(2, width)  # (u(x), x)
        self.convs = nn.ModuleList(SpectralConv1d(width, width, modes) for _ in range(2))
        self.ws = nn.ModuleList(nn.Conv1d(width, width, 1) for _ in range(2))
        self.fc1 = nn.Linear(width, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        grid = torch.linspace(0, 1, x.shape[1]).reshape(1, -1, 1).repeat(x.shape[0], 1, 1)
        x = self.fc0(torch.cat((x, grid), dim=-1)).permute(0, 2, 1)
        for i, (conv, w) in enumerate(zip(self.convs, self.ws)):
            x = conv(x) + w(x)
            if i < len(self.convs) - 1:
                x = F.gelu(x)
        x = F.gelu(self.fc1(x.permute(0, 2, 1)))
        return self.fc2(x)


def smooth(u):
    """The target operator, applied spectrally: each frequency k divided by (1 + (2 pi k / 8)^2), shifted by a
    quarter period (a complex phase)."""
    k = torch.fft.rfftfreq(u.shape[-1], d=1.0 / u.shape[-1])
    multiplier = torch.exp(-0.5j * math.pi * k / (1 + k)) / (1 + (2 * math.pi * k / 8) ** 2)
    return torch.fft.irfft(torch.fft.rfft(u, dim=-1) * multiplier, n=u.shape[-1], dim=-1)


gen = np.random.default_rng(3)


def batch():
    coeffs = gen.normal(size=(BATCH, 6)) / np.arange(1, 7)
    xs = np.linspace(0, 2 * np.pi, N, endpoint=False)
    u = sum(coeffs[:, j:j + 1] * np.sin((j + 1) * xs + j) for j in range(6)).astype(np.float32)
    u = torch.from_numpy(u)
    return u.unsqueeze(-1), smooth(u).unsqueeze(-1)


torch.manual_seed(0)
model = FNO1d(MODES, WIDTH)
same_weights(model)
print(f"parameters: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(args.steps):
    x, y = batch()
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    spectral_grad = sum(c.weights.grad.norm() for c in model.convs)
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f} spectral weight grad norm {spectral_grad.item():.6f}")

with torch.no_grad():
    x, y = batch()
    pred = model(x)[..., 0]
    print(f"eval mse {F.mse_loss(pred, y[..., 0]).item():.6f}")
    spectrum = torch.fft.rfft(pred * torch.hann_window(N), norm="ortho").abs()
    print(f"windowed spectrum energy {spectrum.pow(2).sum().item():.6f} peak bin {spectrum.mean(0).argmax().item()}")
    w = torch.view_as_complex(model.convs[0].weights)
    print(f"first spectral weights: |w| mean {w.abs().mean().item():.6f} phase mean {w.angle().mean().item():.6f}")
