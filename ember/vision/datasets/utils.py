"""torchvision.datasets.utils: the file helpers custom datasets are written with (checksums, download, arguments)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any

from .vision import download_url as _fetch

__all__ = ["calculate_md5", "check_integrity", "check_md5", "download_url", "iterable_to_str", "verify_str_arg"]


def calculate_md5(fpath: str | os.PathLike, chunk_size: int = 1024 * 1024) -> str:
    """The MD5 hex digest of the file at ``fpath``, read in ``chunk_size`` pieces."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath: str | os.PathLike, md5: str, **kwargs: Any) -> bool:
    """Whether the file's MD5 hex digest is ``md5``."""
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: str | os.PathLike, md5: str | None = None) -> bool:
    """False when ``fpath`` is not a file; otherwise True when ``md5`` is None, else whether the digest matches."""
    if not os.path.isfile(fpath):
        return False
    return True if md5 is None else check_md5(fpath, md5)


def download_url(url: str, root: str | os.PathLike, filename: str | os.PathLike | None = None,
                 md5: str | None = None, max_redirect_hops: int = 3) -> None:
    """Download ``url`` into ``root/filename`` (default: the URL's last path part) unless a file with the right
    ``md5`` is there already; RuntimeError ``"File not found or corrupted."`` when the result fails the check.

    Redirects are followed by urllib (``max_redirect_hops`` is accepted for torchvision's signature).
    """
    root = os.path.expanduser(os.fspath(root))
    filename = os.fspath(filename) if filename else os.path.basename(url)
    fpath = os.path.join(root, filename)
    if check_integrity(fpath, md5):
        return
    _fetch([url], root, filename)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def iterable_to_str(iterable: Iterable) -> str:
    """``'a', 'b', 'c'``: the items quoted and comma-separated, as torchvision's messages list valid values."""
    return "'" + "', '".join(str(item) for item in iterable) + "'"


def verify_str_arg(value: Any, arg: str | None = None, valid_values: Iterable | None = None,
                   custom_msg: str | None = None) -> str:
    """``value`` if it is a str (and one of ``valid_values`` when given); ValueError with torchvision's message
    otherwise (``custom_msg`` replaces the not-a-valid-value one)."""
    if not isinstance(value, str):
        where = "" if arg is None else f" for argument {arg}"
        raise ValueError(f"Expected type str{where}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is None:
        custom_msg = (f"Unknown value '{value}' for argument {arg}. Valid values are "
                      f"{{{iterable_to_str(valid_values)}}}.")
    raise ValueError(custom_msg)
