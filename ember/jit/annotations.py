"""``torch.jit.annotations``: the typing names TorchScript-era model code imports from it (timm's and torchvision's
``from torch.jit.annotations import List, Tuple``); they are ``typing``'s, as in PyTorch. Nothing is scripted in
ember, so TorchScript's own type objects are not here."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035 (PyTorch's names for typing's)

from .._missing import module_getattr

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union"]

__getattr__ = module_getattr(__name__)
