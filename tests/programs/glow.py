"""Glow (Kingma & Dhariwal) in the idioms of public PyTorch ports: ActNorm with data-dependent init (a uint8
`initialized` buffer, .data.copy_), invertible 1x1 conv both plain (slogdet, inverse) and LU-decomposed (scipy.linalg.lu
at init, triu/tril masks, sign buffer, diag(exp(log_s))), affine coupling with sigmoid scale, squeeze by
reshape/permute, split prior with gaussian_log_p, bits per dim, reverse pass and reconstruction check."""
import math

import numpy as np
import scipy.linalg
import torch
from _support import rng, same_weights
from torch import nn
from torch.nn import functional as F

logabs = lambda x: torch.log(torch.abs(x))


class ActNorm(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def initialize(self, input):
        with torch.no_grad():
            flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
            mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            self.loc.data.copy_(-mean)
            self.scale.data.copy_(1 / (std + 1e-6))

    def forward(self, input):
        _, _, height, width = input.shape
        if self.initialized.item() == 0:
            self.initialize(input)
            self.initialized.fill_(1)
        log_abs = logabs(self.scale)
        logdet = height * width * torch.sum(log_abs)
        return self.scale * (input + self.loc), logdet

    def reverse(self, output):
        return output / self.scale - self.loc


class InvConv2d(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        weight = torch.randn(in_channel, in_channel)
        q, _ = torch.linalg.qr(weight)
        self.weight = nn.Parameter(q.unsqueeze(2).unsqueeze(3))

    def forward(self, input):
        _, _, height, width = input.shape
        out = F.conv2d(input, self.weight)
        logdet = height * width * torch.slogdet(self.weight.squeeze().double())[1].float()
        return out, logdet

    def reverse(self, output):
        return F.conv2d(output, self.weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))


class InvConv2dLU(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        weight = np.random.default_rng(7).standard_normal((in_channel, in_channel))
        q, _ = scipy.linalg.qr(weight)
        w_p, w_l, w_u = scipy.linalg.lu(q.astype(np.float32))
        w_s = np.diag(w_u)
        w_u = np.triu(w_u, 1)
        u_mask = np.triu(np.ones_like(w_u), 1)
        l_mask = u_mask.T
        w_p, w_l, w_s, w_u = (torch.from_numpy(a.copy()) for a in (w_p, w_l, w_s, w_u))
        self.register_buffer("w_p", w_p)
        self.register_buffer("u_mask", torch.from_numpy(u_mask))
        self.register_buffer("l_mask", torch.from_numpy(l_mask))
        self.register_buffer("s_sign", torch.sign(w_s))
        self.register_buffer("l_eye", torch.eye(l_mask.shape[0]))
        self.w_l = nn.Parameter(w_l)
        self.w_s = nn.Parameter(logabs(w_s))
        self.w_u = nn.Parameter(w_u)

    def calc_weight(self):
        weight = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
            (self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s)))
        return weight.unsqueeze(2).unsqueeze(3)

    def forward(self, input):
        _, _, height, width = input.shape
        weight = self.calc_weight()
        return F.conv2d(input, weight), height * width * torch.sum(self.w_s)

    def reverse(self, output):
        weight = self.calc_weight()
        return F.conv2d(output, weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))


class ZeroConv2d(nn.Module):
    def __init__(self, in_channel, out_channel):
        super().__init__()
        self.conv = nn.Conv2d(in_channel, out_channel, 3, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()
        self.scale = nn.Parameter(torch.zeros(1, out_channel, 1, 1))

    def forward(self, input):
        out = F.pad(input, [1, 1, 1, 1], value=1)
        out = self.conv(out)
        return out * torch.exp(self.scale * 3)


class AffineCoupling(nn.Module):
    def __init__(self, in_channel, filter_size=16):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channel // 2, filter_size, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(filter_size, filter_size, 1), nn.ReLU(inplace=True),
            ZeroConv2d(filter_size, in_channel))
        self.net[0].weight.data.normal_(0, 0.05)
        self.net[0].bias.data.zero_()

    def forward(self, input):
        in_a, in_b = input.chunk(2, 1)
        log_s, t = self.net(in_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (in_b + t) * s
        logdet = torch.sum(torch.log(s).view(input.shape[0], -1), 1)
        return torch.cat([in_a, out_b], 1), logdet

    def reverse(self, output):
        out_a, out_b = output.chunk(2, 1)
        log_s, t = self.net(out_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        return torch.cat([out_a, out_b / s - t], 1)


class Flow(nn.Module):
    def __init__(self, in_channel, lu):
        super().__init__()
        self.actnorm = ActNorm(in_channel)
        self.invconv = InvConv2dLU(in_channel) if lu else InvConv2d(in_channel)
        self.coupling = AffineCoupling(in_channel)

    def forward(self, input):
        out, logdet = self.actnorm(input)
        out, det1 = self.invconv(out)
        out, det2 = self.coupling(out)
        return out, logdet + det1 + det2

    def reverse(self, output):
        return self.actnorm.reverse(self.invconv.reverse(self.coupling.reverse(output)))


def gaussian_log_p(x, mean, log_sd):
    return -0.5 * math.log(2 * math.pi) - log_sd - 0.5 * (x - mean) ** 2 / torch.exp(2 * log_sd)


class Block(nn.Module):
    def __init__(self, in_channel, n_flow, split, lu):
        super().__init__()
        squeeze_dim = in_channel * 4
        self.flows = nn.ModuleList([Flow(squeeze_dim, lu=lu and i % 2 == 0) for i in range(n_flow)])
        self.split = split
        self.prior = ZeroConv2d(in_channel * 2, in_channel * 4) if split else ZeroConv2d(in_channel * 4, in_channel * 8)

    def forward(self, input):
        b_size, n_channel, height, width = input.shape
        squeezed = input.view(b_size, n_channel, height // 2, 2, width // 2, 2)
        squeezed = squeezed.permute(0, 1, 3, 5, 2, 4)
        out = squeezed.contiguous().view(b_size, n_channel * 4, height // 2, width // 2)
        logdet = 0
        for flow in self.flows:
            out, det = flow(out)
            logdet = logdet + det
        if self.split:
            out, z_new = out.chunk(2, 1)
            mean, log_sd = self.prior(out).chunk(2, 1)
            log_p = gaussian_log_p(z_new, mean, log_sd).view(b_size, -1).sum(1)
        else:
            zero = torch.zeros_like(out)
            mean, log_sd = self.prior(zero).chunk(2, 1)
            log_p = gaussian_log_p(out, mean, log_sd).view(b_size, -1).sum(1)
            z_new = out
        return out, logdet, log_p, z_new

    def reverse(self, output, z):
        input = torch.cat([output, z], 1) if self.split else z
        for flow in self.flows[::-1]:
            input = flow.reverse(input)
        b_size, n_channel, height, width = input.shape
        unsqueezed = input.view(b_size, n_channel // 4, 2, 2, height, width)
        unsqueezed = unsqueezed.permute(0, 1, 4, 2, 5, 3)
        return unsqueezed.contiguous().view(b_size, n_channel // 4, height * 2, width * 2)


class Glow(nn.Module):
    def __init__(self, in_channel, n_flow, n_block, lu=True):
        super().__init__()
        self.blocks = nn.ModuleList()
        n_channel = in_channel
        for _ in range(n_block - 1):
            self.blocks.append(Block(n_channel, n_flow, split=True, lu=lu))
            n_channel *= 2
        self.blocks.append(Block(n_channel, n_flow, split=False, lu=lu))

    def forward(self, input):
        log_p_sum, logdet, out, z_outs = 0, 0, input, []
        for block in self.blocks:
            out, det, log_p, z_new = block(out)
            z_outs.append(z_new)
            logdet = logdet + det
            log_p_sum = log_p_sum + log_p
        return log_p_sum, logdet, z_outs

    def reverse(self, z_list):
        input = None
        for i, block in enumerate(self.blocks[::-1]):
            if i == 0:
                input = block.reverse(z_list[-1], z_list[-1])
            else:
                input = block.reverse(input, z_list[-(i + 1)])
        return input


def calc_loss(log_p, logdet, image_size, n_bins):
    n_pixel = image_size * image_size * 3
    loss = -math.log(n_bins) * n_pixel + logdet + log_p
    return (-loss / (math.log(2) * n_pixel)).mean(), (log_p / (math.log(2) * n_pixel)).mean(), \
        (logdet / (math.log(2) * n_pixel)).mean()


torch.manual_seed(0)
model = Glow(3, n_flow=2, n_block=2)
r = rng(0)
n_bits, n_bins, img = 5, 32.0, 8
images = [torch.from_numpy(r.uniform(0, 1, (8, 3, img, img)).astype(np.float32)) for _ in range(6)]
with torch.no_grad():  # data-dependent ActNorm init on the first batch, as the ports do before training
    model(images[0] - 0.5)
same_weights(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step, image in enumerate(images):
    image = torch.floor(image * 255 / 2 ** (8 - n_bits)) / n_bins - 0.5
    log_p, logdet, _ = model(image + torch.from_numpy(r.uniform(0, 1 / n_bins, image.shape).astype(np.float32)))
    logdet = logdet.mean()
    loss, log_p, log_det = calc_loss(log_p, logdet, img, n_bins)
    model.zero_grad()
    loss.backward()
    warmup_lr = 1e-3 * min(1, (step + 1) / 4)
    optimizer.param_groups[0]["lr"] = warmup_lr
    optimizer.step()
    print(f"step {step} loss {loss.item():.5f} logP {log_p.item():.5f} logdet {log_det.item():.5f} lr {warmup_lr:.6f}")

model.eval()
with torch.no_grad():
    x = images[0] - 0.5
    _, _, zs = model(x)
    back = model.reverse(zs)
    print(f"reconstruction error {float((back - x).abs().max()) < 1e-3}")
    temp = 0.7
    z_sample = [torch.from_numpy(r.standard_normal(z.shape).astype(np.float32)) * temp for z in zs]
    print(f"sampled mean {model.reverse(z_sample).mean().item():.5f}")
    print("initialized", [int(m.initialized) for m in model.modules() if isinstance(m, ActNorm)])
