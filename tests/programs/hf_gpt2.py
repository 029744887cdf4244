"""Train a small Hugging Face GPT-2 (transformers' GPT2LMHeadModel, built from a GPT2Config) on random token
sequences with AdamW, then score a held-out batch.

    python hf_gpt2.py [--steps N] [--attention eager|sdpa]
"""

import argparse
import sys

# ember's torch.distributed (over MPI) has no DTensor or DeviceMesh, which transformers imports whenever
# torch.distributed.is_available(); without mpi4py, ember answers as a PyTorch build without distributed support.
# PyTorch's own answer does not depend on mpi4py.
sys.modules["mpi4py"] = None

import torch  # noqa: E402
from _support import rng, same_weights  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402
from transformers.utils import logging  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--attention", default="eager", choices=["eager", "sdpa"])
args = parser.parse_args()
logging.set_verbosity_error()

vocab, context = 50, 12
config = GPT2Config(vocab_size=vocab, n_positions=16, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0,
                    embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                    attn_implementation=args.attention)
torch.manual_seed(0)
model = GPT2LMHeadModel(config)
same_weights(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

data = rng(0)
for step in range(args.steps):
    tokens = torch.from_numpy(data.integers(0, vocab, (4, context)))
    mask = torch.ones_like(tokens)
    mask[0, :3] = 0  # the first sequence is left-padded
    out = model(tokens, attention_mask=mask, labels=tokens)
    optimizer.zero_grad()
    out.loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step}: loss {out.loss.item():.6f} grad norm {grad_norm.item():.6f}")

model.eval()
with torch.no_grad():
    tokens = torch.from_numpy(data.integers(0, vocab, (2, context)))
    out = model(tokens, labels=tokens)
print(f"eval loss {out.loss.item():.6f} logits {tuple(out.logits.shape)} sum {out.logits.sum().item():.4f}")
