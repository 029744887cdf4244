"""DDP on every rank: evaluation on rank 0 only never hangs training, and where the non-finite warning points.
(Run on 2 ranks by tests/test_reducer_on_ranks.py.)"""

import warnings

import numpy as np

import ember
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel as DDP


class TinyGPT(nn.Module):
    """A GPT-style model with a registered causal-mask buffer (DDP broadcasts buffers before a synchronised
    forward)."""

    def __init__(self, vocab=11, width=8, block=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.proj = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab)
        self.register_buffer("mask", ember.tensor(np.tril(np.ones((1, block, block), dtype=np.float32))))

    def forward(self, idx):
        h = self.embed(idx)
        t = idx.shape[1]
        att = (h @ h.transpose(1, 2)).masked_fill(self.mask[:, :t, :t] == 0, float("-inf")).softmax(-1)
        return self.head(self.proj(att @ h))


def test_rank0_only_evaluation_does_not_hang_and_replicas_stay_identical(rank, world, process_group):
    # Evaluated on rank 0 only under no_grad (also in eval mode, and through .module): no such forward may
    # communicate, or rank 0 would wait for a broadcast the other ranks never join (the job's timeout ends it).
    ember.manual_seed(0)
    model = DDP(TinyGPT())
    opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(rank)
    for step in range(3):
        idx = ember.tensor(rng.integers(0, 11, (4, 6)))
        opt.zero_grad()
        nn.functional.cross_entropy(model(idx).reshape(-1, 11), idx.reshape(-1)).backward()
        opt.step()
        if rank == 0:
            with ember.no_grad():
                model(idx)
            model.eval()
            with ember.no_grad():
                model(idx)
            model.train()
            model.module(idx)  # the wrapped module directly, grad mode on
        if step == 1:
            process_group.barrier()
    flat = ember.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [ember.zeros_like(flat) for _ in range(world)]
    process_group.all_gather(gathered, flat)
    assert all(ember.equal(gathered[0], g) for g in gathered)


def test_the_nonfinite_warning_names_the_users_backward_line(rank, world):
    lin = DDP(nn.Linear(3, 1))
    x = ember.ones(2, 3) * (float("nan") if rank == world - 1 else 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(x).sum().backward()  # the line the warning must name
    nonfinite = [w for w in caught if "non-finite" in str(w.message)]
    assert len(nonfinite) == 1, [str(w.message) for w in caught]
    assert nonfinite[0].filename == __file__
