"""ember.distributed.algorithms: Join for uneven inputs."""

from .join import Join

__all__ = ["Join"]
