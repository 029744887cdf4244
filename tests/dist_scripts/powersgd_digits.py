"""PowerSGD trains a real model: scikit-learn's digits, an MLP on 2+ ranks, rank-4 compression (from the 10th
iteration) against plain DDP from the same start on the same batches; test accuracy within 1.5 points.

Run: python -m ember.distributed.run --nproc-per-node 2 tests/dist_scripts/powersgd_digits.py
"""

from datetime import timedelta

import numpy as np
from sklearn.datasets import load_digits

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed.algorithms.ddp_comm_hooks import powerSGD_hook
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
digits = load_digits()
x_all = (digits.data / 16.0).astype(np.float32)
y_all = digits.target.astype(np.int64)
order = np.random.default_rng(0).permutation(len(x_all))
train, test = order[:1400], order[1400:]
mine = train[rank::world]


def train_model(hook_state=None):
    ember.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)))
    if hook_state is not None:
        model.register_comm_hook(hook_state, powerSGD_hook.powerSGD_hook)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gen = np.random.default_rng(1)
    for _ in range(12):
        shuffled = mine[gen.permutation(len(mine))]
        for i in range(0, len(shuffled) - 31, 32):
            idx = shuffled[i:i + 32]
            loss = nn.functional.cross_entropy(model(ember.tensor(x_all[idx])), ember.tensor(y_all[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with ember.no_grad():
        predicted = model.module(ember.tensor(x_all[test])).argmax(1).numpy()
    return 100.0 * float((predicted == y_all[test]).mean())


plain = train_model()
state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=4, start_powerSGD_iter=10)
compressed = train_model(state)
rate, before, after = state.compression_stats()
assert rate > 5, f"compression rate {rate:.1f}"
assert plain > 90 and abs(plain - compressed) <= 1.5, f"plain DDP {plain:.2f}% vs PowerSGD {compressed:.2f}%"
print(f"powerSGD digits ok rank {rank}: plain {plain:.2f}% powerSGD {compressed:.2f}% "
      f"(compression {rate:.1f}x)", flush=True)
dist.destroy_process_group()
