"""``torch.distributed.tensor._utils``: where a rank's shard of a DTensor sits in the global tensor.

Libraries that load or save sharded checkpoints (Hugging Face transformers) import
``compute_local_shape_and_global_offset`` from here, as they do from PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..device_mesh import DeviceMesh
from ._redistribute import local_shape_and_offset
from .placement_types import Placement, Shard


def compute_local_shape_and_global_offset(global_shape: Sequence[int], mesh: DeviceMesh,
                                          placements: Sequence[Placement]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's local shape and the global index of its first element, for a tensor of ``global_shape``
    laid out by ``placements`` (one per mesh dimension) on ``mesh``.

    Shards follow ``torch.chunk``; mesh dimensions that shard the same tensor dimension nest, the later one
    splitting the earlier one's chunk, as in PyTorch. A rank outside the mesh gets ``((0,), ())``, PyTorch's
    answer.
    """
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    for placement in placements:
        if isinstance(placement, Shard) and not -len(global_shape) <= placement.dim < len(global_shape):
            raise IndexError(f"Shard(dim={placement.dim}) is out of range for a tensor with {len(global_shape)} "
                             "dimension(s)")
    return local_shape_and_offset(global_shape, mesh, placements, coordinate)
