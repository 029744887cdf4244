"""``torch.distributed.device_mesh``: the ranks of a job laid out as an n-d array, one process group per dimension.

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))   # 4 ranks: [[0, 1], [2, 3]]
    mesh.get_group("tp")      # rank 0: the group {0, 1}; rank 2: {2, 3}
    mesh["dp"]                # the 1-D sub-mesh along "dp" through this rank: [0, 2] on rank 0

Every rank builds the same mesh (SPMD); creating one is collective over the world, since each dimension's
groups are MPI sub-communicators made by ``new_group`` (every rank joins every split). Slicing a sub-mesh
reuses the parent's groups and does not communicate. ember computes on the CPU: ``device_type`` is ``"cpu"``;
``"cuda"`` and the other accelerators raise, as ember does for any other device.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._device import check_device, device
from .._tensor import Tensor
from .process_group import ProcessGroup, default_group, get_rank, init_process_group, is_initialized, new_group

__all__ = ["DeviceMesh", "init_device_mesh"]


def _lines(mesh, dim: int) -> list[list[int]]:
    """The 1-D slices of ``mesh`` (an int array of global ranks) along ``dim``, each a list of ranks."""
    moved = xp.moveaxis(mesh, dim, -1)
    return [list(map(int, row)) for row in moved.reshape(-1, mesh.shape[dim])]


def _groups_along(mesh, dim: int) -> ProcessGroup | None:
    """This rank's group along ``dim`` (None if the mesh does not hold it). Collective over the world."""
    mine = None
    for ranks in _lines(mesh, dim):
        if ranks != sorted(ranks):  # a group numbers its ranks in ascending order; coordinates must agree
            raise NotImplementedError(f"DeviceMesh: the ranks along each dimension must be ascending in ember, "
                                      f"got {ranks} along dimension {dim} of {mesh.tolist()}")
        pg = new_group(ranks)
        if pg.comm is not None:
            mine = pg
    return mine


class DeviceMesh:
    """An n-d array of global ranks with a process group per dimension (``torch.distributed.DeviceMesh``).

    Args:
        device_type: ``"cpu"`` (ember has no other device; others raise RuntimeError).
        mesh: the global ranks, any n-d integer array, tensor or nested list; each rank at most once.
        mesh_dim_names: optional unique names, one per dimension (needed for ``mesh["name"]``).

    Creating a mesh initialises the default process group if needed (as PyTorch does) and creates one group
    per line of each dimension; every rank of the world must take part, members of the mesh or not.
    """

    def __init__(self, device_type: str, mesh, *, mesh_dim_names: tuple[str, ...] | None = None,
                 _groups: list[ProcessGroup | None] | None = None, _root: DeviceMesh | None = None) -> None:
        _check_device_type(device_type)
        array = xp.array(mesh._data if isinstance(mesh, Tensor) else mesh, dtype=xp.int32)
        if array.ndim == 0:
            raise ValueError("DeviceMesh: mesh must have at least one dimension, got a scalar")
        if len(set(array.ravel().tolist())) != array.size:
            raise RuntimeError(f"DeviceMesh: each rank may appear only once in the mesh, got {array.tolist()}")
        self._device_type = device_type
        self._mesh = array
        self._mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        if self._mesh_dim_names is not None and len(self._mesh_dim_names) != array.ndim:
            raise RuntimeError(f"DeviceMesh: {len(self._mesh_dim_names)} mesh_dim_names for a "
                               f"{array.ndim}-d mesh: {self._mesh_dim_names}")
        self._root = _root
        self._flattened: dict[str, DeviceMesh] = {}  # on a root mesh: flattened sub-meshes by name
        if _groups is None:
            if not is_initialized():
                init_process_group()
            world = default_group("DeviceMesh").size()
            if array.size > world or array.min() < 0 or array.max() >= world:
                raise RuntimeError(f"DeviceMesh: the mesh {array.tolist()} needs ranks outside the world of "
                                   f"{world} rank(s) (mesh should not be bigger than the default world size)")
            _groups = [_groups_along(array, d) for d in range(array.ndim)]
        self._groups = _groups
        self._rank = get_rank()
        hits = xp.argwhere(array == self._rank)
        self._coordinate = tuple(int(i) for i in hits[0]) if len(hits) else None

    # ------------------------------------------------------------------ the layout
    @property
    def device_type(self) -> str:
        return self._device_type

    @property
    def mesh(self) -> Tensor:
        """The global ranks as an int32 tensor of the mesh's shape."""
        return Tensor._make(self._mesh.copy())

    @property
    def mesh_dim_names(self) -> tuple[str, ...] | None:
        return self._mesh_dim_names

    @property
    def ndim(self) -> int:
        return self._mesh.ndim

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._mesh.shape)

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return self._mesh.size if mesh_dim is None else self._mesh.shape[mesh_dim]

    # ------------------------------------------------------------------ this rank
    def get_rank(self) -> int:
        """This process's global rank."""
        return self._rank

    def get_coordinate(self) -> tuple[int, ...] | None:
        """This rank's index in the mesh (a tuple, one entry per dimension); None if the mesh does not hold it."""
        return self._coordinate

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This rank's position along ``mesh_dim`` (its rank in that dimension's group)."""
        return self._coordinate_on(self._dim_index(mesh_dim, "get_local_rank"))

    def _coordinate_on(self, dim: int) -> int:
        if self._coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {self._rank} is not part of the mesh {self._mesh.tolist()}")
        return self._coordinate[dim]

    # ------------------------------------------------------------------ groups
    def get_group(self, mesh_dim: int | str | None = None) -> ProcessGroup:
        """The process group of this rank along ``mesh_dim`` (a name or index; optional for a 1-D mesh)."""
        if isinstance(mesh_dim, str) and self._root_mesh()._flattened.get(mesh_dim) is not None:
            return self._root_mesh()._flattened[mesh_dim].get_group()
        dim = self._dim_index(mesh_dim, "get_group")
        self._coordinate_on(dim)  # a clear error on a rank outside the mesh
        return self._groups[dim]

    def get_all_groups(self) -> list[ProcessGroup]:
        return [self.get_group(d) for d in range(self.ndim)]

    def _dim_index(self, mesh_dim: int | str | None, op: str) -> int:
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"DeviceMesh.{op}: the mesh has {self.ndim} dimensions; the optional kwarg "
                                   "`mesh_dim` needs to be specified when device_mesh.ndim > 1")
            return 0
        if isinstance(mesh_dim, str):
            return self._dim_by_name(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"DeviceMesh.{op}: mesh_dim {mesh_dim} is out of range for a {self.ndim}-d mesh")
        return mesh_dim % self.ndim

    def _dim_by_name(self, name: str) -> int:
        if self._mesh_dim_names is None:
            raise KeyError(f"DeviceMesh has no mesh_dim_names, so it has no dimension named {name!r}")
        if name not in self._mesh_dim_names:
            raise KeyError(f"Mesh dimension '{name}' does not exist. Available mesh dimensions are: "
                           f"mesh_dim_names={self._mesh_dim_names}")
        return self._mesh_dim_names.index(name)

    # ------------------------------------------------------------------ sub-meshes
    def _root_mesh(self) -> DeviceMesh:
        return self if self._root is None else self._root

    def __getitem__(self, mesh_dim_names: str | tuple[str, ...]) -> DeviceMesh:
        """The sub-mesh through this rank along the named dimensions (in ascending order), e.g. ``mesh["tp"]``.

        It keeps the parent's groups; no communication. A name given to ``_flatten`` on the root mesh
        selects the flattened mesh."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if len(names) == 1 and names[0] in self._root_mesh()._flattened:
            return self._root_mesh()._flattened[names[0]]
        bad = [n for n in names if n not in self._mesh_dim_names]
        if bad:
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self._mesh_dim_names) + list(self._root_mesh()._flattened)}.")
        dims = [self._mesh_dim_names.index(n) for n in names]
        if dims != sorted(dims) or len(set(dims)) != len(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should be in ascending "
                           "order.")
        return DeviceMesh(self._device_type, self._slice_through_me(dims), mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims], _root=self._root_mesh())

    def _slice_through_me(self, dims: list[int]):
        """The sub-array over ``dims`` at this rank's coordinate on the other dimensions."""
        if self._coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {self._rank} is not part of the mesh {self._mesh.tolist()}, "
                               "so it has no sub-mesh")
        index = tuple(slice(None) if d in dims else c for d, c in enumerate(self._coordinate))
        return self._mesh[index]

    def _flatten(self, mesh_dim_name: str | None = None) -> DeviceMesh:
        """This mesh as one dimension (``mesh["dp", "cp"]._flatten()`` -> a 1-D mesh named ``"dp_cp"``).

        Collective over the world (it creates the flattened groups); afterwards the root mesh knows the new
        name: ``root["dp_cp"]`` and ``root.get_group("dp_cp")``."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names!")
        name = mesh_dim_name or "_".join(self._mesh_dim_names)
        if self.ndim == 1 and name in self._mesh_dim_names:
            return self
        root = self._root_mesh()
        if name in (root._mesh_dim_names or ()):
            raise ValueError(f"{name} already exists for submesh of the {root}. The mesh_dim_names of submesh "
                             "and flattened mesh are reserved.")
        if name in root._flattened:
            return root._flattened[name]
        # Every copy of this sub-mesh across the root is one flattened group: enumerate them all (collective).
        kept = [root._mesh_dim_names.index(n) for n in self._mesh_dim_names]
        others = [d for d in range(root.ndim) if d not in kept]
        blocks = xp.transpose(root._mesh, others + kept).reshape(-1, math.prod(self.shape))
        mine = None
        for ranks in blocks.tolist():
            pg = new_group(ranks)
            if pg.comm is not None:
                mine = (ranks, pg)
        flat = DeviceMesh(self._device_type, mine[0] if mine else self._mesh.ravel(), mesh_dim_names=(name,),
                          _groups=[mine[1] if mine else None], _root=root)
        root._flattened[name] = flat
        return flat

    # ------------------------------------------------------------------ identity
    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={s}" for n, s in zip(self._mesh_dim_names, self.shape)) if self._mesh_dim_names \
            else ", ".join(map(str, self.shape)) + ("," if self.ndim == 1 else "")
        return f"DeviceMesh(({sizes}), '{self._device_type}', mesh={self._mesh.tolist()})"

    def _key(self) -> tuple:
        return (tuple(self._mesh.ravel().tolist()), self.shape, self._device_type, self._mesh_dim_names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __enter__(self) -> DeviceMesh:
        """``with mesh:`` makes it the mesh of DTensor calls that are given none."""
        _mesh_stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _mesh_stack.pop()


_mesh_stack: list[DeviceMesh] = []


def current_mesh(op: str) -> DeviceMesh:
    """The innermost ``with mesh:``; a clear error outside one."""
    if not _mesh_stack:
        raise RuntimeError(f"{op}: no device_mesh given and no DeviceMesh is active (give device_mesh= or use "
                           "`with mesh:`)")
    return _mesh_stack[-1]


def _check_device_type(device_type: str) -> None:
    if not isinstance(device_type, str):
        raise TypeError(f"DeviceMesh: device_type must be a string such as 'cpu', got {type(device_type).__name__}")
    if not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. If you maintained a "
                           "'torch.device' object, it's recommended to pass in 'device.type'.")
    check_device(device(device_type))


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *,
                     mesh_dim_names: tuple[str, ...] | None = None, backend_override=None) -> DeviceMesh:
    """A mesh of shape ``mesh_shape`` over global ranks ``0 .. prod(mesh_shape) - 1`` in row-major order.

    ``mesh_dim_names`` must be unique and as many as the dimensions. Initialises the default process group
    if needed; collective over the world. ``backend_override`` must be None: every group runs on MPI."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                               f"{tuple(mesh_dim_names)}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                               f"{len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}.")
    if backend_override is not None:
        raise NotImplementedError("init_device_mesh: backend_override is not supported; ember's groups all run "
                                  "on MPI")
    _check_device_type(device_type)
    shape = tuple(int(s) for s in mesh_shape)
    ranks = xp.arange(math.prod(shape), dtype=xp.int32).reshape(shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
