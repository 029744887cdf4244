"""Tensor parallelism on 2 ranks against one PyTorch process computing the unsharded model: an MLP trained with
ColwiseParallel + RowwiseParallel ends with the same parameters, embeddings split either way give the same
outputs and gradients. (Run on 2 ranks by tests/test_on_ranks.py.)"""

import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.tensor import DTensor, Replicate, Shard
from ember.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)


@pytest.fixture
def mesh(process_group):
    return init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))


def mlp_weights(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((o, i)).astype(np.float32) / np.sqrt(i), rng.standard_normal(o).astype(np.float32))
            for i, o in zip(sizes, sizes[1:])]


def ember_mlp(weights, rank):
    layers = []
    for w, b in weights:
        lin = nn.Linear(w.shape[1], w.shape[0])
        # rank 1 starts from other values: parallelize_module takes rank 0's (src_data_rank=0)
        lin.weight.data.copy_(ember.tensor(w + rank))
        lin.bias.data.copy_(ember.tensor(b - rank))
        layers += [lin, nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def torch_mlp(weights):
    layers = []
    for w, b in weights:
        lin = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(w))
            lin.bias.copy_(torch.tensor(b))
        layers += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def test_styles_place_the_parameters_like_pytorch(mesh, rank):
    model = parallelize_module(ember_mlp(mlp_weights([4, 6, 3]), rank), mesh,
                               {"0": ColwiseParallel(), "2": RowwiseParallel()})
    w0, b0, w2, b2 = (p for _, p in model.named_parameters())
    assert all(isinstance(p, DTensor) and isinstance(p, nn.Parameter) for p in (w0, b0, w2, b2))
    assert (w0.placements, b0.placements, w2.placements, b2.placements) == \
        ((Shard(0),), (Shard(0),), (Shard(1),), (Replicate(),))
    assert tuple(w0.shape) == (6, 4) and tuple(w0.to_local().shape) == (3, 4)
    assert tuple(w2.to_local().shape) == (3, 3) and [n for n, _ in model.named_parameters()] == \
        ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(NotImplementedError, match="only support nn.Linear and nn.Embedding"):
        parallelize_module(nn.ReLU(), mesh, ColwiseParallel())
    with pytest.warns(UserWarning, match="could not be resolved"):
        parallelize_module(nn.Sequential(nn.Linear(2, 2)), mesh, {"5": ColwiseParallel()})
    # a nested key's unresolved part: PyTorch's warning names its own api module (its recursive call's frame), the
    # one a module filter for PyTorch matches; ember's named its own api.py. The top-level one names the caller's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module=r"torch\.distributed\.tensor\.parallel\.api")
        parallelize_module(nn.Sequential(nn.Sequential(nn.Linear(2, 2))), mesh, {"0.5": ColwiseParallel()})
        parallelize_module(nn.Sequential(nn.Linear(2, 2)), mesh, {"5": ColwiseParallel()})
    assert [(str(w.message)[:34], w.filename) for w in caught] == [("Parallelize plan key '5' could not", __file__)]


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_a_tensor_parallel_mlp_trains_like_one_process(mesh, rank, optimizer):
    weights = mlp_weights([8, 16, 12, 5])
    model = parallelize_module(ember_mlp(weights, rank), mesh,
                               {"0": ColwiseParallel(), "2": RowwiseParallel(), "4": ColwiseParallel(
                                   output_layouts=Replicate())})
    reference = torch_mlp(weights)
    kwargs = {"lr": 0.05, "momentum": 0.9} if optimizer == "SGD" else {"lr": 0.01}
    opt = getattr(ember.optim, optimizer)(model.parameters(), **kwargs)
    opt_t = getattr(torch.optim, optimizer)(reference.parameters(), **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x, y = rng.standard_normal((7, 8)).astype(np.float32), rng.integers(0, 5, 7)
        opt.zero_grad()
        out = model(ember.tensor(x))
        loss = nn.functional.cross_entropy(out, ember.tensor(y))
        loss.backward()
        opt.step()
        opt_t.zero_grad()
        out_t = reference(torch.tensor(x))
        loss_t = torch.nn.functional.cross_entropy(out_t, torch.tensor(y))
        loss_t.backward()
        opt_t.step()
        assert type(out) is ember.Tensor and tuple(out.shape) == (7, 5)
        np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-6)
    for p, p_t in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.full_tensor().detach().numpy(), p_t.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_sees_the_whole_gradient(mesh, rank, norm_type):
    weights = mlp_weights([6, 10, 4], seed=7)
    model = parallelize_module(ember_mlp(weights, 0), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    reference = torch_mlp(weights)
    x = np.random.default_rng(8).standard_normal((5, 6)).astype(np.float32)
    model(ember.tensor(x)).square().sum().backward()
    reference(torch.tensor(x)).square().sum().backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5, norm_type)
    np.testing.assert_allclose(total.item(), total_t.item(), rtol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.full_tensor().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_dtensor_outputs_chain_between_layers(mesh, rank):
    weights = mlp_weights([6, 8, 4], seed=3)
    model = ember_mlp(weights, 0)
    parallelize_module(model, mesh, {"0": ColwiseParallel(use_local_output=False),
                                     "2": RowwiseParallel(input_layouts=Shard(-1), use_local_output=False)})
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    h = model[0](ember.tensor(x))
    assert isinstance(h, DTensor) and h.placements == (Shard(1),)
    out = model[2](h.relu())
    assert isinstance(out, DTensor) and out.placements == (Replicate(),)
    np.testing.assert_allclose(out.full_tensor().detach().numpy(), torch_mlp(weights)(torch.tensor(x)).detach(),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("style", [ColwiseParallel, RowwiseParallel])
@pytest.mark.parametrize("padding_idx", [None, 3, 8])
def test_embedding_split_either_way(mesh, rank, style, padding_idx):
    rng = np.random.default_rng(4)
    table = rng.standard_normal((11, 6))
    idx = rng.integers(0, 11, (3, 5))
    idx[0, :3] = [3, 8, 10]
    emb = nn.Embedding(11, 6, padding_idx=padding_idx, dtype=ember.float64)
    emb.weight.data.copy_(ember.tensor(table))
    # PyTorch's RowwiseParallel takes a plain input as Shard(-1) by default: the indices are Replicate here
    parallelize_module(emb, mesh, style(input_layouts=Replicate()))
    ref = torch.nn.Embedding(11, 6, padding_idx=padding_idx, dtype=torch.float64)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(table))
    out, out_t = emb(ember.tensor(idx)), ref(torch.tensor(idx))
    expected = Shard(1) if style is ColwiseParallel else Shard(0)
    assert emb.weight.placements == (expected,)
    full = out if style is RowwiseParallel else \
        DTensor.from_local(out, mesh, [Shard(-1)]).full_tensor()  # colwise keeps the columns sharded
    np.testing.assert_allclose(full.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(out_t.shape)
    (full * ember.tensor(g)).sum().backward()
    (out_t * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(emb.weight.grad.full_tensor().numpy(), ref.weight.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("norm", ["LayerNorm", "RMSNorm"])
def test_sequence_parallel_norm(mesh, rank, norm):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 4))
    layer, ref = getattr(nn, norm)(4, dtype=ember.float64), getattr(torch.nn, norm)(4, dtype=torch.float64)
    scale = rng.standard_normal(4)
    layer.weight.data.copy_(ember.tensor(scale))
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(scale))
    parallelize_module(layer, mesh, SequenceParallel())
    out = layer(ember.tensor(x[:, 3 * rank: 3 * rank + 3]))
    assert isinstance(out, DTensor) and out.placements == (Shard(1),)
    out_t = ref(torch.tensor(x))
    np.testing.assert_allclose(out.full_tensor().detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    out.full_tensor().square().sum().backward()
    out_t.square().sum().backward()
    np.testing.assert_allclose(layer.weight.grad.full_tensor().numpy(), ref.weight.grad.numpy(), rtol=1e-12)


def test_parallelize_module_needs_a_plan_and_a_1d_mesh(mesh):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin = nn.Linear(2, 2)
        assert parallelize_module(lin, mesh) is lin
    assert "No parallelize_plan" in str(caught[0].message)
    with pytest.raises(TypeError, match="Expect Union"):
        parallelize_module(lin, mesh, [ColwiseParallel()])
