"""``ember.utils.data._utils.collate``: PyTorch's module of ``default_collate`` and ``default_convert``, which
programs import from here; they are ``ember.utils.data``'s (``ember/utils/data/collate.py``)."""

from ...._missing import module_getattr
from ..collate import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]

__getattr__ = module_getattr(__name__)
