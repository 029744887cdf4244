"""``torch.distributed._tensor``: PyTorch's earlier name of ``torch.distributed.tensor``, which programs written
for PyTorch 2.1–2.3 still import; the same objects as :mod:`ember.distributed.tensor`."""

from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor import (
                      DTensor,
                      Partial,
                      Placement,
                      Replicate,
                      Shard,
                      distribute_tensor,
                      empty,
                      full,
                      ones,
                      rand,
                      randn,
                      zeros,
)

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard", "distribute_tensor", "empty", "full",
           "init_device_mesh", "ones", "rand", "randn", "zeros"]
