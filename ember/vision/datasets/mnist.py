"""MNIST, FashionMNIST and KMNIST from the IDX files in ``<root>/<ClassName>/raw/`` (torchvision's layout).

The four files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and
``t10k-labels-idx1-ubyte`` are read as they are or gzip-compressed (``.gz``, as downloaded). ``data`` is a uint8
tensor (N, 28, 28), ``targets`` an int64 tensor; an item is ``(PIL image in mode 'L', int label)``.
"""

from __future__ import annotations

import gzip
import os
import warnings
from collections.abc import Callable

import numpy as np

import ember

from ..transforms._functional_pil import pil
from .vision import VisionDataset, download_url

# IDX type codes (the third byte of the magic number) -> big-endian NumPy dtypes.
_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"), 13: np.dtype(">f4"),
              14: np.dtype(">f8")}


def read_idx(path: str) -> np.ndarray:
    """An IDX file (LeCun's format: magic, big-endian dims, data) as an ndarray; ``path`` or ``path + '.gz'``."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = bytearray(f.read())  # writable memory: the tensors over it are writable, as torchvision's
    magic = int.from_bytes(data[0:4], "big")
    ndim, code = magic % 256, magic // 256
    if code not in _IDX_TYPES or data[0:2] != b"\x00\x00":
        raise ValueError(f"{path} is not an IDX file (magic number {magic:#010x})")
    dims = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(ndim)]
    dtype = np.dtype(_IDX_TYPES[code])
    arr = np.frombuffer(data, dtype=dtype, offset=4 * (ndim + 1))
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"{path}: header says {dims} but holds {arr.size} values")
    return arr.astype(dtype.newbyteorder("="), copy=False).reshape(dims)


class MNIST(VisionDataset):
    """The MNIST handwritten digits (``train=True``: 60000 images, else the 10000 test images)."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz"]
    training_file, test_file = "training.pt", "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        self._require_files(download, self.raw_folder, self._files())
        images, labels = (self._find(name) for name in self._files())
        self.data = ember.from_numpy(np.ascontiguousarray(read_idx(images), dtype=np.uint8))
        self.targets = ember.from_numpy(read_idx(labels).astype(np.int64))

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.classes)}

    def _files(self) -> list[str]:
        prefix = "train" if self.train else "t10k"
        return [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]

    def _find(self, name: str) -> str | None:
        for candidate in (name, name + ".gz"):
            path = os.path.join(self.raw_folder, candidate)
            if os.path.isfile(path):
                return path
        return None

    def _check_exists(self) -> bool:
        return all(self._find(name) is not None for name in self._files())

    def download(self) -> None:
        """Fetch the compressed IDX files into ``raw_folder`` (they are read compressed)."""
        for filename in self.resources:
            if self._find(filename.removesuffix(".gz")) is None:
                download_url([mirror + filename for mirror in self.mirrors], self.raw_folder, filename)

    # torchvision's old names for data and targets, kept (with its warning) for scripts written against them.
    @property
    def train_labels(self) -> ember.Tensor:
        warnings.warn("train_labels has been renamed targets", stacklevel=2)
        return self.targets

    @property
    def test_labels(self) -> ember.Tensor:
        warnings.warn("test_labels has been renamed targets", stacklevel=2)
        return self.targets

    @property
    def train_data(self) -> ember.Tensor:
        warnings.warn("train_data has been renamed data", stacklevel=2)
        return self.data

    @property
    def test_data(self) -> ember.Tensor:
        warnings.warn("test_data has been renamed data", stacklevel=2)
        return self.data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        img = pil().fromarray(self.data[index].numpy(), mode="L")
        return self._apply(img, int(self.targets[index]))

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's file layout under ``<root>/FashionMNIST/raw``."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: MNIST's file layout under ``<root>/KMNIST/raw``."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
