"""``ember.utils.data``: datasets, samplers and the DataLoader, with PyTorch's API.

``ember.utils.data.distributed`` (``DistributedSampler``) lives in its own module.
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
    "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "random_split",
]


def __getattr__(name: str):
    # DistributedSampler is re-exported here by PyTorch; load its module only when asked for.
    if name == "DistributedSampler":
        from .distributed import DistributedSampler

        return DistributedSampler
    raise AttributeError(
        f"module 'ember.utils.data' has no attribute '{name}': torch.utils.data.{name} is not implemented in ember"
    )
