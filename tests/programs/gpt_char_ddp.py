"""Train the character-level GPT data-parallel with gradient accumulation; rank 0 alone evaluates.

    torchrun --standalone --nproc-per-node 2 gpt_char_ddp.py [--accumulate flag|no_sync] [--attention flash|mask]

Gradient accumulation either sets ``require_backward_grad_sync`` on the last micro-step only, or wraps the other
micro-steps in ``model.no_sync()``. Rank 0 evaluates the DDP model under ``no_grad`` while rank 1 waits at a barrier,
so DDP must not communicate for a forward that no synchronised backward follows. With ``--attention mask`` the model
keeps a causal-mask buffer: PyTorch's DDP then broadcasts buffers in rank 0's evaluation forward (it decides from the
previous forward) and the job hangs; ember syncs buffers only in forwards that will be followed by a synchronised
backward, so the same program runs.
"""

import argparse
import contextlib
import os

import torch
import torch.distributed as dist
from _support import TEXT, rng, same_weights
from gpt_model import GPT, GPTConfig
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--accumulate", choices=["flag", "no_sync"], default="flag")
parser.add_argument("--attention", choices=["flash", "mask"], default="flash")
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()

dist.init_process_group(backend="gloo")
ddp_rank, ddp_world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
master_process = ddp_rank == 0
gradient_accumulation_steps = 4
assert gradient_accumulation_steps % ddp_world_size == 0
gradient_accumulation_steps //= ddp_world_size

torch.manual_seed(1337 + ddp_rank)
chars = sorted(set(TEXT))
stoi = {ch: i for i, ch in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
block_size, batch_size = 16, 4
batches = rng(100 + ddp_rank)  # each rank its own batches


def get_batch():
    ix = batches.integers(0, len(data) - block_size, size=batch_size)
    return torch.stack([data[i:i + block_size] for i in ix]), torch.stack([data[i + 1:i + 1 + block_size] for i in ix])


model = GPT(GPTConfig(block_size=block_size, vocab_size=len(chars), flash=args.attention == "flash"))
same_weights(model)
model = DDP(model)
raw_model = model.module
optimizer = raw_model.configure_optimizers(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))

val_batches = rng(7)
X_val_idx = val_batches.integers(0, len(data) - block_size, size=8)
X_val = torch.stack([data[i:i + block_size] for i in X_val_idx])
Y_val = torch.stack([data[i + 1:i + 1 + block_size] for i in X_val_idx])

for it in range(args.steps):
    for micro_step in range(gradient_accumulation_steps):
        last = micro_step == gradient_accumulation_steps - 1
        if args.accumulate == "flag":
            model.require_backward_grad_sync = last
            context = contextlib.nullcontext()
        else:
            context = contextlib.nullcontext() if last else model.no_sync()
        with context:
            X, Y = get_batch()
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
            loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if master_process:
        print(f"iter {it}: loss {loss.item() * gradient_accumulation_steps:.8f}")
        model.eval()
        with torch.no_grad():  # rank 0 alone: no collective may be issued here
            _, val_loss = model(X_val, Y_val)
        model.train()
        print(f"iter {it}: val loss {val_loss.item():.8f}")
    dist.barrier()

checksum = torch.tensor([sum(p.detach().double().sum().item() for p in raw_model.parameters())])
gathered = [torch.zeros(1, dtype=torch.float64) for _ in range(ddp_world_size)]
dist.all_gather(gathered, checksum.double())
assert all(torch.equal(g, gathered[0]) for g in gathered), f"replicas differ: {gathered}"
if master_process:
    print(f"replicas identical: {gathered[0].item():.8f}")
dist.barrier()  # nobody tears the group down while another rank still uses it
dist.destroy_process_group()
