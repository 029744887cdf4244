"""Attention variants written with ``torch.einsum``: multi-query attention (one shared key/value head) with
ALiBi slopes and a learned relative-position bias table indexed by distance under a causal mask, linear (kernel)
attention with an elu+1 feature map, bilinear pooling of the token features, and einsum's other forms (implicit
output, trace, full reduction, ellipsis, outer product and the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``).

    python einsum_attention.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=15)
args = parser.parse_args()
r = rng(11)
B, T, D, H = 4, 12, 16, 4


def alibi_slopes(n):
    start = 2 ** (-2 ** -(math.log2(n) - 3))
    return torch.tensor([start * start ** i for i in range(n)])


class MQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)
        self.kv = nn.Linear(D, 2 * D // H)
        self.o = nn.Linear(D, D)
        self.register_buffer("slopes", alibi_slopes(H))
        self.rel = nn.Parameter(torch.zeros(2 * T - 1, H))

    def forward(self, x):
        q = self.q(x).view(B, T, H, D // H)
        k, v = self.kv(x).chunk(2, dim=-1)
        s = torch.einsum("bqhd,bkd->bhqk", q, k) / math.sqrt(D // H)
        pos = torch.arange(T)
        dist = pos[None, :] - pos[:, None]
        s = s + torch.einsum("h,qk->hqk", self.slopes, -dist.abs().float())
        s = s + self.rel[dist + T - 1].permute(2, 0, 1)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        a = s.softmax(-1)
        return self.o(torch.einsum("bhqk,bkd->bqhd", a, v).reshape(B, T, D))


class LinearAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)

    def forward(self, x):
        q, k, v = (t.view(B, T, H, D // H) for t in self.qkv(x).chunk(3, -1))
        q, k = F.elu(q) + 1, F.elu(k) + 1
        kv = torch.einsum("nshd,nshm->nhmd", k, v)
        z = 1 / (torch.einsum("nlhd,nhd->nlh", q, k.sum(dim=1)) + 1e-6)
        return torch.einsum("nlhd,nhmd,nlh->nlhm", q, kv, z).reshape(B, T, D)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mqa, self.lin = MQA(), LinearAttention()
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.RMSNorm(D)
        self.bilinear = nn.Parameter(torch.randn(D, D, 3) * 0.05)

    def forward(self, x):
        x = x + self.mqa(self.norm1(x))
        x = x + self.lin(self.norm2(x))
        pooled = torch.einsum("btd,bte->bde", x, x) / T
        return torch.einsum("bde,def->bf", pooled, self.bilinear)


torch.manual_seed(0)
model = Model()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
X = torch.from_numpy(r.standard_normal((B, T, D)).astype(np.float32))
Y = torch.from_numpy(r.integers(0, 3, B))
for step in range(args.steps):
    out = model(X)
    loss = F.cross_entropy(out, Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"step {step + 1} loss {loss.item():.6f} rel_grad {model.mqa.rel.grad.norm().item():.6f}")
a = torch.from_numpy(r.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(r.standard_normal((4, 5)).astype(np.float32))
print("einsum checks", f"{torch.einsum('ij,jk', a, b).sum().item():.5f}", f"{torch.einsum('ii', a[:, :3]).item():.5f}",
      f"{torch.einsum('ij->', a).item():.5f}", f"{torch.einsum(a, [0, 1], b, [1, 2], [0, 2]).sum().item():.5f}",
      f"{torch.einsum('...j,jk->...k', a, b).mean().item():.5f}", f"{torch.einsum('i,j->ij', a[0], b[0]).sum().item():.5f}")
