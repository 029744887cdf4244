"""A small transformer language model whose blocks run under activation checkpointing
(torch.utils.checkpoint.checkpoint): their activations are recomputed in backward instead of kept. It checks, in
each framework, that a checkpointed step gives the same loss and gradients as a plain one (dropout included: the
RNG state is replayed), then trains with checkpointing.

    python checkpointed_transformer.py [--steps N] [--reentrant]
"""

import argparse

import torch
from _support import TEXT, rng, same_weights
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--reentrant", action="store_true")
args = parser.parse_args()

chars = sorted(set(TEXT))
data = torch.tensor([chars.index(c) for c in TEXT])
VOCAB, CTX, WIDTH = len(chars), 32, 48


class Block(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, 4, dropout=dropout, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH),
                                 nn.Dropout(dropout))

    def forward(self, x):
        h = self.ln1(x)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), diagonal=1)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class LM(nn.Module):
    def __init__(self, dropout=0.0, layers=3):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(torch.zeros(CTX, WIDTH))
        self.blocks = nn.ModuleList(Block(dropout) for _ in range(layers))
        self.head = nn.Linear(WIDTH, VOCAB)
        self.use_checkpoint = False

    def forward(self, idx):
        x = self.embed(idx) + self.pos[: idx.shape[1]]
        for block in self.blocks:
            if self.use_checkpoint:
                x = checkpoint(block, x, use_reentrant=args.reentrant)
            else:
                x = block(x)
        return self.head(x)


def batch(gen, n=8):
    starts = gen.integers(0, len(data) - CTX - 1, n)
    x = torch.stack([data[s:s + CTX] for s in starts])
    y = torch.stack([data[s + 1:s + CTX + 1] for s in starts])
    return x, y


def loss_and_grads(model, x, y, use_checkpoint, seed):
    model.use_checkpoint = use_checkpoint
    model.zero_grad()
    torch.manual_seed(seed)
    loss = nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    loss.backward()
    return loss.item(), [p.grad.clone() for p in model.parameters()]


# Within each framework: checkpointed == plain, with dropout on (the recomputation replays the RNG state).
probe = LM(dropout=0.1)
x, y = batch(rng(1))
plain_loss, plain_grads = loss_and_grads(probe, x, y, False, seed=7)
ckpt_loss, ckpt_grads = loss_and_grads(probe, x, y, True, seed=7)
same = plain_loss == ckpt_loss and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(plain_grads, ckpt_grads))
print(f"checkpointed step equals plain step (dropout 0.1): {same}")

# checkpoint_sequential over an nn.Sequential of blocks, in two segments.
seq = nn.Sequential(*[Block(0.0) for _ in range(4)])
h = torch.randn(2, CTX, WIDTH, requires_grad=True)
out = checkpoint_sequential(seq, 2, h, use_reentrant=args.reentrant)
out.sum().backward()
print(f"checkpoint_sequential output {tuple(out.shape)} input grad finite: {bool(torch.isfinite(h.grad).all())}")

# Training with checkpointing (dropout 0: the two frameworks' dropout streams differ on purpose).
model = LM(dropout=0.0)
same_weights(model)
model.use_checkpoint = True
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
gen = rng(0)
for step in range(args.steps):
    x, y = batch(gen)
    loss = nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0 or step == args.steps - 1:
        print(f"step {step} loss {loss.item():.6f}")
