"""Samplers, datasets and random_split, against torch.utils.data.

Random orders cannot match PyTorch's (a different generator): those tests check
reproducibility, bounds and permutation properties; deterministic behaviour,
lengths and errors are compared with torch directly.
"""

import warnings
from collections import Counter

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from oracle import assert_close

import ember
import ember.utils.data as edata


def raises_like_torch(make, exc=Exception):
    """``make(m)`` raises for torch and for ember, with the same exception type."""
    with pytest.raises(exc) as et:
        make(torch)
    with pytest.raises(type(et.value)) as ee:
        make(ember)
    return str(ee.value), str(et.value)


@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                    (2, 5, True), (0, 2, False)])
def test_sequential_and_batch_samplers_match_torch(n, batch_size, drop_last):
    data = list(range(n))
    e = edata.BatchSampler(edata.SequentialSampler(data), batch_size, drop_last)
    t = tdata.BatchSampler(tdata.SequentialSampler(data), batch_size, drop_last)
    assert list(e) == list(t) and len(e) == len(t)
    assert list(edata.SequentialSampler(data)) == list(tdata.SequentialSampler(data))


@pytest.mark.parametrize("args", [(0, False), (-1, False), (2.0, False), (True, False), (2, 1), (2, None)])
def test_batch_sampler_errors_match_torch(args):
    msgs = raises_like_torch(lambda m: m.utils.data.BatchSampler(range(4), *args), ValueError)
    assert msgs[0] == msgs[1]


def test_random_sampler_is_a_reproducible_permutation():
    g1, g2 = ember.Generator().manual_seed(0), ember.Generator().manual_seed(0)
    a, b = edata.RandomSampler(range(20), generator=g1), edata.RandomSampler(range(20), generator=g2)
    epochs_a, epochs_b = [list(a) for _ in range(3)], [list(b) for _ in range(3)]
    assert epochs_a == epochs_b and len(a) == 20
    assert all(sorted(e) == list(range(20)) for e in epochs_a)
    assert epochs_a[0] != epochs_a[1]
    ember.manual_seed(4)
    first = list(edata.RandomSampler(range(20)))
    ember.manual_seed(4)
    assert list(edata.RandomSampler(range(20))) == first


def test_random_sampler_num_samples_and_replacement():
    s = edata.RandomSampler(range(7), num_samples=17)
    order = list(s)
    assert len(order) == len(s) == 17 == len(tdata.RandomSampler(range(7), num_samples=17))
    assert sorted(order[:7]) == sorted(order[7:14]) == list(range(7))  # whole permutations first
    assert len(set(order[14:])) == 3
    r = edata.RandomSampler(range(5), replacement=True, num_samples=400)
    drawn = list(r)
    assert len(drawn) == 400 and set(drawn) == set(range(5))  # repeats, all values in range


@pytest.mark.parametrize("kwargs", [dict(num_samples=0), dict(num_samples=-3), dict(num_samples=2.5),
                                    dict(replacement=1)])
def test_random_sampler_errors_match_torch(kwargs):
    msgs = raises_like_torch(lambda m: m.utils.data.RandomSampler(range(4), **kwargs))
    assert msgs[0] == msgs[1]


def test_subset_random_sampler():
    idx = [3, 9, 4, 11]
    s = edata.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(1))
    epochs = [list(s) for _ in range(4)]
    assert all(sorted(e) == sorted(idx) for e in epochs) and len(s) == 4
    assert len({tuple(e) for e in epochs}) > 1
    again = edata.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(1))
    assert [list(again) for _ in range(4)] == epochs


def test_weighted_random_sampler():
    w = [0.0, 1.0, 3.0, 0.0, 6.0]
    s = edata.WeightedRandomSampler(w, 20000, generator=ember.Generator().manual_seed(0))
    counts = Counter(s)
    assert len(s) == 20000 and set(counts) == {1, 2, 4}
    np.testing.assert_allclose([counts[1] / 20000, counts[2] / 20000, counts[4] / 20000], [0.1, 0.3, 0.6], atol=0.02)
    no_rep = list(edata.WeightedRandomSampler(ember.tensor(w), 3, replacement=False))
    assert sorted(no_rep) == [1, 2, 4]
    # past the non-zero weights, zero-weight indices follow (as torch.multinomial does)
    assert sorted(edata.WeightedRandomSampler(w, 5, replacement=False)) == [0, 1, 2, 3, 4]
    assert set(list(edata.WeightedRandomSampler(w, 5, replacement=False))[:3]) == {1, 2, 4}
    # heavier weights tend to come first
    firsts = Counter(list(edata.WeightedRandomSampler(w, 2, replacement=False))[0] for _ in range(3000))
    assert firsts[4] > firsts[2] > firsts[1]


@pytest.mark.parametrize("args,kwargs", [
    (([1.0, 2.0], 0), {}),
    (([1.0, 2.0], 2), dict(replacement=0)),
    (([[1.0, 2.0]], 2), {}),
])
def test_weighted_random_sampler_argument_errors_match_torch(args, kwargs):
    msgs = raises_like_torch(lambda m: m.utils.data.WeightedRandomSampler(*args, **kwargs), ValueError)
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("weights,n,replacement", [
    ([1.0, -1.0], 2, True), ([1.0, 0.0, 0.0], 4, False), ([0.0, 0.0], 1, True),
    # each check on its own: a negative weight with a positive sum, a non-finite weight and no negative one
    *[(w, 2, r) for w in ([1.0, -1.0, 2.0], [1.0, float("inf")], [1.0, float("nan")], [-1.0, -2.0])
      for r in (True, False)]])
def test_weighted_random_sampler_invalid_distributions(weights, n, replacement):
    raises_like_torch(lambda m: list(m.utils.data.WeightedRandomSampler(weights, n, replacement=replacement)),
                      RuntimeError)


def test_tensor_dataset_matches_torch():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    e = edata.TensorDataset(ember.tensor(x), ember.tensor([1, 2, 3, 4]))
    t = tdata.TensorDataset(torch.tensor(x), torch.tensor([1, 2, 3, 4]))
    assert len(e) == len(t) == 4
    for i in (0, 3, -1, slice(1, 3), [2, 0]):
        for a, b in zip(e[i], t[i]):
            assert_close(a, b)


def test_tensor_dataset_size_mismatch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors.*3, 4"):
        edata.TensorDataset(ember.zeros(3), ember.zeros(4))
    with pytest.raises(ValueError):
        edata.TensorDataset(ember.zeros(3), ember.zeros(4))
    with pytest.raises(TypeError, match="argument 1 is list"):
        edata.TensorDataset(ember.zeros(3), [1, 2, 3])


def test_subset_and_concat_match_torch():
    base = list(range(10, 20))
    for m in (torch, ember):
        sub = m.utils.data.Subset(base, [4, 0, 7])
        assert len(sub) == 3 and [sub[i] for i in range(3)] == [14, 10, 17]
    # a list of indices goes to the dataset in one call, as in PyTorch
    assert edata.Subset(ember.arange(10), [4, 0, 7])[[0, 2]].tolist() == [4, 7]
    e = edata.ConcatDataset([[1, 2, 3], [4], [5, 6]])
    t = tdata.ConcatDataset([[1, 2, 3], [4], [5, 6]])
    assert len(e) == len(t) == 6 and e.cumulative_sizes == t.cumulative_sizes
    assert [e[i] for i in range(-6, 6)] == [t[i] for i in range(-6, 6)]
    raises_like_torch(lambda m: m.utils.data.ConcatDataset([[1, 2], [3]])[-4], ValueError)
    raises_like_torch(lambda m: m.utils.data.ConcatDataset([]), AssertionError)


def test_dataset_addition_concatenates_or_chains():
    class Map(edata.Dataset):
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    class Stream(edata.IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    both = Map([1, 2]) + Map([3])
    assert isinstance(both, edata.ConcatDataset) and [both[i] for i in range(3)] == [1, 2, 3]
    chain = Stream([1, 2]) + Stream([3])
    assert isinstance(chain, edata.ChainDataset) and list(chain) == [1, 2, 3] and len(chain) == 3
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        edata.ConcatDataset([Map([1]), Stream([2])])
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(edata.ChainDataset([Stream([1]), Map([2])]))
    with pytest.raises(NotImplementedError):
        edata.Dataset()[0]


@pytest.mark.parametrize("n,fractions", [(10, [0.5, 0.5]), (10, [0.3, 0.3, 0.4]), (11, [0.33, 0.33, 0.34]),
                                         (7, [0.1, 0.9]), (5, [1.0]), (3, [0.25, 0.25, 0.25, 0.25])])
def test_random_split_fraction_lengths_match_torch(n, fractions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = edata.random_split(range(n), fractions)
        t = tdata.random_split(range(n), fractions)
    assert [len(s) for s in e] == [len(s) for s in t]
    assert sorted(i for s in e for i in s.indices) == list(range(n))


def test_random_split_is_reproducible_and_disjoint():
    parts = [edata.random_split(range(20), [5, 15], generator=ember.Generator().manual_seed(2)) for _ in range(2)]
    assert [p.indices for p in parts[0]] == [p.indices for p in parts[1]]
    a, b = parts[0]
    assert sorted(a.indices + b.indices) == list(range(20)) and (len(a), len(b)) == (5, 15)
    assert [a[i] for i in range(5)] == a.indices  # the Subset reads through to range(20)
    ember.manual_seed(9)
    first = [s.indices for s in edata.random_split(range(20), [0.5, 0.5])]
    ember.manual_seed(9)
    assert [s.indices for s in edata.random_split(range(20), [0.5, 0.5])] == first


def test_random_split_errors_and_warnings_match_torch():
    msgs = raises_like_torch(lambda m: m.utils.data.random_split(range(10), [3, 3]), ValueError)
    assert msgs[1] in msgs[0]
    msgs = raises_like_torch(lambda m: m.utils.data.random_split(range(10), [1.5, -0.5]), ValueError)
    assert msgs[0] == msgs[1]
    with pytest.warns(UserWarning) as record:
        edata.random_split(range(2), [0.9, 0.05, 0.05])
    assert [str(w.message)[:31] for w in record] == ["Length of split at index 1 is 0", "Length of split at index 2 is 0"]


def test_random_sampler_with_replacement_draws_in_chunks_not_all_at_once():
    """RandomSampler(replacement=True, num_samples=int(1e10)) once allocated 74.5 GiB before the first index.

    Run in a child whose address space is capped, so a regression fails with MemoryError instead of
    exhausting the machine; tracemalloc bounds what the first 100000 indices cost.
    """
    import os
    import subprocess
    import sys

    from conftest import ROOT

    code = """if True:
        import itertools, resource, tracemalloc
        import ember.utils.data as edata
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))
        sampler = edata.RandomSampler(range(10), replacement=True, num_samples=int(1e10))
        tracemalloc.start()
        first = list(itertools.islice(iter(sampler), 100_000))
        peak = tracemalloc.get_traced_memory()[1]
        assert len(sampler) == 10**10 and len(first) == 100_000 and set(first) == set(range(10))
        assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB for the first 100000 indices"
        print("ok")
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    assert len(tdata.RandomSampler(range(10), replacement=True, num_samples=int(1e10))) == 10**10


def test_random_sampler_chunks_do_not_change_the_order():
    g = ember.Generator().manual_seed(3)
    drawn = list(edata.RandomSampler(range(7), replacement=True, num_samples=200_001, generator=g))
    expected = ember.Generator().manual_seed(3)  # the same stream drawn in one piece
    assert drawn == ember.randint(0, 7, (200_001,), generator=expected).tolist()
    assert drawn == list(tdata.RandomSampler(range(7), replacement=True, num_samples=200_001,
                                             generator=torch.Generator().manual_seed(3)))  # PyTorch's order


def _sampler_given_data_source(m):
    return m.utils.data.Sampler(range(4))


def _sampler_given_data_source_by_keyword(m):
    return m.utils.data.Sampler(data_source=range(4))


def _subclass_passing_data_source(m):
    """The older idiom (few-shot episode samplers): ``super().__init__(dataset)``, refused since PyTorch 2.2."""
    class Episodes(m.utils.data.Sampler):
        def __init__(self, dataset):
            super().__init__(dataset)
            self.dataset = dataset

        def __iter__(self):
            return iter([[0, 1]])

    return Episodes(range(4))


@pytest.mark.parametrize("make", [_sampler_given_data_source, _sampler_given_data_source_by_keyword,
                                  _subclass_passing_data_source])
def test_sampler_base_takes_no_data_source_as_torch(make):
    ours, theirs = raises_like_torch(make, TypeError)
    assert ours == theirs


def test_sampler_base_without_arguments_as_torch():
    class Episodes(edata.Sampler):
        def __init__(self, dataset):
            super().__init__()
            self.dataset = dataset

        def __iter__(self):
            return iter([[0, 1], [2, 3]])

    loader = edata.DataLoader(list(range(4)), batch_sampler=Episodes(range(4)))
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3]]
    assert type(edata.Sampler()) is edata.Sampler and type(tdata.Sampler()) is tdata.Sampler
