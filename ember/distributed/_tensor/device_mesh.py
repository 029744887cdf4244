"""``torch.distributed._tensor.device_mesh``: the earlier home of ``init_device_mesh`` and ``DeviceMesh``."""

from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["init_device_mesh", "DeviceMesh"]
