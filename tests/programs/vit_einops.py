"""A small vision transformer written with einops, as lucidrains/vit-pytorch writes it: patches cut by
einops.layers.torch.Rearrange, attention heads split and merged with einops.rearrange, a class token repeated over
the batch with einops.repeat; trained for a few AdamW steps, the learning rate warmed up linearly as ViTs are, on
16x16 images of two kinds (stripes or blobs).

    python vit_einops.py [--steps N]
"""

import argparse

import numpy as np
import torch
from _support import rng, same_weights
from einops import rearrange, repeat
from einops.layers.torch import Rearrange
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=16):
        super().__init__()
        inner = heads * dim_head
        self.heads, self.scale = heads, dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x):
        x = self.norm(x)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), self.to_qkv(x).chunk(3, dim=-1))
        attn = (torch.matmul(q, k.transpose(-1, -2)) * self.scale).softmax(dim=-1)
        return self.to_out(rearrange(torch.matmul(attn, v), "b h n d -> b n (h d)"))


class ViT(nn.Module):
    def __init__(self, image=16, patch=4, classes=2, dim=32, depth=2, mlp=64):
        super().__init__()
        n = (image // patch) ** 2
        self.to_patch = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
                                      nn.LayerNorm(patch * patch), nn.Linear(patch * patch, dim), nn.LayerNorm(dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.layers = nn.ModuleList(nn.ModuleList([
            Attention(dim),
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim)),
        ]) for _ in range(depth))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))

    def forward(self, img):
        x = self.to_patch(img)
        cls = repeat(self.cls, "1 1 d -> b 1 d", b=x.shape[0])
        x = torch.cat((cls, x), dim=1) + self.pos
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return self.head(x[:, 0])


def batch(gen, n=16):
    yy, xx = np.mgrid[0:16, 0:16]
    labels = gen.integers(0, 2, n)
    phase = gen.uniform(0, 6.28, (n, 1, 1))
    stripes = np.sin(xx[None] * 1.2 + phase)
    cy, cx = gen.uniform(4, 12, (2, n, 1, 1))
    blobs = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6.0)[:, 0] * 2 - 1
    img = np.where(labels[:, None, None] == 1, stripes, blobs) + 0.1 * gen.standard_normal((n, 16, 16))
    return torch.tensor(img[:, None], dtype=torch.float32), torch.tensor(labels)


model = ViT()
same_weights(model)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
# Adam's first steps move every weight by about lr, whatever the size of its gradient: at the full rate from step 0
# the run hangs on gradients too small to have a reliable sign. Warm-up keeps those first steps small.
warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=4)
gen = rng(0)
for step in range(args.steps):
    x, y = batch(gen)
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    warmup.step()
    acc = (logits.argmax(dim=-1) == y).float().mean()
    print(f"step {step} loss {loss.item():.6f} accuracy {acc.item():.4f}")
