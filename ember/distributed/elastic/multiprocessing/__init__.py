"""``ember.distributed.elastic.multiprocessing``: ``errors.record`` (PyTorch's ``torch.distributed.elastic.
multiprocessing``)."""

from ...._missing import module_getattr as _module_getattr
from . import errors  # noqa: F401 (an attribute after import, as PyTorch's)

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
