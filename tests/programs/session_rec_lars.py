"""Two idioms of public self-supervised and session-recommendation code.

A session-based recommender in GRU4Rec's idioms: a GRUCell over session-parallel mini-batches (a finished
session's hidden row zeroed by a mask, rows dropped as sessions run out), the output items' sparse nn.Embedding
weights and biases scored by ``torch.mm(H, out.T) + bias.T`` against the targets and popularity-sampled negatives
(drawn by a binary search over the cumulative popularity with ``torch.div(..., rounding_mode='trunc')``; the
popularity read from a deque of NumPy float64 scalars), the BPR-max loss with ELU scores and ``softmax_neg``'s
``torch.eye(*X.shape, out=torch.empty_like(X))`` mask, parameters initialised by ``nn.init._no_grad_uniform_`` and
reset from NumPy float32 arrays by ``weight.set_(...)`` under no_grad, and an Adagrad with momentum that steps a
sparse gradient by ``coalesce()``, ``_indices()``, ``_values()``, ``index_copy_`` and ``index_add_``.

VICReg's loss on two views (invariance, a variance hinge on ``sqrt(var + 1e-4)``, the covariance's off-diagonal
read by the ``flatten()[:-1].view(n - 1, n + 1)[:, 1:]`` trick) trained by LARS (trust ratio by nested
``torch.where``, biases and norms filtered by ``p.ndim == 1``), and a segmentation score in
Image_Segmentation's idiom: ``((SR == 1) + (GT == 1)) == 2``, where ``+`` of bools is a logical or.
"""
import collections
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(0)
N_ITEMS, HIDDEN, BATCH, N_SAMPLE = 30, 16, 6, 8


class IndexedAdagradM(torch.optim.Optimizer):
    def __init__(self, params, lr=0.05, momentum=0.0, eps=1e-6):
        super().__init__(params, dict(lr=lr, momentum=momentum, eps=eps))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["acc"] = torch.full_like(p, 0, memory_format=torch.preserve_format)
                self.state[p]["mom"] = torch.full_like(p, 0, memory_format=torch.preserve_format)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad, state, clr = p.grad, self.state[p], group["lr"]
                if grad.is_sparse:
                    grad = grad.coalesce()
                    idx, vals = grad._indices()[0], grad._values()
                    accs = state["acc"][idx] + vals.pow(2)
                    state["acc"].index_copy_(0, idx, accs)
                    accs.add_(group["eps"]).sqrt_().mul_(-1 / clr)
                    moma = state["mom"][idx]
                    moma.mul_(group["momentum"]).add_(vals / accs)
                    state["mom"].index_copy_(0, idx, moma)
                    p.index_add_(0, idx, moma)
                else:
                    state["acc"].add_(grad.pow(2))
                    accs = state["acc"].add(group["eps"]).sqrt_()
                    state["mom"].mul_(group["momentum"]).addcdiv_(grad, accs, value=-clr)
                    p.add_(state["mom"])


def init_parameter_matrix(tensor, dim1_scale=1):
    sigma = math.sqrt(6.0 / float(tensor.size(0) + tensor.size(1) / dim1_scale))
    return nn.init._no_grad_uniform_(tensor, -sigma, sigma)


class SessionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.E = nn.Embedding(N_ITEMS, HIDDEN, sparse=True)
        self.G = nn.GRUCell(HIDDEN, HIDDEN)
        self.Wy = nn.Embedding(N_ITEMS, HIDDEN, sparse=True)
        self.By = nn.Embedding(N_ITEMS, 1, sparse=True)
        with torch.no_grad():
            init_parameter_matrix(self.E.weight)
            init_parameter_matrix(self.G.weight_ih, dim1_scale=3)
            init_parameter_matrix(self.G.weight_hh, dim1_scale=3)
            nn.init.zeros_(self.G.bias_ih)
            nn.init.zeros_(self.G.bias_hh)
            init_parameter_matrix(self.Wy.weight)
            nn.init.zeros_(self.By.weight)

    @torch.no_grad()
    def reset_from_numpy(self, seed):
        g = np.random.RandomState(seed)
        sigma = np.float32(np.sqrt(6.0 / (N_ITEMS + HIDDEN)))
        self.Wy.weight.set_(torch.tensor(g.rand(N_ITEMS, HIDDEN).astype("float32") * 2 * sigma - sigma))
        self.By.weight.set_(torch.zeros((N_ITEMS, 1)))

    def forward(self, X, H, Y):
        H = self.G(self.E(X), H)
        out, bias = self.Wy(Y), self.By(Y)
        return torch.mm(H, out.T) + bias.T, H


def softmax_neg(X):
    hm = 1.0 - torch.eye(*X.shape, out=torch.empty_like(X))
    X = X * hm
    e_x = torch.exp(X - X.max(dim=1, keepdim=True)[0]) * hm
    return e_x / e_x.sum(dim=1, keepdim=True)


def bpr_max(scores, bpreg=1.0):
    scores = F.elu(scores, 0.5)
    softmax_scores = softmax_neg(scores)
    target = torch.diag(scores).reshape(scores.shape[0], -1)
    return torch.sum(-torch.log(torch.sum(torch.sigmoid(target - scores) * softmax_scores, dim=1) + 1e-24)
                     + bpreg * torch.sum((scores ** 2) * softmax_scores, dim=1))


def bin_search(arr, x):
    a = torch.zeros(len(x), dtype=torch.int64)
    b = torch.zeros(len(x), dtype=torch.int64) + arr.shape[0]
    while torch.any(a != b):
        ab = torch.div(a + b, 2, rounding_mode="trunc")
        val = arr[ab]
        go_right = val < x
        a = torch.where(go_right, ab + 1, a)
        b = torch.where(go_right, b, ab)
    return a


sessions = [r.integers(0, N_ITEMS, r.integers(2, 7)) % (N_ITEMS // 2) + 5 * (s % 3) for s in range(20)]
counts = np.bincount(np.concatenate(sessions), minlength=N_ITEMS).astype(np.float64) + 1.0
pop = torch.tensor(collections.deque(counts ** 0.75))  # NumPy float64 scalars: a float64 tensor
cdf = torch.cumsum(pop, 0) / pop.sum()
cdf[-1] = 1.0
print("popularity", pop.dtype, f"{pop.sum().item():.6f}")

model = SessionModel()
model.reset_from_numpy(42)
same_weights(model)
opt = IndexedAdagradM(model.parameters(), lr=0.1, momentum=0.3)
for epoch in range(2):
    order = r.permutation(len(sessions))
    queue = [sessions[i] for i in order]
    active, pos = queue[:BATCH], [0] * BATCH
    nxt, H, total, n = BATCH, torch.zeros(BATCH, HIDDEN), 0.0, 0
    while active:
        X = torch.tensor([int(s[p]) for s, p in zip(active, pos)])
        Y = torch.tensor([int(s[p + 1]) for s, p in zip(active, pos)])
        neg = bin_search(cdf, torch.rand(N_SAMPLE, dtype=torch.float64))
        H = H.detach()
        model.zero_grad()
        R, H = model(X, H, torch.cat([Y, neg]))
        L = bpr_max(R) / len(active)
        L.backward()
        opt.step()
        total, n = total + L.item(), n + 1
        pos = [p + 1 for p in pos]
        finished = torch.tensor([p + 1 >= len(s) for s, p in zip(active, pos)])
        with torch.no_grad():
            H[finished] = 0
        keep = []
        for i in range(len(active)):
            if finished[i]:
                if nxt < len(queue):
                    active[i], pos[i], nxt = queue[nxt], 0, nxt + 1
                    keep.append(True)
                else:
                    keep.append(False)
            else:
                keep.append(True)
        valid = torch.tensor(keep)
        if not valid.all():
            H = H[valid]
            active = [s for s, k in zip(active, keep) if k]
            pos = [p for p, k in zip(pos, keep) if k]
    print(f"epoch {epoch} bpr-max {total / n:.6f} steps {n}")
print(f"Wy {model.Wy.weight.sum().item():.6f} By {model.By.weight.sum().item():.6f} "
      f"acc {opt.state[model.E.weight]['acc'].sum().item():.6f}")


def off_diagonal(x):
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class LARS(torch.optim.Optimizer):
    def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001, weight_decay_filter=None,
                 lars_adaptation_filter=None):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, eta=eta,
                                      weight_decay_filter=weight_decay_filter,
                                      lars_adaptation_filter=lars_adaptation_filter))

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                dp = p.grad
                if dp is None:
                    continue
                if g["weight_decay_filter"] is None or not g["weight_decay_filter"](p):
                    dp = dp.add(p, alpha=g["weight_decay"])
                if g["lars_adaptation_filter"] is None or not g["lars_adaptation_filter"](p):
                    param_norm, update_norm = torch.norm(p), torch.norm(dp)
                    one = torch.ones_like(param_norm)
                    q = torch.where(param_norm > 0.0,
                                    torch.where(update_norm > 0, (g["eta"] * param_norm / update_norm), one), one)
                    dp = dp.mul(q)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(g["momentum"]).add_(dp)
                p.add_(mu, alpha=-g["lr"])


def exclude_bias_and_norm(p):
    return p.ndim == 1


D, F_OUT, VB = 12, 10, 16
encoder = nn.Sequential(nn.Linear(D, 24), nn.BatchNorm1d(24), nn.ReLU(True), nn.Linear(24, F_OUT, bias=False))
same_weights(encoder)
lars = LARS(encoder.parameters(), lr=0.2, weight_decay=1e-6, weight_decay_filter=exclude_bias_and_norm,
            lars_adaptation_filter=exclude_bias_and_norm)
base = torch.from_numpy(r.standard_normal((64, D)).astype("float32"))
for step in range(6):
    idx = torch.from_numpy(r.integers(0, 64, VB))
    noise = torch.from_numpy(r.standard_normal((2, VB, D)).astype("float32"))
    x, y = encoder(base[idx] + 0.1 * noise[0]), encoder(base[idx] + 0.1 * noise[1])
    repr_loss = F.mse_loss(x, y)
    x, y = x - x.mean(dim=0), y - y.mean(dim=0)
    std_x, std_y = torch.sqrt(x.var(dim=0) + 0.0001), torch.sqrt(y.var(dim=0) + 0.0001)
    std_loss = torch.mean(F.relu(1 - std_x)) / 2 + torch.mean(F.relu(1 - std_y)) / 2
    cov_x, cov_y = (x.T @ x) / (VB - 1), (y.T @ y) / (VB - 1)
    cov_loss = off_diagonal(cov_x).pow_(2).sum().div(F_OUT) + off_diagonal(cov_y).pow_(2).sum().div(F_OUT)
    loss = 25.0 * repr_loss + 25.0 * std_loss + 1.0 * cov_loss
    lars.zero_grad()
    loss.backward()
    lars.step()
    print(f"vicreg step {step} loss {loss.item():.6f} repr {repr_loss.item():.6f} std {std_loss.item():.6f} "
          f"cov {cov_loss.item():.6f}")

with torch.no_grad():
    SR = torch.sigmoid(encoder(base)[:, :4]) > 0.5
    GT = (base[:, :4] > 0) == torch.max(base[:, :4] > 0)
    TP = ((SR == 1) + (GT == 1)) == 2  # bool + bool is a logical or: never 2
    union = torch.sum((SR + GT) >= 1)
    acc = float(torch.sum(SR == GT)) / float(SR.numel())
print(f"segmentation acc {acc:.6f} TP {int(torch.sum(TP))} union {int(union)} "
      f"SE {float(torch.sum(TP)) / (float(torch.sum(TP + ((SR == 0) + (GT == 1) == 2))) + 1e-6):.6f}")
