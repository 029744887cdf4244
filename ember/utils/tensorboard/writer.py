"""``ember.utils.tensorboard.writer``: the module PyTorch defines ``SummaryWriter`` in, which programs import it
from (``from torch.utils.tensorboard.writer import SummaryWriter``); it is ``ember.utils.tensorboard``'s class,
loaded (with its tensorboardX writer) on first use."""

from __future__ import annotations

from ..._missing import module_getattr

_module_getattr = module_getattr(__name__)


def __getattr__(name: str):
    if name == "SummaryWriter":
        from . import SummaryWriter

        return SummaryWriter
    return _module_getattr(name)
