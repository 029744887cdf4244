"""``ember.distributed.elastic``: the part of PyTorch's ``torch.distributed.elastic`` that training scripts import
themselves (``multiprocessing.errors.record``). Starting, supervising and restarting ranks is ember's launcher's
job (``ember/distributed/run.py``), not this package's."""

from ..._missing import module_getattr as _module_getattr
from . import multiprocessing  # noqa: F401 (an attribute after import, as PyTorch's)

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
