"""A 2-D Fourier Neural Operator layer (rfft2 -> complex weights via cfloat parameters -> irfft2 with s=), a
spectral pooling / low-pass filter with fftshift, an FFT convolution check against circular conv2d (the kernel flipped by kern.flip(0, 1)), and a spectral loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(22)


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, modes1, modes2):
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        scale = 1 / (in_channels * out_channels)
        self.weights1 = nn.Parameter(scale * torch.rand(in_channels, out_channels, modes1, modes2, dtype=torch.cfloat))
        self.weights2 = nn.Parameter(scale * torch.rand(in_channels, out_channels, modes1, modes2, dtype=torch.cfloat))

    def compl_mul2d(self, input, weights):
        return torch.einsum("bixy,ioxy->boxy", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(batchsize, self.weights1.shape[1], x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, : self.modes1, : self.modes2] = self.compl_mul2d(x_ft[:, :, : self.modes1, : self.modes2], self.weights1)
        out_ft[:, :, -self.modes1:, : self.modes2] = self.compl_mul2d(x_ft[:, :, -self.modes1:, : self.modes2], self.weights2)
        return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))


class FNO2d(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc0 = nn.Linear(3, width)
        self.convs = nn.ModuleList([SpectralConv2d(width, width, 4, 4) for _ in range(2)])
        self.ws = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(2)])
        self.fc1 = nn.Linear(width, 1)

    def forward(self, x):
        B, H, W, _ = x.shape
        gridx = torch.linspace(0, 1, H).reshape(1, H, 1, 1).repeat(B, 1, W, 1)
        gridy = torch.linspace(0, 1, W).reshape(1, 1, W, 1).repeat(B, H, 1, 1)
        x = self.fc0(torch.cat((x, gridx, gridy), dim=-1)).permute(0, 3, 1, 2)
        for conv, w in zip(self.convs, self.ws):
            x = F.gelu(conv(x) + w(x))
        return self.fc1(x.permute(0, 2, 3, 1))


model = FNO2d()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for step in range(5):
    a = torch.from_numpy(r.standard_normal((4, 12, 10, 1)).astype("float32"))
    u = torch.fft.irfft2(torch.fft.rfft2(a.squeeze(-1)) * torch.exp(-torch.arange(6.0) / 2), s=(12, 10)).unsqueeze(-1)
    pred = model(a)
    spec = (torch.fft.rfft2(pred.squeeze(-1)) - torch.fft.rfft2(u.squeeze(-1))).abs().pow(2).mean()
    loss = F.mse_loss(pred, u) + 1e-3 * spec
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.6f} spectral {spec.item():.5f} w-grad-abs {model.convs[0].weights1.grad.abs().sum().item():.5f}")

img = torch.from_numpy(r.standard_normal((1, 1, 8, 8)).astype("float32"))
kern = torch.from_numpy(r.standard_normal((1, 1, 3, 3)).astype("float32"))
direct = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="circular"), kern)
kpad = torch.zeros(8, 8)
kpad[:3, :3] = kern[0, 0].flip(0, 1)
viafft = torch.fft.ifft2(torch.fft.fft2(img[0, 0]) * torch.fft.fft2(torch.roll(kpad, (-1, -1), (0, 1)))).real
shifted = torch.fft.fftshift(torch.fft.fft2(img[0, 0]))
low = torch.zeros_like(shifted)
low[2:6, 2:6] = shifted[2:6, 2:6]
lowpass = torch.fft.ifft2(torch.fft.ifftshift(low)).real
print("fftconv", torch.allclose(direct[0, 0], viafft, atol=1e-4), f"lowpass {lowpass.pow(2).sum().item():.5f}",
      f"freqs {torch.fft.rfftfreq(8).sum().item():.4f} {torch.fft.fftfreq(8, d=0.5).abs().sum().item():.4f}",
      f"norm-ortho {torch.fft.fftn(img, norm='ortho').abs().pow(2).sum().item():.4f}")
