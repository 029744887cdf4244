"""Frequency-interpolation forecasting in the FITS idiom: reversible instance normalisation over the look-back
window, ``torch.fft.rfft`` along time, a low-pass cut, a complex ``nn.Linear`` made with ``.to(torch.cfloat)`` that
maps the kept frequencies of the window to those of window plus horizon, a zero-padded spectrum back through
``irfft`` with its energy compensation, then the normalisation undone. The model is built, then ``.float()`` is
called on it (which leaves the complex layer complex); it trains on sliding windows of a synthetic multi-channel
seasonal series with Adam and a step schedule, keeps the best checkpoint by validation loss (``torch.save`` of a
state dict holding complex tensors) and reports the test MSE and MAE of the reloaded model.

    python freq_interp_forecast.py [--epochs N]
"""

import argparse
import os
import tempfile
import warnings

import numpy as np
import torch
from _support import same_weights
from torch import nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--seq_len", type=int, default=48)
parser.add_argument("--pred_len", type=int, default=16)
parser.add_argument("--cut_freq", type=int, default=10)
args = parser.parse_args()

CHANNELS = 3


def series(length=600):
    t = np.arange(length)
    gen = np.random.default_rng(5)
    columns = [np.sin(2 * np.pi * t / 24 + c) + 0.5 * np.sin(2 * np.pi * t / 12 * (c + 1)) + 0.01 * c * t
               + 0.1 * gen.standard_normal(length) for c in range(CHANNELS)]
    return np.stack(columns, axis=1).astype(np.float32)


class Windows(Dataset):
    def __init__(self, data, seq_len, pred_len):
        self.data, self.seq_len, self.pred_len = data, seq_len, pred_len

    def __len__(self):
        return len(self.data) - self.seq_len - self.pred_len + 1

    def __getitem__(self, i):
        x = self.data[i:i + self.seq_len]
        y = self.data[i:i + self.seq_len + self.pred_len]  # (FITS reconstructs the window and forecasts after it)
        return torch.from_numpy(x), torch.from_numpy(y)


class FITS(nn.Module):
    def __init__(self, seq_len, pred_len, cut_freq):
        super().__init__()
        self.seq_len, self.pred_len, self.cut_freq = seq_len, pred_len, cut_freq
        self.length_ratio = (seq_len + pred_len) / seq_len
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's "Complex modules are a new feature" notice)
            self.freq_upsampler = nn.Linear(cut_freq, int(cut_freq * self.length_ratio)).to(torch.cfloat)

    def forward(self, x):
        x_mean = torch.mean(x, dim=1, keepdim=True)
        x = x - x_mean
        x_var = torch.var(x, dim=1, keepdim=True) + 1e-5
        x = x / torch.sqrt(x_var)
        spec = torch.fft.rfft(x, dim=1)
        spec[:, self.cut_freq:] = 0
        spec = spec[:, :self.cut_freq, :]
        up = self.freq_upsampler(spec.permute(0, 2, 1)).permute(0, 2, 1)
        full = torch.zeros([up.size(0), (self.seq_len + self.pred_len) // 2 + 1, up.size(2)], dtype=up.dtype)
        full[:, :up.size(1), :] = up
        xy = torch.fft.irfft(full, dim=1) * self.length_ratio
        return xy * torch.sqrt(x_var) + x_mean


data = series()
train_end, valid_end = 400, 500
mean, std = data[:train_end].mean(0), data[:train_end].std(0)
data = (data - mean) / std
span = args.seq_len + args.pred_len
train_set = Windows(data[:train_end], args.seq_len, args.pred_len)
valid_set = Windows(data[train_end - args.seq_len:valid_end], args.seq_len, args.pred_len)
test_set = Windows(data[valid_end - args.seq_len:], args.seq_len, args.pred_len)
order = np.random.default_rng(1).permutation(len(train_set))  # (the shuffle from NumPy: the same under both)
train_loader = DataLoader(torch.utils.data.Subset(train_set, order.tolist()), batch_size=32)
valid_loader = DataLoader(valid_set, batch_size=32)
test_loader = DataLoader(test_set, batch_size=32)

model = FITS(args.seq_len, args.pred_len, args.cut_freq).float()
same_weights(model)
print("upsampler", model.freq_upsampler.weight.dtype, tuple(model.freq_upsampler.weight.shape),
      "parameters", sum(p.numel() for p in model.parameters()))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


def evaluate(loader):
    model.eval()
    losses = []
    with torch.no_grad():
        for x, y in loader:
            losses.append(criterion(model(x)[:, -args.pred_len:], y[:, -args.pred_len:]).item())
    model.train()
    return float(np.mean(losses))


best, path = float("inf"), os.path.join(tempfile.mkdtemp(), "checkpoint.pth")
for epoch in range(args.epochs):
    train_losses = []
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())
    valid_loss = evaluate(valid_loader)
    print(f"epoch {epoch + 1} | lr {scheduler.get_last_lr()[0]:.5f} | train {np.mean(train_losses):.6f} "
          f"| valid {valid_loss:.6f}")
    if valid_loss < best:
        best = valid_loss
        torch.save(model.state_dict(), path)
    scheduler.step()

model.load_state_dict(torch.load(path))
preds, trues = [], []
with torch.no_grad():
    for x, y in test_loader:
        preds.append(model(x)[:, -args.pred_len:].numpy())
        trues.append(y[:, -args.pred_len:].numpy())
pred, true = np.concatenate(preds), np.concatenate(trues)
print(f"test mse {np.mean((pred - true) ** 2):.6f} mae {np.mean(np.abs(pred - true)):.6f}")
# (column 0 multiplies the DC bin, which the normalisation makes zero up to rounding: its gradients are rounding
# noise that Adam's steps turn into about +-lr either way, so the summary leaves it out)
spectrum = model.freq_upsampler.weight.detach()[:, 1:]
print(f"weight |w| mean {spectrum.abs().mean().item():.6f} angle mean {spectrum.angle().mean().item():.6f}")
