"""``ember.utils.data``: datasets, samplers and the DataLoader, with PyTorch's API.

``ember.utils.data.distributed`` (``DistributedSampler``) lives in its own module.
"""

from ..._missing import module_getattr
from . import _utils  # noqa: F401  (torch.utils.data._utils.collate is reachable after import torch)
from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
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
    "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
    "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info", "random_split",
]

_module_getattr = module_getattr(__name__)


def __getattr__(name: str):
    # DistributedSampler is re-exported here by PyTorch; load its module only when asked for.
    if name == "DistributedSampler":
        from .distributed import DistributedSampler

        return DistributedSampler
    return _module_getattr(name)
