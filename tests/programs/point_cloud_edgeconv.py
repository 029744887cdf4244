"""A point-cloud classifier in the style of dynamic graph CNNs (DGCNN, Wang et al.): each EdgeConv layer finds every
point's k nearest neighbours in the current feature space (the pairwise distance written as
``-|a|^2 + 2 a.b - |b|^2`` from a ``bmm``, then ``topk``), gathers their features with flattened indices
(``x.view(B * N, -1)[idx]``, offset per cloud by an ``arange``), concatenates ``neighbour - centre`` with the centre,
and runs a 1x1 ``Conv2d`` + ``BatchNorm2d`` + ``LeakyReLU`` before a max over the neighbours. The layers' outputs are
concatenated, lifted by a ``Conv1d`` and pooled globally by max and by mean (``adaptive_max_pool1d`` and
``adaptive_avg_pool1d``) into a ``Linear`` head trained with a label-smoothed cross-entropy written by hand
(``scatter`` of a one-hot, ``log_softmax``), SGD with momentum and a cosine schedule. The clouds (spheres, cubes and
cylinders, randomly scaled, rotated about z and jittered) come from NumPy.

    python point_cloud_edgeconv.py [--steps N]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()

POINTS, K, BATCH, CLASSES = 48, 6, 6, 3


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    return pairwise_distance.topk(k=k, dim=-1)[1]  # (batch, points, k)


def edge_features(x, k):
    batch, dims, points = x.size()
    idx = knn(x, k)
    idx_base = torch.arange(0, batch).view(-1, 1, 1) * points
    idx = (idx + idx_base).view(-1)
    x = x.transpose(2, 1).contiguous()
    neighbours = x.view(batch * points, -1)[idx, :].view(batch, points, k, dims)
    centre = x.view(batch, points, 1, dims).repeat(1, 1, k, 1)
    return torch.cat((neighbours - centre, centre), dim=3).permute(0, 3, 1, 2).contiguous()


class EdgeConv(nn.Module):
    def __init__(self, in_dims, out_dims, k):
        super().__init__()
        self.k = k
        self.conv = nn.Sequential(nn.Conv2d(in_dims * 2, out_dims, kernel_size=1, bias=False),
                                  nn.BatchNorm2d(out_dims), nn.LeakyReLU(negative_slope=0.2))

    def forward(self, x):
        return self.conv(edge_features(x, self.k)).max(dim=-1, keepdim=False)[0]


class DGCNN(nn.Module):
    def __init__(self, k=K, emb_dims=32, classes=CLASSES):
        super().__init__()
        self.edges = nn.ModuleList([EdgeConv(3, 16, k), EdgeConv(16, 16, k), EdgeConv(16, 32, k)])
        self.lift = nn.Sequential(nn.Conv1d(64, emb_dims, kernel_size=1, bias=False), nn.BatchNorm1d(emb_dims),
                                  nn.LeakyReLU(negative_slope=0.2))
        self.head = nn.Sequential(nn.Linear(emb_dims * 2, 32, bias=False), nn.BatchNorm1d(32),
                                  nn.LeakyReLU(negative_slope=0.2), nn.Linear(32, classes))

    def forward(self, x):
        features = []
        for edge in self.edges:
            x = edge(x)
            features.append(x)
        x = self.lift(torch.cat(features, dim=1))
        x = torch.cat((F.adaptive_max_pool1d(x, 1).view(x.size(0), -1),
                       F.adaptive_avg_pool1d(x, 1).view(x.size(0), -1)), 1)
        return self.head(x)


def smoothed_cross_entropy(pred, gold, eps=0.2):
    gold = gold.contiguous().view(-1)
    one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
    one_hot = one_hot * (1 - eps) + (1 - one_hot) * eps / (pred.size(1) - 1)
    return -(one_hot * F.log_softmax(pred, dim=1)).sum(dim=1).mean()


def clouds(generator, n):
    labels = generator.integers(0, CLASSES, size=n)
    batch = []
    for label in labels:
        u = generator.normal(size=(POINTS, 3))
        if label == 0:  # sphere
            p = u / np.linalg.norm(u, axis=1, keepdims=True)
        elif label == 1:  # cube surface
            p = np.clip(u / np.abs(u).max(axis=1, keepdims=True), -1, 1)
        else:  # cylinder
            angle = generator.uniform(0, 2 * np.pi, POINTS)
            p = np.stack([np.cos(angle), np.sin(angle), generator.uniform(-1, 1, POINTS)], 1)
        turn = generator.uniform(0, 2 * np.pi)
        rotation = np.array([[np.cos(turn), -np.sin(turn), 0], [np.sin(turn), np.cos(turn), 0], [0, 0, 1]])
        p = (p @ rotation.T) * generator.uniform(0.7, 1.3) + generator.normal(scale=0.02, size=(POINTS, 3))
        batch.append(p.T)
    return torch.tensor(np.stack(batch), dtype=torch.float32), torch.tensor(labels)


model = DGCNN()
same_weights(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.steps, eta_min=1e-3)
data = rng(7)
for step in range(args.steps):
    model.train()
    points, labels = clouds(data, BATCH)
    optimizer.zero_grad()
    logits = model(points)
    loss = smoothed_cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    scheduler.step()
    grad_norm = sum(p.grad.pow(2).sum() for p in model.parameters()).sqrt()
    print(f"step {step} loss {loss.item():.6f} grad norm {grad_norm.item():.5f} lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    points, labels = clouds(rng(11), 12)
    logits = model(points)
    neighbours = knn(points, K)
print(f"eval loss {smoothed_cross_entropy(logits, labels).item():.6f} "
      f"accuracy {(logits.argmax(1) == labels).float().mean().item():.4f}")
print(f"logits sum {logits.sum().item():.5f} neighbour index sum {neighbours.sum().item()}")
