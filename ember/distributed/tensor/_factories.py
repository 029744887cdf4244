"""DTensor factories: ``zeros/ones/empty/full/rand/randn(..., device_mesh=, placements=)``.

``zeros``, ``ones``, ``empty`` and ``full`` make each rank's piece directly (every rank's term of a Partial is
filled too, as in PyTorch). ``rand`` and ``randn`` draw the global tensor on the mesh's first rank and give
each rank its piece, so the pieces are parts of one random tensor whatever the ranks' seeds (PyTorch instead
synchronises the ranks' random states and draws each piece locally; the numbers differ from PyTorch's anyway).
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import _creation
from ..._layout import strided
from ..._tensor import Tensor
from ..device_mesh import DeviceMesh, current_mesh
from ._api import DTensor, distribute_tensor
from ._redistribute import Spec, normalize
from .placement_types import Placement, Replicate


def _spec(size, device_mesh, placements, op: str) -> Spec:
    shape = _creation._size(size)
    mesh = device_mesh if device_mesh is not None else current_mesh(op)
    placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
    return Spec(mesh, normalize(placements, len(shape), mesh, op), shape)


def _filled(make, size, requires_grad, device_mesh, placements, op) -> DTensor:
    spec = _spec(size, device_mesh, placements, op)
    out = DTensor._wrap(make(spec.local_shape()), spec)
    return out.requires_grad_(True) if requires_grad else out


def zeros(*size, requires_grad: bool = False, dtype=None, layout=strided, device_mesh: DeviceMesh | None = None,
          placements: Sequence[Placement] | None = None) -> DTensor:
    return _filled(lambda s: _creation.zeros(s, dtype=dtype), size, requires_grad, device_mesh, placements, "zeros")


def ones(*size, requires_grad: bool = False, dtype=None, layout=strided, device_mesh: DeviceMesh | None = None,
         placements: Sequence[Placement] | None = None) -> DTensor:
    return _filled(lambda s: _creation.ones(s, dtype=dtype), size, requires_grad, device_mesh, placements, "ones")


def empty(*size, requires_grad: bool = False, dtype=None, layout=strided, device_mesh: DeviceMesh | None = None,
          placements: Sequence[Placement] | None = None) -> DTensor:
    return _filled(lambda s: _creation.empty(s, dtype=dtype), size, requires_grad, device_mesh, placements, "empty")


def full(size, fill_value, *, dtype=None, layout=strided, requires_grad: bool = False,
         device_mesh: DeviceMesh | None = None, placements: Sequence[Placement] | None = None) -> DTensor:
    return _filled(lambda s: _creation.full(s, fill_value, dtype=dtype), size, requires_grad, device_mesh,
                   placements, "full")


def _random(draw, size, requires_grad, dtype, device_mesh, placements, op) -> DTensor:
    spec = _spec(size, device_mesh, placements, op)
    whole: Tensor = draw(spec.shape, dtype=dtype)
    out = distribute_tensor(whole, spec.mesh, spec.placements, src_data_rank=0)
    return out.requires_grad_(True) if requires_grad else out


def rand(*size, requires_grad: bool = False, dtype=None, layout=strided, device_mesh: DeviceMesh | None = None,
         placements: Sequence[Placement] | None = None) -> DTensor:
    return _random(_creation.rand, size, requires_grad, dtype, device_mesh, placements, "rand")


def randn(*size, requires_grad: bool = False, dtype=None, layout=strided, device_mesh: DeviceMesh | None = None,
          placements: Sequence[Placement] | None = None) -> DTensor:
    return _random(_creation.randn, size, requires_grad, dtype, device_mesh, placements, "randn")
