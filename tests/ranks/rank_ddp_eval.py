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


def assert_same_on_every_rank(process_group, world, local) -> None:
    gathered = [ember.zeros_like(local) for _ in range(world)]
    process_group.all_gather(gathered, local.contiguous())
    assert all(ember.equal(gathered[0], g) for g in gathered), [g.tolist() for g in gathered]


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
    assert_same_on_every_rank(process_group, world, ember.cat([p.detach().reshape(-1) for p in model.parameters()]))


def test_the_nonfinite_warning_names_the_users_backward_line(rank, world):
    lin = DDP(nn.Linear(3, 1))
    x = ember.ones(2, 3) * (float("nan") if rank == world - 1 else 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(x).sum().backward()  # the line the warning must name
    nonfinite = [w for w in caught if "non-finite" in str(w.message)]
    assert len(nonfinite) == 1, [str(w.message) for w in caught]
    assert nonfinite[0].filename == __file__


def test_every_rank_evaluates_with_rank0s_batchnorm_statistics_as_pytorchs(rank, world, process_group):
    # The ImageNet example's validation: every rank evaluates its shard through the DDP wrapper, in eval mode under
    # no_grad, after training forwards that left each rank's own running statistics. PyTorch's DDP copies rank 0's
    # buffers at that first no_grad forward (it follows a synchronised one), so every rank normalises with rank 0's
    # statistics: the same input gives the same output on every rank (checked against PyTorch on gloo, 2 ranks).
    ember.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    model = DDP(net)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(5 + rank)
    for _ in range(2):
        x = ember.tensor(rng.standard_normal((8, 4)).astype(np.float32) + rank)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    model.eval()
    with ember.no_grad():
        out = model(ember.ones(2, 4))
        again = model(ember.ones(2, 4))  # (PyTorch copies at the first no_grad forward only)
    for local in (out, again, net[1].running_mean, net[1].running_var):
        assert_same_on_every_rank(process_group, world, local)
    model.train()  # training goes on in step after the evaluation
    x = ember.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
    assert_same_on_every_rank(process_group, world, ember.cat([p.detach().reshape(-1) for p in model.parameters()]))


def test_rank0_only_evaluation_of_a_batchnorm_model_goes_on_training(rank, world, process_group):
    # Rank 0 alone evaluates the BatchNorm model through the wrapper between training steps: its no_grad forward
    # copies rank 0's buffers, as PyTorch's does (a broadcast the other ranks join at their next forward, which
    # copies the same buffers; rank 0's next one then copies none), and training goes on in step. (An evaluation
    # after the last step, with no forward left on the other ranks, waits for them as PyTorch's does.)
    ember.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    model = DDP(net)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(rank)
    for step in range(3):
        x = ember.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        if rank == 0 and step < 2:
            model.eval()
            with ember.no_grad():
                model(x)
                model(x)
            model.train()
    assert_same_on_every_rank(process_group, world, ember.cat([p.detach().reshape(-1) for p in model.parameters()]))
