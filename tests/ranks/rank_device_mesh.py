"""DeviceMesh on 4 ranks: a 2x2 mesh's groups, coordinates and sub-meshes, a 1-D mesh of 4, a flattened mesh and
a mesh smaller than the world. (Run on 4 ranks by tests/test_on_ranks.py.)"""

import pytest

import ember
import ember.distributed as dist
from ember.distributed.device_mesh import DeviceMesh, init_device_mesh


def _summed_rank(group) -> int:
    t = ember.tensor([float(dist.get_rank())])
    dist.all_reduce(t, group=group)
    return int(t.item())


def test_2x2_mesh_layout_and_groups(rank, world):
    assert world == 4
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    assert mesh.ndim == 2 and mesh.shape == (2, 2) and mesh.size() == 4 and mesh.size(1) == 2
    assert mesh.mesh.tolist() == [[0, 1], [2, 3]] and mesh.mesh.dtype == ember.int32
    assert mesh.mesh_dim_names == ("dp", "tp") and mesh.device_type == "cpu"
    assert mesh.get_rank() == rank
    assert mesh.get_coordinate() == (rank // 2, rank % 2)
    assert mesh.get_local_rank("dp") == rank // 2 and mesh.get_local_rank(1) == rank % 2
    tp, dp = mesh.get_group("tp"), mesh.get_group(0)
    assert dist.get_process_group_ranks(tp) == [rank // 2 * 2, rank // 2 * 2 + 1]
    assert dist.get_process_group_ranks(dp) == [rank % 2, rank % 2 + 2]
    assert dist.get_rank(tp) == rank % 2 and dist.get_world_size(dp) == 2
    # the groups really communicate among those ranks only
    assert _summed_rank(tp) == 4 * (rank // 2) + 1
    assert _summed_rank(dp) == 2 * (rank % 2) + 2
    assert mesh.get_all_groups() == [dp, tp]
    with pytest.raises(RuntimeError, match="mesh_dim"):
        mesh.get_group()
    with pytest.raises(RuntimeError, match="mesh_dim"):
        mesh.get_local_rank()
    with pytest.raises(KeyError, match="'pp' does not exist"):
        mesh.get_group("pp")


def test_submeshes_reuse_the_groups(rank):
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    tp = mesh["tp"]
    assert tp.ndim == 1 and tp.mesh.tolist() == [rank // 2 * 2, rank // 2 * 2 + 1]
    assert tp.mesh_dim_names == ("tp",) and tp.get_group() is mesh.get_group("tp")
    assert tp.get_local_rank() == rank % 2 and tp.get_coordinate() == (rank % 2,)
    assert mesh["dp"].mesh.tolist() == [rank % 2, rank % 2 + 2]
    assert mesh["dp", "tp"] is mesh
    with pytest.raises(KeyError, match="ascending"):
        mesh["tp", "dp"]
    with pytest.raises(KeyError, match="Invalid mesh_dim_names"):
        mesh["pp"]
    assert mesh == init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    assert mesh != mesh["tp"] and len({mesh, init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))}) == 1


def test_flatten_makes_one_group_of_all_dims(rank):
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    flat = mesh["dp", "tp"]._flatten()
    assert flat.mesh_dim_names == ("dp_tp",) and flat.mesh.tolist() == [0, 1, 2, 3]
    assert _summed_rank(flat.get_group()) == 6
    assert mesh["dp_tp"] is flat and mesh.get_group("dp_tp") is flat.get_group()


def test_1d_mesh_of_the_world_and_unnamed_slicing(rank):
    mesh = init_device_mesh("cpu", (4,))
    assert mesh.get_coordinate() == (rank,) and mesh.get_local_rank() == rank
    assert dist.get_process_group_ranks(mesh.get_group()) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="without mesh_dim_names"):
        mesh["x"]


def test_a_mesh_smaller_than_the_world(rank):
    mesh = DeviceMesh("cpu", [[0, 1]], mesh_dim_names=("a", "b"))  # ranks 2 and 3 are outside
    if rank < 2:
        assert mesh.get_coordinate() == (0, rank)
        assert _summed_rank(mesh.get_group("b")) == 1
    else:
        assert mesh.get_coordinate() is None
        with pytest.raises(RuntimeError, match="not part of the mesh"):
            mesh.get_group("b")


def test_meshes_that_need_other_ranks_raise(rank):
    with pytest.raises(RuntimeError, match="bigger than the default world size"):
        init_device_mesh("cpu", (2, 4))
    with pytest.raises(RuntimeError, match="only once"):
        DeviceMesh("cpu", [0, 0])
