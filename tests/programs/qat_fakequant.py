"""Quantization-aware training in the idioms of public QAT / LSQ repos: torch.fake_quantize_per_tensor_affine for
activations (scale, zero_point from running min/max observers kept in buffers: torch.aminmax, EMA updates), and
torch.fake_quantize_per_channel_affine for weights (per-output-channel scales as tensors, int zero points), a
learned-step-size quantizer (LSQ) written with the straight-through trick (x.round() - x).detach() + x and a
grad_scale helper (y - y * s).detach() + y * s, clamp to [Qn, Qp], a QConv2d / QLinear subclass overriding
forward to quantize weights, BatchNorm folding at eval (w * gamma / sqrt(var + eps)), and a comparison of the
quantized and float models' outputs; SGD with momentum and cosine annealing."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(181)


class MinMaxObserver(nn.Module):
    def __init__(self, momentum=0.1, quant_min=0, quant_max=255):
        super().__init__()
        self.momentum, self.qmin, self.qmax = momentum, quant_min, quant_max
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def forward(self, x):
        if self.training:
            mn, mx = torch.aminmax(x.detach())
            if torch.isinf(self.min_val):
                self.min_val.copy_(mn)
                self.max_val.copy_(mx)
            else:
                self.min_val.mul_(1 - self.momentum).add_(mn * self.momentum)
                self.max_val.mul_(1 - self.momentum).add_(mx * self.momentum)
        mn, mx = torch.clamp(self.min_val, max=0.0), torch.clamp(self.max_val, min=0.0)
        scale = float((mx - mn) / (self.qmax - self.qmin))
        scale = max(scale, 1e-8)
        zero_point = int(self.qmin - torch.round(mn / scale).item())
        zero_point = min(max(zero_point, self.qmin), self.qmax)
        return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, self.qmin, self.qmax)


def grad_scale(x, scale):
    y, y_grad = x, x * scale
    return (y - y_grad).detach() + y_grad


def round_pass(x):
    return (x.round() - x).detach() + x


class LSQ(nn.Module):
    def __init__(self, bits=4):
        super().__init__()
        self.Qn, self.Qp = -2 ** (bits - 1), 2 ** (bits - 1) - 1
        self.s = nn.Parameter(torch.tensor(0.05))

    def forward(self, x):
        g = 1.0 / math.sqrt(x.numel() * self.Qp)
        s = grad_scale(self.s, g)
        return round_pass((x / s).clamp(self.Qn, self.Qp)) * s


class QConv2d(nn.Conv2d):
    def forward(self, x):
        w = self.weight
        scale = w.detach().abs().amax(dim=(1, 2, 3)).clamp(min=1e-8) / 127
        wq = torch.fake_quantize_per_channel_affine(w, scale, torch.zeros(w.shape[0], dtype=torch.int32), 0, -128, 127)
        return F.conv2d(x, wq, self.bias, self.stride, self.padding)


class QLinear(nn.Linear):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.wq = LSQ(bits=4)

    def forward(self, x):
        return F.linear(x, self.wq(self.weight), self.bias)


class Net(nn.Module):
    def __init__(self, quant=True):
        super().__init__()
        conv, lin = (QConv2d, QLinear) if quant else (nn.Conv2d, nn.Linear)
        self.conv1, self.bn1 = conv(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.conv2 = conv(8, 8, 3, padding=1)
        self.fc = lin(8 * 4 * 4, 4)
        self.obs1, self.obs2 = (MinMaxObserver(), MinMaxObserver()) if quant else (nn.Identity(), nn.Identity())

    def forward(self, x):
        x = self.obs1(F.relu(self.bn1(self.conv1(x))))
        x = F.max_pool2d(self.obs2(F.relu(self.conv2(x))), 2)
        return self.fc(x.flatten(1))


def batch(n=16):
    y = r.integers(0, 4, n)
    x = r.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    for i, c in enumerate(y):
        x[i, 0, (c // 2) * 4:(c // 2) * 4 + 4, (c % 2) * 4:(c % 2) * 4 + 4] += 1.0
    return torch.from_numpy(x), torch.from_numpy(y)


qnet, fnet = Net(True), Net(False)
same_weights(qnet)
fnet.load_state_dict({k: v for k, v in qnet.state_dict().items() if k in fnet.state_dict()})
opt = torch.optim.SGD(qnet.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
for step in range(10):
    x, y = batch()
    loss = F.cross_entropy(qnet(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.5f} lsq-s {qnet.fc.wq.s.item():.6f} obs-max {qnet.obs1.max_val.item():.5f} "
          f"s-grad {qnet.fc.wq.s.grad.item():.6f}")
qnet.eval()
fnet.load_state_dict({k: v for k, v in qnet.state_dict().items() if k in fnet.state_dict()})
fnet.eval()
with torch.no_grad():
    x, y = batch(32)
    oq, of = qnet(x), fnet(x)
    bn = qnet.bn1
    w_fold = qnet.conv1.weight * (bn.weight / torch.sqrt(bn.running_var + bn.eps)).view(-1, 1, 1, 1)
    b_fold = bn.bias - bn.running_mean * bn.weight / torch.sqrt(bn.running_var + bn.eps)
    folded = F.conv2d(x, w_fold, b_fold, padding=1)
    print(f"eval q-acc {(oq.argmax(1) == y).float().mean().item():.4f} f-acc {(of.argmax(1) == y).float().mean().item():.4f} "
          f"q-vs-f {(oq - of).abs().max().item():.5f} fold-err<1e-5 {bool((folded - bn(qnet.conv1.__class__.__bases__[0].forward(qnet.conv1, x))).abs().max() < 1e-5)}")
