"""Contrastive learning on augmented synthetic vectors: SimCLR's NT-Xent (``F.normalize``, the similarity
matrix with ``fill_diagonal_(-inf)``, cross-entropy against the positive pair), ``TripletMarginLoss``,
``TripletMarginWithDistanceLoss`` with a cosine distance and ``swap=True``, a Siamese contrastive loss on
``F.pairwise_distance``, ``F.cosine_embedding_loss``, a BatchNorm1d backbone, SGD with Nesterov momentum, and
``cosine_similarity`` / ``cdist`` between the learned class embeddings.

    python simclr_triplet.py [--steps N] [--temperature T]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--temperature", type=float, default=0.5)
args = parser.parse_args()
r = rng(6)
centers = r.standard_normal((5, 16)).astype(np.float32)


def augment(x):
    return x * (1 + 0.1 * r.standard_normal(x.shape)).astype(np.float32) + 0.1 * r.standard_normal(x.shape).astype(np.float32)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 32))
        self.projector = nn.Sequential(nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return self.projector(self.backbone(x))


def nt_xent(z1, z2, t):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / t
    n = z1.shape[0]
    sim.fill_diagonal_(float("-inf"))
    labels = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, labels)


torch.manual_seed(0)
model = Encoder()
same_weights(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
triplet = nn.TripletMarginLoss(margin=1.0, p=2)
cos_triplet = nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: 1 - F.cosine_similarity(a, b), margin=0.3, swap=True)
for step in range(args.steps):
    labels = r.integers(0, 5, 32)
    base = centers[labels]
    x1, x2 = torch.from_numpy(augment(base)), torch.from_numpy(augment(base))
    z1, z2 = model(x1), model(x2)
    loss_c = nt_xent(z1, z2, args.temperature)
    neg = torch.from_numpy(augment(centers[(labels + 1) % 5]))
    zn = model(neg)
    loss_t = triplet(z1, z2, zn) + cos_triplet(z1, z2, zn)
    d = F.pairwise_distance(z1, zn)
    loss_s = torch.clamp(2.0 - d, min=0).pow(2).mean() + F.pairwise_distance(z1, z2).pow(2).mean()
    cel = F.cosine_embedding_loss(z1, zn, -torch.ones(32), margin=0.2)
    loss = loss_c + 0.5 * loss_t + 0.1 * loss_s + cel
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 3:
        print(f"step {step + 1} nt_xent {loss_c.item():.6f} triplet {loss_t.item():.6f} siamese {loss_s.item():.6f} cos_emb {cel.item():.6f}")
model.eval()
with torch.no_grad():
    emb = F.normalize(model.backbone(torch.from_numpy(centers)), dim=-1)
    sims = F.cosine_similarity(emb.unsqueeze(1), emb.unsqueeze(0), dim=-1)
    print("center sims", " ".join(f"{v:.5f}" for v in sims[0].tolist()))
    print("cdist", f"{torch.cdist(emb, emb).sum().item():.5f}", "bn running", f"{model.backbone[1].running_var.mean().item():.5f}")
