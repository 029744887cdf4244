"""Pooling and patch operations beyond max/avg pooling: a SegNet-style encoder-decoder that keeps the
``MaxPool2d(return_indices=True)`` indices for ``MaxUnpool2d`` (``output_size=`` the pre-pool size), a Conv3d /
AvgPool3d video classifier, ``NLLLoss`` with class weights and ``ignore_index=-100`` on per-pixel log-probabilities,
then ``F.unfold``/``F.fold`` (im2col and its overlap-count inverse), ``adaptive_max_pool2d`` indices,
a dilated ``nn.Unfold``, ``max_pool3d``/``max_unpool3d`` and ``lp_pool2d``.

    python segnet_unpool_3d.py [--steps N]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()
r = rng(29)
img = torch.from_numpy(r.standard_normal((4, 2, 8, 8)).astype(np.float32))
seg = torch.from_numpy(r.integers(0, 3, (4, 8, 8)))
seg[:, 0, 0] = -100
video = torch.from_numpy(r.standard_normal((6, 1, 4, 8, 8)).astype(np.float32))
vlabel = torch.from_numpy(r.integers(0, 2, 6))


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(2, 2, return_indices=True)
        self.mid = nn.Conv2d(8, 8, 3, padding=1)
        self.unpool = nn.MaxUnpool2d(2, 2)
        self.dec = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        h = self.enc(x)
        p, ind = self.pool(h)
        u = self.unpool(F.relu(self.mid(p)), ind, output_size=h.size())
        return F.log_softmax(self.dec(u), 1)


class Video(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(1, 4, (3, 3, 3), padding=1)
        self.p1 = nn.AvgPool3d((1, 2, 2))
        self.c2 = nn.Conv3d(4, 6, (2, 3, 3), stride=(1, 2, 2))
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        h = F.relu(self.c2(F.relu(self.p1(self.c1(x)))))
        return self.fc(F.adaptive_avg_pool3d(h, 1).flatten(1))


torch.manual_seed(0)
segnet, video_net = SegNet(), Video()
same_weights(segnet, video_net)
opt = torch.optim.Adam(list(segnet.parameters()) + list(video_net.parameters()), lr=5e-3)
nll = nn.NLLLoss(weight=torch.tensor([0.5, 1.0, 2.0]), ignore_index=-100)
for step in range(args.steps):
    l_seg = nll(segnet(img), seg)
    l_vid = F.cross_entropy(video_net(video), vlabel)
    loss = l_seg + l_vid
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 2:
        print(f"step {step + 1} seg {l_seg.item():.6f} video {l_vid.item():.6f}")
patches = F.unfold(img, kernel_size=3, padding=1, stride=1)
print("unfold", tuple(patches.shape), f"{patches.sum().item():.4f}")
recon = F.fold(patches, output_size=(8, 8), kernel_size=3, padding=1)
ones = F.fold(F.unfold(torch.ones_like(img), 3, padding=1), (8, 8), 3, padding=1)
print("fold", f"{(recon / ones - img).abs().max().item() < 1e-5}", f"{ones.sum().item():.1f}")
amax, where = F.adaptive_max_pool2d(img, (3, 3), return_indices=True)
print("adaptive max", f"{amax.sum().item():.5f}", int(where.sum()))
unf = nn.Unfold(kernel_size=(2, 4), dilation=(1, 2), stride=2)(img)
print("dilated unfold", tuple(unf.shape), f"{unf.abs().sum().item():.4f}")
p3, i3 = F.max_pool3d(video, 2, return_indices=True)
print("max_unpool3d", f"{F.max_unpool3d(p3, i3, 2).sum().item():.5f}", f"{F.lp_pool2d(img.abs(), 2, 2).sum().item():.4f}")
