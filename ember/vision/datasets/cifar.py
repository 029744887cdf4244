"""CIFAR10 / CIFAR100 from the python-pickled batches (``<root>/cifar-10-batches-py/``, ``cifar-100-python/``).

The batches are read with a restricted unpickler that builds only dicts, lists, strings, bytes, numbers and
NumPy arrays: a pickle naming any other global (a function to call, a class to build) is refused, so a
tampered file cannot run code. ``data`` is a uint8 ndarray (N, 32, 32, 3), ``targets`` a list of ints; an item
is ``(PIL image in mode 'RGB', int label)``.
"""

from __future__ import annotations

import os
import pickle
import tarfile
from collections.abc import Callable

import numpy as np

from ..transforms._functional_pil import pil
from .vision import VisionDataset, download_url

# The only globals a CIFAR pickle needs: how NumPy pickles an ndarray (old and new module paths).
_ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
            ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.numeric", "_frombuffer"),
            ("numpy._core.numeric", "_frombuffer"), ("numpy.core.multiarray", "scalar"),
            ("numpy._core.multiarray", "scalar")}


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"CIFAR batch refers to {module}.{name}; only NumPy arrays, dicts, lists, "
                                         "strings and numbers are read from dataset pickles")
        return super().find_class(module, name)


def load_batch(path: str) -> dict:
    """One pickled CIFAR batch (keys decoded as latin-1 strings, as torchvision loads them)."""
    with open(path, "rb") as f:
        return _ArrayUnpickler(f, encoding="latin1").load()


class CIFAR10(VisionDataset):
    """CIFAR-10: 50000 training / 10000 test 32x32 colour images in 10 classes."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    _not_found = "Dataset not found or corrupted."  # torchvision's words (ember does not check the files' MD5)

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        self._require_files(download, os.path.join(self.root, self.base_folder), self._files())
        data, self.targets = [], []
        for name in self.train_list if train else self.test_list:
            entry = load_batch(os.path.join(self.root, self.base_folder, name))
            data.append(np.asarray(entry["data"], dtype=np.uint8))
            self.targets.extend(int(t) for t in entry["labels" if "labels" in entry else "fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        meta = load_batch(os.path.join(self.root, self.base_folder, self.meta["filename"]))
        self.classes = list(meta[self.meta["key"]])
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    def _files(self) -> list[str]:
        return [*(self.train_list if self.train else self.test_list), self.meta["filename"]]

    def _check_exists(self) -> bool:
        return all(os.path.isfile(os.path.join(self.root, self.base_folder, name)) for name in self._files())

    def download(self) -> None:
        """Fetch and extract the archive into ``root``."""
        archive = download_url([self.url], self.root, self.filename)
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(self.root, filter="data")

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        return self._apply(pil().fromarray(self.data[index]), self.targets[index])

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: as CIFAR10 with 100 fine classes (``fine_labels``)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
