"""``ember.utils``: data loading (``ember.utils.data``) and hook handles.

``data`` loads on first use, so ``import ember`` stays fast while
``torch.utils.data.DataLoader`` (no explicit import of the submodule) still works.
"""

from __future__ import annotations

from .._missing import module_getattr

__getattr__ = module_getattr(__name__)
