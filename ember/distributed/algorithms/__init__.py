"""ember.distributed.algorithms: Join for uneven inputs."""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
