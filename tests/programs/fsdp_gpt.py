"""Train the character-level GPT with FullyShardedDataParallel, each transformer block its own unit.

    torchrun --standalone --nproc-per-node 2 fsdp_gpt.py [--strategy FULL_SHARD|SHARD_GRAD_OP|NO_SHARD]
                                                        [--use-orig-params]

The shape of public FSDP training scripts: ``transformer_auto_wrap_policy`` with ``functools.partial``,
``model.clip_grad_norm_``, the loss averaged over ranks for
printing, and at the end a full state dict gathered on rank 0 (``FullStateDictConfig(offload_to_cpu=False,
rank0_only=True)``) and the optimizer's state by parameter name (``FSDP.optim_state_dict``).
"""

import argparse
import functools
import os

import torch
import torch.distributed as dist
from _support import TEXT, rng, same_weights
from gpt_model import GPT, Block, GPTConfig
from torch.distributed.fsdp import FullOptimStateDictConfig, FullStateDictConfig, ShardingStrategy, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", default="FULL_SHARD", choices=["FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD"])
parser.add_argument("--use-orig-params", action="store_true")
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()

dist.init_process_group(backend="gloo")
rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.manual_seed(1337 + rank)
chars = sorted(set(TEXT))
stoi = {ch: i for i, ch in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
block_size, batch_size = 16, 4
batches = rng(100 + rank)  # each rank its own batches


def get_batch():
    ix = batches.integers(0, len(data) - block_size, size=batch_size)
    return torch.stack([data[i:i + block_size] for i in ix]), torch.stack([data[i + 1:i + 1 + block_size] for i in ix])


model = GPT(GPTConfig(block_size=block_size, vocab_size=len(chars)))
same_weights(model)
for tensor in model.state_dict().values():  # rank 0's weights everywhere (PyTorch's sync_module_states needs GPUs)
    dist.broadcast(tensor, src=0)
model = FSDP(model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block}),
             sharding_strategy=ShardingStrategy[args.strategy], use_orig_params=args.use_orig_params,
             device_id=torch.device("cpu"))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)

for it in range(args.steps):
    X, Y = get_batch()
    logits, loss = model(X, Y)
    loss.backward()
    norm = model.clip_grad_norm_(1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    mean_loss = loss.detach().clone()
    dist.all_reduce(mean_loss)
    if rank == 0:
        print(f"iter {it}: loss {mean_loss.item() / world_size:.8f} grad norm {norm.item():.8f}")

# offload_to_cpu=False: PyTorch 2.13's offload of tensors already on the CPU frees the gathered parameters it
# still needs ("setStorage ... out of bounds for storage of size 0").
with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                          FullStateDictConfig(offload_to_cpu=False, rank0_only=True),
                          FullOptimStateDictConfig(offload_to_cpu=False)):
    state = model.state_dict()
    optim_state = FSDP.optim_state_dict(model, optimizer)
if rank == 0:
    print(f"state dict: {len(state)} tensors, first {next(iter(state))}, checksum "
          f"{sum(v.double().sum().item() for v in state.values()):.8f}")
    moments = sum(s["exp_avg"].double().abs().sum().item() for s in optim_state["state"].values())
    print(f"optimizer state: {len(optim_state['state'])} parameters, first {sorted(optim_state['state'])[0]}, "
          f"|exp_avg| {moments:.8f}")
dist.barrier()
dist.destroy_process_group()
