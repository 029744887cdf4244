"""Dataset files in torchvision's on-disk formats, written by the tests (no downloads here)."""

import gzip
import struct

import numpy as np


def write_idx(path, arr, compress=False):
    code = {np.uint8: 8}[arr.dtype.type]
    header = struct.pack(">I", code << 8 | arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(header + arr.tobytes())


def make_mnist(root, name="MNIST", n=7, compress=False, split="train"):
    raw = root / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    suffix = ".gz" if compress else ""
    prefix = "train" if split == "train" else "t10k"
    write_idx(raw / f"{prefix}-images-idx3-ubyte{suffix}", images, compress)
    write_idx(raw / f"{prefix}-labels-idx1-ubyte{suffix}", labels, compress)
    return images, labels
