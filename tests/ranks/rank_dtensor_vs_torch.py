"""ember's DTensor and tensor parallelism next to PyTorch's own, on the same 2 ranks: each rank also joins a
PyTorch gloo process group, and the same programs run on both (placements, local pieces, values, gradients).
(Run on 2 ranks by tests/test_on_ranks.py.)"""

import itertools

import numpy as np
import pytest
import torch
import torch.distributed as tdist
import torch.distributed.tensor as tt
from rank_plugin import join_torch_gloo
from torch.distributed.device_mesh import init_device_mesh as torch_mesh
from torch.distributed.tensor import parallel as tp

import ember
import ember.distributed.tensor as et
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.tensor import parallel as ep


@pytest.fixture(scope="module")
def meshes(process_group):
    join_torch_gloo(process_group)
    yield init_device_mesh("cpu", (2,)), torch_mesh("cpu", (2,))
    tdist.destroy_process_group()


def placements(mod):
    return [mod.Shard(0), mod.Shard(1), mod.Replicate(), mod.Partial()]


def same(e, t, tol=1e-12):
    """Same placements (by name), same local piece."""
    assert str(e.placements) == str(t.placements)
    np.testing.assert_allclose(e.to_local().detach().numpy(), t.to_local().detach().numpy(), rtol=tol, atol=tol)


def pair(meshes, array, i, requires_grad=False):
    em, tm = meshes
    e = et.distribute_tensor(ember.tensor(array, requires_grad=requires_grad), em, [placements(et)[i]])
    t = tt.distribute_tensor(torch.tensor(array, requires_grad=requires_grad), tm, [placements(tt)[i]])
    return e, t


BINARY = {"matmul": lambda x, y: x @ y, "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
          "mul": lambda x, y: x * y, "div": lambda x, y: x / (y * y + 1)}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("i,j", list(itertools.product(range(4), repeat=2)))
def test_binary_ops_place_compute_and_differentiate_like_pytorch(meshes, name, i, j):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 4))
    b = rng.standard_normal((4, 3) if name == "matmul" else (5, 4))
    (ea, ta), (eb, tb) = pair(meshes, a, i, True), pair(meshes, b, j, True)
    eo, to = BINARY[name](ea, eb), BINARY[name](ta, tb)
    same(eo, to)
    g = rng.standard_normal(tuple(to.shape))
    (eo.full_tensor() * ember.tensor(g)).sum().backward()
    (to.full_tensor() * torch.tensor(g)).sum().backward()
    for e, t in ((ea, ta), (eb, tb)):
        np.testing.assert_allclose(e.grad.full_tensor().numpy(), t.grad.full_tensor().numpy(), rtol=1e-12)


@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("name", ["sum", "sum0", "sum1", "relu", "neg", "mul2", "add1", "t", "exp", "mean"])
def test_unary_ops_and_reductions_like_pytorch(meshes, i, name):
    f = {"sum": lambda x: x.sum(), "sum0": lambda x: x.sum(0), "sum1": lambda x: x.sum(1), "relu": lambda x: x.relu(),
         "neg": lambda x: -x, "mul2": lambda x: x * 2, "add1": lambda x: x + 1, "t": lambda x: x.t(),
         "exp": lambda x: x.exp(), "mean": lambda x: x.mean()}[name]
    e, t = pair(meshes, np.random.default_rng(1).standard_normal((6, 4)), i)
    eo, to = f(e), f(t)
    if name == "mean" and i < 2:  # documented: PyTorch gives Partial(avg) of the local means, ember Partial(sum)
        np.testing.assert_allclose(eo.full_tensor().numpy(), to.full_tensor().numpy(), rtol=1e-12)
    else:
        same(eo, to)


@pytest.mark.parametrize("rows", [5, 3])
@pytest.mark.parametrize("i,j", list(itertools.product(range(4), repeat=2)))
def test_redistribute_gives_pytorchs_pieces(meshes, rows, i, j):
    e, t = pair(meshes, np.random.default_rng(2).standard_normal((rows, 3)), i)
    if j == 3 and i != 3:  # to Partial: refused by both
        with pytest.raises(RuntimeError, match="redistributing to Partial is for internal use only") as theirs:
            t.redistribute(placements=[placements(tt)[j]])
        with pytest.raises(RuntimeError, match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")):
            e.redistribute(placements=[placements(et)[j]])
        return
    same(e.redistribute(placements=[placements(et)[j]]), t.redistribute(placements=[placements(tt)[j]]))


def test_tensor_parallel_mlp_trains_like_pytorchs(meshes):
    em, tm = meshes
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 8), torch.nn.Tanh(),
                              torch.nn.Linear(8, 4))
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.GELU(), ember.nn.Linear(16, 8), ember.nn.Tanh(),
                                ember.nn.Linear(8, 4))
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    plan = {"0": "Colwise", "2": "Rowwise", "4": "Colwise"}
    tp.parallelize_module(ref, tm, {k: getattr(tp, v + "Parallel")() for k, v in plan.items()})
    ep.parallelize_module(model, em, {k: getattr(ep, v + "Parallel")() for k, v in plan.items()})
    opt, opt_t = ember.optim.AdamW(model.parameters(), lr=0.01), torch.optim.AdamW(ref.parameters(), lr=0.01)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.standard_normal((6, 8)).astype(np.float32)
        out, out_t = model(ember.tensor(x)), ref(torch.tensor(x))  # the last layer's output columns are sharded
        np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=1e-6, atol=1e-6)
        opt.zero_grad()
        opt_t.zero_grad()
        out.square().sum().backward()
        out_t.square().sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(p.grad.full_tensor().numpy(), q.grad.full_tensor().numpy(), rtol=1e-5,
                                       atol=1e-6)
        opt.step()
        opt_t.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        same(p, q, tol=1e-6)


SIZELESS = {"zeros": lambda m, mesh: m.zeros(device_mesh=mesh), "ones": lambda m, mesh: m.ones(device_mesh=mesh),
            "empty": lambda m, mesh: m.empty(device_mesh=mesh), "full": lambda m, mesh: m.full((), 2.0, device_mesh=mesh),
            "distribute_tensor": lambda m, mesh: m.distribute_tensor(
                (ember if m is et else torch).tensor(3.0), mesh, [m.Replicate()])}


@pytest.mark.parametrize("name", list(SIZELESS))
def test_sizeless_factories_make_a_0d_dtensor(meshes, name):
    """No size: a 0-d DTensor, as PyTorch's (a 0-d array's broadcast gave ember a 1-element 1-d one)."""
    em, tm = meshes
    e, t = SIZELESS[name](et, em), SIZELESS[name](tt, tm)
    assert tuple(e.shape) == tuple(t.shape) == () and tuple(e.to_local().shape) == tuple(t.to_local().shape)
    if name != "empty":
        same(e, t)


def test_sizeless_random_factories_make_a_0d_dtensor(meshes):
    """rand() / randn() with no size: a 0-d DTensor (PyTorch's own refuses a CPU mesh's random factories)."""
    em, _ = meshes
    for draw in (et.rand, et.randn):
        out = draw(device_mesh=em)
        assert tuple(out.shape) == () and tuple(out.to_local().shape) == ()
