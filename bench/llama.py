"""The LLaMA-style model of ``bench/run_all.py``'s row ``llama16``, written once against PyTorch's API.

Meta's reference layout: RMSNorm before attention and MLP, rotary position embeddings through complex numbers
(``polar`` / ``view_as_complex`` / ``view_as_real``), causal attention (``scaled_dot_product_attention`` with
``is_causal=True``), a SwiGLU feed-forward, no biases. ``workloads.build_llama`` trains it.
"""

from __future__ import annotations

import numpy as np


def llama_model(fw, seed: int = 0, vocab: int = 65, block: int = 64, width: int = 128, heads: int = 4,
                layers: int = 4, hidden: int = 352):
    """The model; weights come from NumPy (N(0, 0.02)), so both frameworks start from the same ones."""
    nn, F = fw.nn, fw.nn.functional
    head_dim = width // heads

    def rotary(x, freqs_cis):
        # x: (B, T, H, D) -> pairs as complex numbers, rotated by position
        xc = fw.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return fw.view_as_real(xc * freqs_cis.view(1, x.shape[1], 1, -1)).flatten(3).type_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm, self.ffn_norm = nn.RMSNorm(width, eps=1e-5), nn.RMSNorm(width, eps=1e-5)
            self.wq, self.wk = nn.Linear(width, width, bias=False), nn.Linear(width, width, bias=False)
            self.wv, self.wo = nn.Linear(width, width, bias=False), nn.Linear(width, width, bias=False)
            self.w1, self.w3 = nn.Linear(width, hidden, bias=False), nn.Linear(width, hidden, bias=False)
            self.w2 = nn.Linear(hidden, width, bias=False)

        def forward(self, x, freqs_cis):
            B, T, C = x.shape
            h = self.attention_norm(x)
            q, k, v = (w(h).view(B, T, heads, head_dim) for w in (self.wq, self.wk, self.wv))
            q, k = rotary(q, freqs_cis), rotary(k, freqs_cis)
            y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True)
            x = x + self.wo(y.transpose(1, 2).contiguous().view(B, T, C))
            h = self.ffn_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, width)
            self.layers = nn.ModuleList([Block() for _ in range(layers)])
            self.norm, self.output = nn.RMSNorm(width, eps=1e-5), nn.Linear(width, vocab, bias=False)
            freqs = 1.0 / (10000.0 ** (fw.arange(0, head_dim, 2).float() / head_dim))
            angles = fw.outer(fw.arange(block).float(), freqs)
            self.freqs_cis = fw.polar(fw.ones_like(angles), angles)  # complex64, (block, head_dim / 2)

        def forward(self, idx):
            x = self.tok_embeddings(idx)
            freqs_cis = self.freqs_cis[: idx.shape[1]]
            for layer in self.layers:
                x = layer(x, freqs_cis)
            return self.output(self.norm(x))

    model = Llama()
    rng = np.random.default_rng(seed)
    with fw.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.copy_(fw.tensor((0.02 * rng.standard_normal(tuple(p.shape))).astype(np.float32)))
    return model

