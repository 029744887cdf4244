"""Keyword-spotting style audio classifiers without torchaudio: log-mel features from ``torch.stft``
(``return_complex=True``, a Hann window buffer, reflect padding) through a mel filterbank built by hand
(``linspace``, ``torch.max``/``torch.min`` of the triangle slopes, Slaney-style normalisation), per-utterance
normalisation and a SpecAugment-style frequency mask (``masked_fill``), a Conv1d/BatchNorm1d classifier over the
mel frames, and an M5-style Conv1d net on the raw waveform (stride-16 first layer, MaxPool1d, ``avg_pool1d`` over
the remaining length) with StepLR; then evaluation under ``no_grad`` and an ``istft`` round trip.

    python audio_mel_stft.py
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
SR, N_FFT, HOP, N_MELS, CLASSES = 8000, 256, 64, 20, 4
gen = rng(1)


def make_batch(n):
    t = np.arange(4000) / SR
    labels = gen.integers(0, CLASSES, n)
    freqs = 300.0 * (labels + 1) + gen.normal(0, 10, n)
    wave = np.sin(2 * np.pi * freqs[:, None] * t[None]) * np.exp(-3 * t)[None]
    wave = wave + 0.05 * gen.standard_normal(wave.shape)
    return torch.tensor(wave, dtype=torch.float32), torch.from_numpy(labels)


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_freqs, n_mels, sr, f_min=0.0, f_max=None):
    f_max = f_max or sr / 2
    all_freqs = torch.linspace(0, sr // 2, n_freqs)
    m_pts = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(torch.zeros(1), torch.min(down, up))
    enorm = 2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])
    return fb * enorm.unsqueeze(0)


class LogMel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.register_buffer("fb", mel_filterbank(N_FFT // 2 + 1, N_MELS, SR))

    def forward(self, wave):
        spec = torch.stft(wave, N_FFT, hop_length=HOP, window=self.window, center=True, pad_mode="reflect",
                          return_complex=True)
        power = spec.abs().pow(2.0)
        mel = torch.matmul(power.transpose(-1, -2), self.fb).transpose(-1, -2)
        return torch.log(torch.clamp(mel, min=1e-10)) / math.log(10)


class MelCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = LogMel()
        self.conv1 = nn.Conv1d(N_MELS, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm1d(32)
        self.conv2 = nn.Conv1d(32, 32, 3, padding=1, dilation=1)
        self.bn2 = nn.BatchNorm1d(32)
        self.fc = nn.Linear(32, CLASSES)

    def forward(self, wave, freq_mask=None):
        x = self.features(wave)
        x = (x - x.mean(dim=(1, 2), keepdim=True)) / (x.std(dim=(1, 2), keepdim=True) + 1e-5)
        if freq_mask is not None:
            x = x.masked_fill(freq_mask[:, :, None], 0.0)
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool1d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool1d(x, 1).squeeze(-1)
        return F.log_softmax(self.fc(x), dim=-1)


class M5(nn.Module):
    def __init__(self, n_channel=16):
        super().__init__()
        self.conv1 = nn.Conv1d(1, n_channel, kernel_size=80, stride=16)
        self.bn1 = nn.BatchNorm1d(n_channel)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
        self.bn2 = nn.BatchNorm1d(n_channel)
        self.pool2 = nn.MaxPool1d(4)
        self.fc1 = nn.Linear(n_channel, CLASSES)

    def forward(self, x):
        x = self.pool1(F.relu(self.bn1(self.conv1(x))))
        x = self.pool2(F.relu(self.bn2(self.conv2(x))))
        x = F.avg_pool1d(x, x.shape[-1]).permute(0, 2, 1)
        return F.log_softmax(self.fc1(x), dim=2)


mel_model, m5 = MelCNN(), M5()
same_weights(mel_model, m5)
opt = torch.optim.Adam(mel_model.parameters(), lr=3e-3, weight_decay=1e-4)
# (lr 3e-3: at 1e-2 Adam amplified the CPU's float32 summation order past 1e-5 by the eighth step on an AVX2 EPYC)
opt5 = torch.optim.Adam(m5.parameters(), lr=3e-3, weight_decay=1e-4)
sched5 = torch.optim.lr_scheduler.StepLR(opt5, step_size=3, gamma=0.5)
for step in range(8):
    wave, y = make_batch(16)
    mask = torch.from_numpy(gen.random((16, N_MELS)) < 0.1)
    loss = F.nll_loss(mel_model(wave, mask), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    out5 = m5(wave.unsqueeze(1))
    loss5 = F.nll_loss(out5.squeeze(), y)
    opt5.zero_grad()
    loss5.backward()
    opt5.step()
    sched5.step()
    print(f"step {step} mel {loss.item():.6f} m5 {loss5.item():.6f} lr {sched5.get_last_lr()[0]:.6f}")

mel_model.eval()
m5.eval()
with torch.no_grad():
    wave, y = make_batch(32)
    pred = mel_model(wave).argmax(dim=-1)
    pred5 = m5(wave.unsqueeze(1)).argmax(dim=-1).squeeze()
    print("acc", (pred == y).float().mean().item(), (pred5 == y).sum().item())
    spec = torch.stft(wave[:2], N_FFT, hop_length=HOP, window=torch.hann_window(N_FFT), return_complex=True)
    back = torch.istft(spec, N_FFT, hop_length=HOP, window=torch.hann_window(N_FFT), length=wave.shape[-1])
    print(f"istft err {(back - wave[:2]).abs().max().item():.6f}", "spec", tuple(spec.shape),
          f"{spec.real.sum().item():.5f}", f"{torch.angle(spec[0, 5:8, 3]).sum().item():.5f}")
    print(f"fb {mel_model.features.fb.sum().item():.6f} {mel_model.features.fb.max().item():.6f}")
