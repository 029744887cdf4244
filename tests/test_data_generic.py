"""``torch.utils.data``'s classes are generic as PyTorch's: library code subscripts them in its class statements
(timm's ``class ScheduledBatchSampler(Sampler[List[Tuple[Any, int]]])``, ``Dataset[Tensor]`` annotations)."""

import pickle

import pytest
import torch.utils.data as torch_data
import torch.utils.data.distributed as torch_distributed

import ember
import ember.utils.data as ember_data
import ember.utils.data.distributed as ember_distributed

NAMES = ["Dataset", "IterableDataset", "Sampler", "BatchSampler", "SequentialSampler", "RandomSampler",
         "SubsetRandomSampler", "WeightedRandomSampler", "DataLoader", "TensorDataset", "Subset", "ConcatDataset",
         "ChainDataset", "StackDataset"]


def subscripts(cls) -> bool:
    try:
        cls[int]
    except TypeError:  # a class fixed to one item type (Sampler[int]) is no longer generic, as in PyTorch
        return False
    return True


@pytest.mark.parametrize("name", NAMES)
def test_subscriptable_as_pytorchs(name):
    assert subscripts(getattr(ember_data, name)) == subscripts(getattr(torch_data, name))


def test_distributed_sampler_is_generic():
    assert subscripts(ember_distributed.DistributedSampler) == subscripts(torch_distributed.DistributedSampler)


class Pairs(ember_data.Dataset[tuple]):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return ember.tensor([float(i)]), i


class Batches(ember_data.Sampler[list[tuple[int, int]]]):  # as timm's scheduled batch sampler subclasses it
    def __iter__(self):
        yield [0, 1]
        yield [2, 3, 4]

    def __len__(self):
        return 2


def test_subclasses_of_subscripted_classes_load_and_pickle():
    loader = ember_data.DataLoader(Pairs(), batch_sampler=Batches())
    assert [b[1].tolist() for b in loader] == [[0, 1], [2, 3, 4]]
    assert isinstance(Pairs(), ember_data.Dataset) and len(pickle.loads(pickle.dumps(Pairs()))) == 5
