"""``ember.distributed.distributed_c10d``: the module PyTorch defines the process-group API in.

Library code reaches ``torch.distributed``'s names through it (``dist.distributed_c10d.GroupMember.WORLD`` as a
default argument, ``distributed_c10d._get_default_group()``), so it is there as an attribute of
``ember.distributed`` as soon as that is imported, as in PyTorch. Its public names are the very objects
``ember.distributed`` exports, read from the package on first use: ``GroupMember.WORLD`` is the default group once
``init_process_group`` has run (None before), as ``group.WORLD`` is.
"""

import sys

from .._missing import module_getattr as _module_getattr
from .process_group import ProcessGroup, group, is_initialized

# ember.distributed's own additions, which PyTorch's module does not have
_EMBER_ONLY = frozenset({"default_group", "set_collective_checks", "collective_checks_enabled", "is_available",
                         "DeviceMesh", "init_device_mesh"})


def _get_default_group() -> ProcessGroup:
    """The default (world) group that ``init_process_group`` created; PyTorch's ValueError before it has run."""
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return group.WORLD


_missing_name = _module_getattr(__name__)


def __getattr__(name: str):
    """The package's process-group names (``init_process_group``, ``all_reduce``, ``Backend`` ...), the same
    objects; a name PyTorch has and ember lacks says so."""
    package = sys.modules[__name__.rpartition(".")[0]]
    if name in package.__all__ and name not in _EMBER_ONLY:
        return getattr(package, name)
    return _missing_name(name)
