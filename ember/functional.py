"""``ember.functional``: PyTorch's ``torch.functional``, the module in which PyTorch writes some of its top-level
functions in Python (``torch.functional.einsum`` is ``torch.einsum``). Programs import it by that name (``import
torch.functional as F``); each of its names here is ember's top-level function of the same name, looked up when it
is asked for, and one that ember lacks is reported as missing under its ``torch`` name.
"""

from __future__ import annotations

import sys
from typing import Any

from ._missing import module_getattr

# torch.functional.__all__ in PyTorch 2.13, in its order: the functions PyTorch defines there (and imports into torch).
TORCH_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
               "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank",
               "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index")

_missing = module_getattr(__name__)


def __getattr__(name: str) -> Any:
    # (ember is imported by then: this module is reached through it)
    ember = sys.modules["ember"]
    if name in TORCH_NAMES:
        return getattr(ember, name)  # a name ember lacks raises there, under its torch name
    if name == "__all__":  # what ``from torch.functional import *`` binds: those of the names ember has
        return [n for n in TORCH_NAMES if hasattr(ember, n)]
    return _missing(name)
