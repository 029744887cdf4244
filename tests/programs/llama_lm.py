"""A tiny LLaMA-style language model written as Meta's reference code writes it: RMSNorm before attention and MLP,
rotary position embeddings through complex numbers (``torch.polar`` / ``view_as_complex`` / ``view_as_real``),
a SwiGLU feed-forward, causal attention with an additive ``-inf`` mask; trained a few AdamW steps on synthetic
tokens (a repeating pattern with noise), then a greedy continuation.

    python llama_lm.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()

VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 32, 32, 4, 2, 16, 8


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads, self.head_dim = HEADS, DIM // HEADS
        self.wq = nn.Linear(DIM, DIM, bias=False)
        self.wk = nn.Linear(DIM, DIM, bias=False)
        self.wv = nn.Linear(DIM, DIM, bias=False)
        self.wo = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        xq, keys, values = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        return self.wo(output.transpose(1, 2).contiguous().view(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(DIM, hidden, bias=False)
        self.w2 = nn.Linear(hidden, DIM, bias=False)
        self.w3 = nn.Linear(DIM, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward(hidden=64)
        self.attention_norm = nn.RMSNorm(DIM, eps=1e-5)
        self.ffn_norm = nn.RMSNorm(DIM, eps=1e-5)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(TransformerBlock() for _ in range(LAYERS))
        self.norm_weight = nn.Parameter(torch.ones(DIM))
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        self.freqs_cis = precompute_freqs_cis(DIM // HEADS, SEQ * 2)

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis[:seqlen]
        mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = torch.triu(mask, diagonal=1).type_as(h)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        h = F.rms_norm(h, (DIM,), self.norm_weight)  # eps=None: float32's epsilon
        return self.output(h).float()


gen = np.random.default_rng(11)
pattern = gen.integers(0, VOCAB, size=7)


def batch():
    starts = gen.integers(0, 7, size=BATCH)
    seqs = pattern[(starts[:, None] + np.arange(SEQ + 1)) % 7]
    noise = gen.random(seqs.shape) < 0.1
    seqs = np.where(noise, gen.integers(0, VOCAB, size=seqs.shape), seqs)
    return torch.from_numpy(seqs[:, :-1].copy()), torch.from_numpy(seqs[:, 1:].copy())


torch.manual_seed(0)
model = Transformer()
same_weights(model)
print(f"parameters: {sum(p.numel() for p in model.parameters())}")
fc = model.freqs_cis
print(f"freqs_cis: {str(fc.dtype).split('.')[-1]} {tuple(fc.shape)} |z| sum {fc.abs().sum().item():.6f} angle sum {fc.angle().sum().item():.6f}")

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
for step in range(args.steps):
    x, y = batch()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, VOCAB), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f} grad norm {grad_norm.item():.6f}")

model.eval()
with torch.no_grad():
    tokens = torch.from_numpy(pattern[:4].copy()).view(1, -1)
    for _ in range(6):
        nxt = model(tokens)[:, -1].argmax(-1, keepdim=True)
        tokens = torch.cat([tokens, nxt], dim=1)
    print(f"greedy: {tokens[0].tolist()}")
    x, y = batch()
    print(f"eval loss {F.cross_entropy(model(x).view(-1, VOCAB), y.reshape(-1)).item():.6f}")
