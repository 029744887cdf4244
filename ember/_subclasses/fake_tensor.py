"""``torch._subclasses.fake_tensor``: PyTorch's fake tensors (shapes without data, made by ``FakeTensorMode`` while
``torch.compile`` and ``torch.export`` trace) do not exist in ember, which traces nothing; ``is_fake`` answers as
PyTorch's does for every other tensor. kornia asks it before taking a data-dependent path."""

from __future__ import annotations

from typing import Any

from .._missing import module_getattr


def is_fake(x: Any) -> bool:
    """Whether ``x`` is a fake tensor (or wraps one): never in ember, which makes none (meta tensors are not fake,
    as in PyTorch)."""
    return False


__getattr__ = module_getattr(__name__)
