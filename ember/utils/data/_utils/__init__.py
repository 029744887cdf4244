"""``ember.utils.data._utils``: where PyTorch keeps its data loader's helpers; programs import its collate
functions from here (``from torch.utils.data._utils.collate import default_collate``)."""

from ...._missing import module_getattr
from . import collate  # noqa: F401  (an attribute of the package on import, as in PyTorch)

__getattr__ = module_getattr(__name__)
