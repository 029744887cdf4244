"""DeviceMesh arguments checked before any process group exists, and get_default_backend_for_device, against
PyTorch. The meshes themselves run on 4 ranks: tests/ranks/rank_device_mesh.py."""

import pytest
import torch
import torch.distributed as tdist
from torch.distributed.device_mesh import init_device_mesh as torch_init_device_mesh

import ember
import ember.distributed as dist
from ember.distributed.device_mesh import DeviceMesh, init_device_mesh


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1", "mps"])
def test_default_backend_for_device_matches_pytorch(device):
    assert dist.get_default_backend_for_device(device) == tdist.get_default_backend_for_device(device)
    assert dist.get_default_backend_for_device(ember.device(device)) == \
        tdist.get_default_backend_for_device(torch.device(device))


def test_default_backend_for_an_unregistered_device_raises_like_pytorch():
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")
    with pytest.raises(ValueError, match="Default backend not registered"):
        tdist.get_default_backend_for_device("meta")


@pytest.mark.parametrize("args,kwargs,match", [
    (("cpu", (2,)), {"mesh_dim_names": ("a", "b")}, "same length"),
    (("cpu", (2, 2)), {"mesh_dim_names": ("a", "a")}, "must be unique"),
    (("cuda:0", (1,)), {}, "with index is not supported"),
])
def test_init_device_mesh_argument_errors_match_pytorch(args, kwargs, match):
    with pytest.raises(RuntimeError) as theirs:
        torch_init_device_mesh(*args, **kwargs)
    assert match in str(theirs.value)
    with pytest.raises(RuntimeError, match=match):
        init_device_mesh(*args, **kwargs)
    assert not dist.is_initialized()  # refused before any process group was made


def test_a_gpu_mesh_says_ember_has_no_gpu():
    with pytest.raises(RuntimeError, match="CPU only"):
        init_device_mesh("cuda", (1,))
    with pytest.raises(RuntimeError, match="CPU only"):
        DeviceMesh("cuda", [0])
    assert not dist.is_initialized()


def test_the_names_are_where_pytorch_has_them():
    assert dist.DeviceMesh is DeviceMesh and dist.init_device_mesh is init_device_mesh
    assert set(tdist.device_mesh.__all__) <= set(dir(ember.distributed.device_mesh))


def test_placements_behave_like_pytorchs():
    from torch.distributed import tensor as tt

    from ember.distributed import tensor as et

    for make in (lambda m: m.Shard(0), lambda m: m.Shard(-1), lambda m: m.Replicate(), lambda m: m.Partial(),
                 lambda m: m.Partial("avg")):
        e, t = make(et), make(tt)
        assert (repr(e), str(e)) == (repr(t), str(t))
        assert (e.is_shard(), e.is_shard(0), e.is_replicate(), e.is_partial(), e.is_partial("avg")) == \
            (t.is_shard(), t.is_shard(0), t.is_replicate(), t.is_partial(), t.is_partial("avg"))
    assert et.Shard(1) == et.Shard(1) and et.Shard(0) != et.Shard(1) and et.Partial() != et.Partial("max")
    assert len({et.Shard(0), et.Shard(0), et.Replicate(), et.Replicate()}) == 2
    with pytest.raises(ValueError, match="reduce_op"):
        et.Partial("bogus")  # PyTorch accepts any string here and fails later, where it is used


def test_compat_imports_the_torch_names(tmp_path):
    from test_compat_missing import run_compat

    out = run_compat(tmp_path, "from torch.distributed.tensor import DTensor, Shard, distribute_tensor\n"
                               "from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module\n"
                               "from torch.distributed.device_mesh import init_device_mesh, DeviceMesh\n"
                               "import torch.distributed as dist\n"
                               "print(DTensor.__module__, dist.init_device_mesh is init_device_mesh)\n")
    assert "ember.distributed.tensor._api True" in out.stdout, out.stderr
