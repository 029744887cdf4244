"""DistributedSampler against torch's: exact indices without shuffling, structure with it."""

import os

import pytest
import torch
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import ember
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.data.distributed import DistributedSampler

CASES = [(n, r, drop) for n in (0, 1, 5, 10, 11, 17) for r in (1, 2, 3, 4) for drop in (False, True)]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_unshuffled_indices_match_torch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs), (n, replicas, rank, drop_last)
        assert len(ours) == len(theirs) == len(list(ours))
        assert ours.total_size == theirs.total_size


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (11, 4, True), (12, 4, False), (2, 3, False)])
def test_shuffled_partition_structure(n, replicas, drop_last):
    def shares(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = DistributedSampler(list(range(n)), replicas, rank, shuffle=True, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    epoch0 = shares(0)
    t = TorchSampler(list(range(n)), replicas, 0, shuffle=True, drop_last=drop_last)
    assert [len(s) for s in epoch0] == [len(t)] * replicas
    flat = [i for s in epoch0 for i in s]
    if drop_last:  # disjoint: no index twice
        assert len(set(flat)) == len(flat) == t.total_size
    else:  # covers the dataset; only the padding repeats
        assert set(flat) == set(range(n))
        assert len(flat) - len(set(flat)) == t.total_size - n
    assert shares(0) == epoch0, "same epoch and seed must give the same shares"
    if n > 3:
        assert shares(1) != epoch0, "a new epoch must reshuffle"
        assert shares(0, seed=5) != epoch0, "the seed must matter"
    # every rank derives its share from one permutation: interleaving the shares rebuilds it
    perm = [epoch0[i % replicas][i // replicas] for i in range(t.total_size)]
    if drop_last:
        assert len(set(perm)) == len(perm)
    else:
        assert sorted(perm[:n]) == list(range(n)) and perm[n:] == perm[:t.total_size - n]


def test_invalid_rank_and_defaults():
    for bad in (-1, 3, 7):
        with pytest.raises(ValueError, match=r"Invalid rank .* \[0, 2\]"):
            DistributedSampler(range(10), num_replicas=3, rank=bad)
    with pytest.raises(ValueError, match="not been initialized"):
        DistributedSampler(range(10))  # no process group: no default world size
    s = DistributedSampler(range(10), num_replicas=2, rank=1)
    assert (s.shuffle, s.seed, s.drop_last, s.epoch) == (True, 0, False, 0)


def test_with_dataloader():
    data = TensorDataset(ember.arange(10).float())
    sampler = DistributedSampler(data, num_replicas=2, rank=1, shuffle=False)
    batches = [b[0].tolist() for b in DataLoader(data, batch_size=2, sampler=sampler)]
    assert batches == [[1.0, 3.0], [5.0, 7.0], [9.0]]
    expected = list(TorchSampler(range(10), num_replicas=2, rank=1, shuffle=False))
    assert [int(i) for b in batches for i in b] == expected
    assert torch.equal(torch.tensor(expected), torch.tensor([1, 3, 5, 7, 9]))


def test_what_is_not_given_comes_from_the_process_group():
    # as PyTorch's: num_replicas and rank default to the process group's, each on its own
    import socket

    import ember.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environ = dict(os.environ)  # init_process_group exports RANK/WORLD_SIZE, as a launcher would: not for later tests
    dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
    try:
        given_replicas = DistributedSampler(range(10), num_replicas=3)
        given_rank = DistributedSampler(range(10), num_replicas=3, rank=2)
        only_rank = DistributedSampler(range(10), rank=0)
    finally:
        dist.destroy_process_group()
        os.environ.clear()
        os.environ.update(environ)
    assert (given_replicas.num_replicas, given_replicas.rank) == (3, 0)
    assert (given_rank.num_replicas, given_rank.rank) == (3, 2)
    assert (only_rank.num_replicas, only_rank.rank) == (1, 0)
