"""Idioms from FEDformer, a Swin Transformer, a point cloud transformer (PCT) and BERT4Rec, as their reference code
writes them. FEDformer: a frequency-enhanced block that keeps a random set of ``rfft`` modes and mixes them with a
complex ``nn.Parameter`` (``torch.rand(..., dtype=torch.cfloat)``) through a complex ``einsum``, then ``irfft`` back;
a series decomposition whose moving average pads by repeating the ends and pools with ``AvgPool1d``. Swin: window
attention on a cyclically shifted grid (``torch.roll``), the shifted windows' masks and relative distances kept as
frozen parameters, a relative position bias gathered by index tensors, patch merging by ``nn.Unfold``. PCT: farthest
point sampling that asks for more points than the cloud has (so points repeat and their distances tie), neighbours by
``argsort()[:, :, :k]`` of squared distances (PyTorch's order of tied distances decides which copies are taken),
offset attention with shared query/key weights (``q_conv.weight = k_conv.weight``) normalised by a column sum.
BERT4Rec: masked item prediction with ``CrossEntropyLoss(ignore_index=0)`` and NDCG@k from ranks made with
``argsort(descending=True)``.

    python fedformer_swin_pct.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()
np.random.seed(0)


class MovingAvgDecomp(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=1, padding=0)

    def forward(self, x):  # x: B, L, C
        front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        mean = self.avg(torch.cat([front, x, end], dim=1).permute(0, 2, 1)).permute(0, 2, 1)
        return x - mean, mean


class FourierBlock(nn.Module):
    def __init__(self, channels, seq_len, modes, heads=4):
        super().__init__()
        self.index = sorted(np.random.permutation(seq_len // 2)[:modes].tolist())
        self.scale = 1 / (channels * channels)
        self.weights = nn.Parameter(self.scale * torch.rand(heads, channels // heads, channels // heads,
                                                            len(self.index), dtype=torch.cfloat))

    def forward(self, x):  # x: B, H, E, L
        B, H, E, L = x.shape
        x_ft = torch.fft.rfft(x, dim=-1)
        out_ft = torch.zeros(B, H, E, L // 2 + 1, device=x.device, dtype=torch.cfloat)
        for wi, i in enumerate(self.index):
            out_ft[:, :, :, wi] = torch.einsum("bhi,hio->bho", x_ft[:, :, :, i], self.weights[:, :, :, wi])
        return torch.fft.irfft(out_ft, n=L)


class FEDBlock(nn.Module):
    def __init__(self, channels=16, seq_len=24, modes=5):
        super().__init__()
        self.embed = nn.Conv1d(3, channels, kernel_size=3, padding=1, padding_mode="circular", bias=False)
        self.fourier = FourierBlock(channels, seq_len, modes)
        self.decomp = MovingAvgDecomp(5)
        self.head = nn.Linear(channels, 3)

    def forward(self, x):  # B, L, 3
        h = self.embed(x.permute(0, 2, 1)).transpose(1, 2)
        B, L, C = h.shape
        f = self.fourier(h.view(B, L, 4, C // 4).permute(0, 2, 3, 1)).permute(0, 3, 1, 2).reshape(B, L, C)
        seasonal, trend = self.decomp(h + f)
        return self.head(seasonal) + self.head(trend).mean(1, keepdim=True)


def create_mask(window, disp, upper_lower, left_right):
    mask = torch.zeros(window ** 2, window ** 2)
    if upper_lower:
        mask[-disp * window:, :-disp * window] = float("-inf")
        mask[:-disp * window, -disp * window:] = float("-inf")
    if left_right:
        mask = mask.view(window, window, window, window)
        mask[:, -disp:, :, :-disp] = float("-inf")
        mask[:, :-disp, :, -disp:] = float("-inf")
        mask = mask.view(window ** 2, window ** 2)
    return mask


class WindowAttention(nn.Module):
    def __init__(self, dim, heads, head_dim, window, shifted):
        super().__init__()
        self.heads, self.window, self.shifted, self.scale = heads, window, shifted, head_dim ** -0.5
        self.to_qkv = nn.Linear(dim, heads * head_dim * 3, bias=False)
        self.to_out = nn.Linear(heads * head_dim, dim)
        disp = window // 2
        self.disp = disp
        if shifted:
            self.upper_lower_mask = nn.Parameter(create_mask(window, disp, True, False), requires_grad=False)
            self.left_right_mask = nn.Parameter(create_mask(window, disp, False, True), requires_grad=False)
        idx = torch.tensor(np.array([[x, y] for x in range(window) for y in range(window)]))
        self.relative = nn.Parameter(idx[None, :, :] - idx[:, None, :] + window - 1, requires_grad=False)
        self.pos_embedding = nn.Parameter(torch.randn(2 * window - 1, 2 * window - 1))

    def forward(self, x):  # B, H, W, C
        if self.shifted:
            x = torch.roll(x, shifts=(-self.disp, -self.disp), dims=(1, 2))
        b, n_h, n_w, _ = x.shape
        w, h = self.window, self.heads
        nw_h, nw_w = n_h // w, n_w // w

        def windows(t):
            t = t.view(b, nw_h, w, nw_w, w, h, -1).permute(0, 5, 1, 3, 2, 4, 6)
            return t.reshape(b, h, nw_h * nw_w, w * w, -1)

        q, k, v = map(windows, self.to_qkv(x).chunk(3, dim=-1))
        dots = torch.einsum("b h w i d, b h w j d -> b h w i j", q, k) * self.scale
        dots = dots + self.pos_embedding[self.relative[:, :, 0], self.relative[:, :, 1]]
        if self.shifted:
            dots[:, :, -nw_w:] += self.upper_lower_mask
            dots[:, :, nw_w - 1::nw_w] += self.left_right_mask
        out = torch.einsum("b h w i j, b h w j d -> b h w i d", dots.softmax(dim=-1), v)
        out = out.view(b, h, nw_h, nw_w, w, w, -1).permute(0, 2, 4, 3, 5, 1, 6).reshape(b, n_h, n_w, -1)
        out = self.to_out(out)
        if self.shifted:
            out = torch.roll(out, shifts=(self.disp, self.disp), dims=(1, 2))
        return out


class TinySwin(nn.Module):
    def __init__(self, dim=12, classes=4):
        super().__init__()
        self.merge = nn.Unfold(kernel_size=2, stride=2, padding=0)
        self.embed = nn.Linear(3 * 4, dim)
        self.norms = nn.ModuleList([nn.LayerNorm(dim), nn.LayerNorm(dim)])
        self.blocks = nn.ModuleList([WindowAttention(dim, 2, 6, 4, False), WindowAttention(dim, 2, 6, 4, True)])
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        b, c, hgt, wid = img.shape
        x = self.embed(self.merge(img).view(b, -1, hgt // 2, wid // 2).permute(0, 2, 3, 1))
        for norm, block in zip(self.norms, self.blocks):
            x = x + block(norm(x))
        return self.head(x.mean(dim=[1, 2]))


def square_distance(src, dst):
    return torch.sum((src[:, :, None] - dst[:, None]) ** 2, dim=-1)


def index_points(points, idx):
    raw = idx.size()
    idx = idx.reshape(raw[0], -1)
    res = torch.gather(points, 1, idx[..., None].expand(-1, -1, points.size(-1)))
    return res.reshape(*raw, -1)


def farthest_point_sample(xyz, npoint):
    B, N, _ = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long)
    distance = torch.ones(B, N) * 1e10
    farthest = torch.zeros(B, dtype=torch.long)  # (the reference draws this start with randint)
    batch = torch.arange(B, dtype=torch.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        distance = torch.min(distance, dist)
        farthest = torch.max(distance, -1)[1]
    return centroids


class OffsetAttention(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.q_conv = nn.Conv1d(channels, channels // 4, 1, bias=False)
        self.k_conv = nn.Conv1d(channels, channels // 4, 1, bias=False)
        self.q_conv.weight = self.k_conv.weight
        # (PCT gives these two biases; BatchNorm after them makes their gradient zero up to rounding, which AdamW's
        # first steps turn into lr-sized moves of either sign: left out here, so the printed digits compare)
        self.v_conv = nn.Conv1d(channels, channels, 1, bias=False)
        self.trans_conv = nn.Conv1d(channels, channels, 1, bias=False)
        self.after_norm = nn.BatchNorm1d(channels)

    def forward(self, x):
        energy = self.q_conv(x).permute(0, 2, 1) @ self.k_conv(x)
        attention = energy.softmax(dim=-1)
        attention = attention / (1e-9 + attention.sum(dim=1, keepdims=True))
        x_r = self.v_conv(x) @ attention
        return x + F.relu(self.after_norm(self.trans_conv(x - x_r)))


class TinyPCT(nn.Module):
    def __init__(self, channels=16, classes=4, npoint=24, k=6):
        super().__init__()
        self.npoint, self.k = npoint, k
        self.point_mlp = nn.Sequential(nn.Conv1d(3, channels, 1, bias=False), nn.BatchNorm1d(channels), nn.ReLU())
        self.local = nn.Sequential(nn.Conv1d(2 * channels, channels, 1, bias=False), nn.BatchNorm1d(channels),
                                   nn.ReLU())
        self.attn = OffsetAttention(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, xyz):  # B, N, 3
        feats = self.point_mlp(xyz.permute(0, 2, 1)).permute(0, 2, 1)
        B, S = xyz.shape[0], self.npoint
        fps = farthest_point_sample(xyz, S)
        new_xyz, new_feats = index_points(xyz, fps), index_points(feats, fps)
        idx = square_distance(new_xyz, xyz).argsort()[:, :, :self.k]
        grouped = index_points(feats, idx) - new_feats.view(B, S, 1, -1)
        grouped = torch.cat([grouped, new_feats.view(B, S, 1, -1).repeat(1, 1, self.k, 1)], dim=-1)
        g = grouped.permute(0, 1, 3, 2).reshape(B * S, -1, self.k)
        g = torch.max(self.local(g), 2)[0].view(B, S, -1).permute(0, 2, 1)
        return self.head(torch.max(self.attn(g), 2)[0]), idx


class Bert4RecHead(nn.Module):
    def __init__(self, items=30, dim=16, max_len=10):
        super().__init__()
        self.token = nn.Embedding(items + 2, dim, padding_idx=0)
        self.position = nn.Embedding(max_len, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True, activation="gelu")
        self.out = nn.Linear(dim, items + 1)

    def forward(self, seqs):
        mask = (seqs > 0).unsqueeze(1).repeat(1, seqs.size(1), 1).unsqueeze(1)
        x = self.token(seqs) + self.position(torch.arange(seqs.size(1)))[None]
        return self.out(self.layer(x, src_key_padding_mask=~mask[:, 0, 0]))


def ndcg_recall(scores, labels, k):
    rank = (-scores).argsort(dim=1)
    cut = rank[:, :k]
    hits = labels.gather(1, cut)
    position = torch.arange(2, 2 + k)
    weights = 1 / torch.log2(position.float())
    dcg = (hits.float() * weights).sum(1)
    idcg = torch.Tensor([weights[:min(int(n), k)].sum() for n in labels.sum(1)])
    return (dcg / idcg).mean().item(), (hits.sum(1).float() / torch.min(torch.Tensor([k]), labels.sum(1).float())).mean().item()


data = rng(0)
fed, swin, pct, bert = FEDBlock(), TinySwin(), TinyPCT(), Bert4RecHead()
same_weights(fed, swin, pct, bert)
models = [fed, swin, pct, bert]
opt = torch.optim.AdamW([p for m in models for p in m.parameters() if p.requires_grad], lr=3e-3, weight_decay=1e-4)

t = np.arange(24 + 6)[None, :, None] / 4.0
series = torch.tensor(np.sin(t + data.uniform(0, 6, (8, 1, 3))) + 0.05 * data.standard_normal((8, 30, 3)),
                      dtype=torch.float32)
images = torch.tensor(data.standard_normal((6, 3, 16, 16)), dtype=torch.float32)
img_labels = torch.tensor(data.integers(0, 4, 6))
cloud = torch.tensor(data.standard_normal((4, 16, 3)), dtype=torch.float32)  # 16 points, 24 sampled: repeats
cloud_labels = torch.tensor(data.integers(0, 4, 4))
seqs = torch.tensor(data.integers(1, 31, (8, 10)))
seqs[:, :2] = 0  # padding on the left
labels = torch.zeros_like(seqs)
masked = torch.tensor(data.random((8, 10)) < 0.3) & (seqs > 0)
labels[masked] = seqs[masked]
seqs = seqs.masked_fill(masked, 31)  # the [MASK] token
ce = nn.CrossEntropyLoss(ignore_index=0)

for step in range(args.steps):
    pred = fed(series[:, :24])
    l_fed = F.mse_loss(pred[:, -6:], series[:, 24:])
    l_swin = F.cross_entropy(swin(images), img_labels)
    logits, idx = pct(cloud)
    l_pct = F.cross_entropy(logits, cloud_labels)
    out = bert(seqs)
    l_bert = ce(out.view(-1, out.size(-1)), labels.view(-1))
    loss = l_fed + l_swin + l_pct + l_bert
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_([p for m in models for p in m.parameters() if p.requires_grad], 5.0)
    opt.step()
    print(f"step {step} fed {l_fed.item():.6f} swin {l_swin.item():.6f} pct {l_pct.item():.6f} "
          f"bert {l_bert.item():.6f} grad {norm.item():.5f}")
    print("knn", idx[0, :3].tolist())

with torch.no_grad():
    for m in models:
        m.eval()
    scores = bert(seqs)[:, -1, 1:]
    target = torch.zeros(8, 30, dtype=torch.long)
    target[torch.arange(8), seqs[:, -2].clamp(1, 30) - 1] = 1
    ndcg, recall = ndcg_recall(scores, target, 5)
    print(f"ndcg@5 {ndcg:.6f} recall@5 {recall:.6f}")
    print("fourier modes", fed.fourier.index, "weights", tuple(fed.fourier.weights.shape), fed.fourier.weights.dtype)
    print("pct", [f"{v:.5f}" for v in pct(cloud)[0][0].tolist()], "shared", pct.attn.q_conv.weight is pct.attn.k_conv.weight)
    print("swin", [f"{v:.5f}" for v in swin(images)[0].tolist()], "frozen masks",
          sum(not p.requires_grad for p in swin.parameters()))
    print("sort ties", torch.tensor([3, 1, 3, 2, 3, 1] * 4).sort(descending=True).indices.tolist()[:12])
    print("decomp", f"{math.fsum(fed.decomp(series)[1].sum(1)[0].tolist()):.5f}")
