"""Train a character-level GPT on a paragraph, evaluate, and sample (one process).

    python gpt_char.py [--attention flash|mask] [--steps N]
"""

import argparse
import math

import torch
from _support import TEXT, rng, same_weights
from gpt_model import GPT, GPTConfig

parser = argparse.ArgumentParser()
parser.add_argument("--attention", choices=["flash", "mask"], default="flash")
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args()

torch.manual_seed(1337)
chars = sorted(set(TEXT))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block_size, batch_size = 16, 8
batches = rng(0)


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = batches.integers(0, len(d) - block_size, size=batch_size)
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + 1 + block_size] for i in ix])
    return x, y


config = GPTConfig(block_size=block_size, vocab_size=len(chars), flash=args.attention == "flash")
model = GPT(config)
same_weights(model)
optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))
print(f"number of parameters: {sum(p.numel() for p in model.parameters())}")


def get_lr(it, warmup=2, lr=3e-3, min_lr=3e-4):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    ratio = (it - warmup) / max(1, args.steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(2)
        for k in range(2):
            X, Y = get_batch(split)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


for it in range(args.steps):
    for param_group in optimizer.param_groups:
        param_group["lr"] = get_lr(it)
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"iter {it}: loss {loss.item():.8f}")

losses = estimate_loss()
print(f"eval: train loss {losses['train']:.8f}, val loss {losses['val']:.8f}")
context = torch.zeros((1, 1), dtype=torch.long)
sample = model.generate(context, max_new_tokens=20, top_k=5)[0].tolist()
assert len(sample) == 21 and all(0 <= i < len(chars) for i in sample)
print("sample:", repr("".join(itos[i] for i in sample)))
