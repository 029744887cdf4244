"""``VisionDataset``: the base of the datasets (root, transforms) and the download / not-found handling."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Callable
from typing import Any

from ...utils.data import Dataset


class VisionDataset(Dataset):
    """A dataset under ``root`` whose items go through ``transform`` (image) and ``target_transform`` (label)."""

    _repr_indent = 4

    def __init__(self, root: str | os.PathLike | None = None, transforms: Callable | None = None,
                 transform: Callable | None = None, target_transform: Callable | None = None) -> None:
        self.root = os.path.expanduser(os.fspath(root)) if root is not None else None
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        self.transforms = transforms

    def _apply(self, img: Any, target: Any) -> tuple[Any, Any]:
        if self.transforms is not None:
            return self.transforms(img, target)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    # how torchvision's dataset says its files are missing (CIFAR's, which checks their MD5 sums: "or corrupted")
    _not_found = "Dataset not found."

    def _require_files(self, download: bool, folder: str, files: list[str]) -> None:
        """Download when asked and the files are missing (``_check_exists`` / ``download`` of the subclass);
        still missing: torchvision's "Dataset not found" naming ``files`` in ``folder``."""
        if download and not self._check_exists():
            self.download()
        if not self._check_exists():
            raise not_found(folder, files, self._not_found)

    def __len__(self) -> int:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += [line for line in self.extra_repr().splitlines() if line]
        if self.transform is not None:
            lines.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"Target transform: {self.target_transform!r}")
        return "\n".join([f"Dataset {type(self).__name__}"] + [" " * self._repr_indent + line for line in lines])


def not_found(folder: str, files: list[str], words: str = "Dataset not found.") -> RuntimeError:
    """torchvision's "Dataset not found" error (its ``words``), naming the files looked for and where."""
    return RuntimeError(f"{words} You can use download=True to download it "
                        f"(expected {', '.join(files)} in {folder})")


def download_url(urls: list[str], folder: str, filename: str, timeout: float = 30.0) -> str:
    """Fetch ``filename`` from the first of ``urls`` that answers into ``folder``; RuntimeError if none does."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, filename)
    errors = []
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, open(path + ".part", "wb") as out:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
            os.replace(path + ".part", path)
            return path
        except OSError as e:  # URLError, timeouts and refused connections are OSErrors
            errors.append(f"{url}: {e}")
    if os.path.exists(path + ".part"):
        os.remove(path + ".part")
    raise RuntimeError(f"Error downloading {filename} into {folder}:\n" + "\n".join(errors))
