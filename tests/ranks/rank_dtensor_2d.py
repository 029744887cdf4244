"""DTensor on a 2x2 mesh (4 ranks) against PyTorch's math: nested shards, redistribution between 2-d
placements and a matmul with a different rule per mesh dimension. (Run on 4 ranks by tests/test_on_ranks.py.)"""

import itertools

import numpy as np
import pytest
import torch

import ember
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.tensor import Partial, Replicate, Shard, distribute_tensor

PLACEMENTS = [Shard(0), Shard(1), Replicate(), Partial()]


@pytest.fixture
def mesh(process_group):
    return init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def piece(x: torch.Tensor, placements, coordinate):
    """This rank's piece the way PyTorch lays it out: mesh dimensions in order, each chunking what is left."""
    for p, c in zip(placements, coordinate):
        if isinstance(p, Shard):
            chunks = x.chunk(2, p.dim)
            x = chunks[c] if c < len(chunks) else x.narrow(p.dim, 0, 0)
    return x


@pytest.mark.parametrize("placements", [(Shard(0), Shard(1)), (Shard(0), Shard(0)), (Shard(1), Shard(0)),
                                        (Replicate(), Shard(0)), (Shard(1), Replicate())], ids=str)
@pytest.mark.parametrize("shape", [(8, 6), (7, 3)], ids=str)
def test_pieces_match_pytorchs_nested_chunks(mesh, placements, shape):
    x = data(*shape)
    d = distribute_tensor(ember.tensor(x), mesh, placements)
    np.testing.assert_array_equal(d.to_local().numpy(), piece(torch.tensor(x), placements, mesh.get_coordinate()))
    np.testing.assert_array_equal(d.full_tensor().numpy(), x)


@pytest.mark.parametrize("src", list(itertools.product(PLACEMENTS, repeat=2)), ids=str)
def test_redistribute_between_2d_placements(mesh, src):
    x, w = data(7, 6), data(7, 6, seed=1)
    for dst in [(Replicate(), Replicate()), (Shard(0), Shard(0)), (Shard(1), Shard(0)), (Replicate(), src[1])]:
        if dst[1] == Partial() and src[0] == Partial():
            continue  # Replicate from Partial, then Partial again: only the sharding rules may make terms
        d = distribute_tensor(ember.tensor(x, requires_grad=True), mesh, src)
        moved = d.redistribute(placements=dst)
        assert moved.placements == dst
        assert tuple(moved.to_local().shape) == tuple(piece(torch.tensor(x), dst, mesh.get_coordinate()).shape)
        np.testing.assert_allclose(moved.full_tensor().detach().numpy(), x, rtol=1e-12, atol=1e-12)
        (moved.full_tensor() * ember.tensor(w)).sum().backward()
        np.testing.assert_allclose(d.grad.full_tensor().numpy(), w, rtol=1e-12, atol=1e-12)


def test_matmul_with_a_rule_per_mesh_dimension(mesh):
    a, b = data(6, 4), data(4, 5, seed=1)
    da = distribute_tensor(ember.tensor(a, requires_grad=True), mesh, [Shard(0), Shard(1)])
    db = distribute_tensor(ember.tensor(b, requires_grad=True), mesh, [Replicate(), Shard(0)])
    out = da @ db
    assert out.placements == (Shard(0), Partial())
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ref = at @ bt
    np.testing.assert_allclose(out.full_tensor().detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.relu().full_tensor().square().sum().backward()
    ref.relu().square().sum().backward()
    np.testing.assert_allclose(da.grad.full_tensor().numpy(), at.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(db.grad.full_tensor().numpy(), bt.grad.numpy(), rtol=1e-12)
