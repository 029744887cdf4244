"""``ember.nn``: Module, Parameter, layers, losses, and the ``functional``, ``init`` and ``utils`` submodules.

Mirrors ``torch.nn``: ``import ember.nn as nn; nn.Linear(3, 2)``,
``import ember.nn.functional as F``. ``ember.nn.parallel`` loads on first use.
"""

from __future__ import annotations

from .._missing import module_getattr
from . import functional, init, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Parameter", "functional", "init", "utils", *_modules_all]

_module_getattr = module_getattr(__name__)


def __getattr__(name: str):
    # nn.parallel (and DataParallel, which PyTorch re-exports here) load on first use; a missing name says torch.nn.X
    if name == "DataParallel":
        from .parallel.data_parallel import DataParallel

        return DataParallel
    return _module_getattr(name)
