"""``ember.utils``: data loading (``ember.utils.data``) and hook handles.

``data`` loads on first use, so ``import ember`` stays fast while
``torch.utils.data.DataLoader`` (no explicit import of the submodule) still works.
"""

from __future__ import annotations

import importlib

_SUBMODULES = {"data", "hooks"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(
        f"module 'ember.utils' has no attribute '{name}': torch.utils.{name} is not implemented in ember"
    )
