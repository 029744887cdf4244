"""Unsupervised 3-D image registration in VoxelMorph's idiom: a small 3-D conv encoder-decoder predicts a
stationary velocity field at half resolution, integrated by scaling and squaring (each squaring warps the field by
itself with F.grid_sample on 5-D input, trilinear, align_corners=True), brought back to full size with
F.interpolate(mode="trilinear") and warps the moving volume through a spatial transformer whose identity grid is a
buffer; the loss is local normalised cross-correlation (box sums by conv3d) plus an l2 smoothness penalty on the
field's finite differences; bidirectional (the negated field warps fixed to moving) and nearest-neighbour warping of
a label volume at evaluation (Dice)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(0)
SIZE = 12


class Warp(nn.Module):
    def __init__(self, size, mode="bilinear"):
        super().__init__()
        self.mode = mode
        axes = [torch.arange(0, s, dtype=torch.float32) for s in size]
        self.register_buffer("grid", torch.stack(torch.meshgrid(axes, indexing="ij")).unsqueeze(0), persistent=False)

    def forward(self, src, flow):
        locs = self.grid + flow
        shape = flow.shape[2:]
        locs = torch.stack([2 * (locs[:, i] / (shape[i] - 1) - 0.5) for i in range(3)], dim=1)
        locs = locs.permute(0, 2, 3, 4, 1)[..., [2, 1, 0]]
        return F.grid_sample(src, locs, mode=self.mode, align_corners=True)


class Integrate(nn.Module):
    def __init__(self, size, steps):
        super().__init__()
        self.steps, self.warp = steps, Warp(size)

    def forward(self, vel):
        vel = vel / 2 ** self.steps
        for _ in range(self.steps):
            vel = vel + self.warp(vel, vel)
        return vel


class Net(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.enc1 = nn.Conv3d(2, 8, 3, padding=1)
        self.enc2 = nn.Conv3d(8, 12, 3, stride=2, padding=1)
        self.dec = nn.Conv3d(12 + 8, 8, 3, padding=1)
        self.flow = nn.Conv3d(8, 3, 3, padding=1)
        self.flow.weight.data.normal_(0, 1e-2)
        self.flow.bias.data.zero_()
        half = [s // 2 for s in size]
        self.integrate = Integrate(half, steps=4)
        self.warp = Warp(size)

    def forward(self, moving, fixed):
        x1 = F.leaky_relu(self.enc1(torch.cat([moving, fixed], dim=1)), 0.2)
        x2 = F.leaky_relu(self.enc2(x1), 0.2)
        up = F.interpolate(x2, scale_factor=2, mode="nearest")
        x = F.leaky_relu(self.dec(torch.cat([up, x1], dim=1)), 0.2)
        vel = F.interpolate(self.flow(x), scale_factor=0.5, mode="trilinear", align_corners=True)
        pos, neg = self.integrate(vel), self.integrate(-vel)
        pos = 2 * F.interpolate(pos, scale_factor=2, mode="trilinear", align_corners=True)
        neg = 2 * F.interpolate(neg, scale_factor=2, mode="trilinear", align_corners=True)
        return self.warp(moving, pos), self.warp(fixed, neg), vel, pos


def ncc(a, b, win=5):
    box = torch.ones(1, 1, win, win, win)
    sums = [F.conv3d(t, box, padding=win // 2) for t in (a, b, a * a, b * b, a * b)]
    a_sum, b_sum, aa, bb, ab = sums
    n = win ** 3
    cross = ab - a_sum * b_sum / n
    a_var = aa - a_sum * a_sum / n
    b_var = bb - b_sum * b_sum / n
    return -torch.mean(cross * cross / (a_var * b_var + 1e-5))


def smoothness(field):
    dz = field[:, :, 1:] - field[:, :, :-1]
    dy = field[:, :, :, 1:] - field[:, :, :, :-1]
    dx = field[..., 1:] - field[..., :-1]
    return (dz.pow(2).mean() + dy.pow(2).mean() + dx.pow(2).mean()) / 3


def blob(center, radius):
    axes = torch.linspace(-1, 1, SIZE)
    z, y, x = torch.meshgrid(axes, axes, axes, indexing="ij")
    d = (z - center[0]) ** 2 + (y - center[1]) ** 2 + (x - center[2]) ** 2
    return torch.exp(-d / radius ** 2)


noise = torch.from_numpy(r.standard_normal((2, 1, SIZE, SIZE, SIZE)).astype("float32")) * 0.05
moving = (blob((0.2, -0.1, 0.1), 0.5) + 0.5 * blob((-0.4, 0.3, -0.2), 0.3))[None, None] + noise[:1]
fixed = (blob((0.0, 0.1, -0.1), 0.55) + 0.5 * blob((-0.3, 0.2, 0.0), 0.3))[None, None] + noise[1:]
model = Net([SIZE] * 3)
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(6):
    moved, moved_back, vel, flow = model(moving, fixed)
    image = 0.5 * ncc(fixed, moved) + 0.5 * ncc(moving, moved_back)
    loss = image + 0.01 * smoothness(vel)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f} ncc {image.item():.6f} |flow| {flow.abs().mean().item():.6f}")

model.eval()
labels = (moving > 0.5).float()
with torch.no_grad():
    _, _, _, flow = model(moving, fixed)
    warped = Warp([SIZE] * 3, mode="nearest")(labels, flow)
    target = (fixed > 0.5).float()
    dice = 2 * (warped * target).sum() / (warped.sum() + target.sum())
print(f"dice {dice.item():.6f} labels kept {int(warped.sum().item())} of {int(labels.sum().item())}")
