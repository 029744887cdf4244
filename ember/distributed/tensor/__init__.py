"""``torch.distributed.tensor``: DTensor, a tensor spread over a DeviceMesh, on ember's MPI process groups.

    mesh = init_device_mesh("cpu", (2,))
    w = distribute_tensor(weight, mesh, [Shard(0)])     # each rank keeps half of the rows
    y = (x_dt @ w.t()).full_tensor()                     # sharding rules pick the collectives

What is supported, and what raises: docs/api.md ("DeviceMesh, DTensor and tensor parallel").
"""

from ..device_mesh import init_device_mesh  # noqa: F401  (PyTorch's path to it too)
from . import _methods
from ._api import DTensor, distribute_tensor
from ._factories import empty, full, ones, rand, randn, zeros
from .placement_types import Partial, Placement, Replicate, Shard

_methods.install()

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_tensor", "empty", "full", "ones",
           "rand", "randn", "zeros"]

from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
