"""DTensor on 2 ranks against PyTorch's single-process math: layouts, redistribution, sharding rules, and the
gradients through them. (Run on 2 ranks by tests/test_on_ranks.py; the 2x2 mesh is in rank_dtensor_2d.py.)"""

import copy

import numpy as np
import pytest
import torch

import ember
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from ember.distributed.tensor import ones as dones
from ember.distributed.tensor import randn as drandn
from ember.distributed.tensor import zeros as dzeros

PLACEMENTS = [Shard(0), Shard(1), Replicate(), Partial()]


@pytest.fixture
def mesh(process_group):
    return init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float64)


def leaf(array):
    return ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def close(a, b, tol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("rows", [5, 4, 1])
def test_shards_are_torch_chunks(mesh, rank, rows):
    x = data(rows, 3)
    for p, dim in ((Shard(0), 0), (Shard(1), 1), (Shard(-1), 1)):
        d = distribute_tensor(ember.tensor(x), mesh, [p])
        chunks = torch.tensor(x).chunk(2, dim)
        expected = chunks[rank] if rank < len(chunks) else torch.tensor(x).narrow(dim, 0, 0)
        close(d.to_local(), expected)
        assert d.placements == (Shard(dim),) and tuple(d.shape) == (rows, 3)
        close(d.full_tensor(), torch.tensor(x))


def test_distribute_tensor_takes_rank_0s_value_unless_told_not_to(mesh, rank):
    x = data(4, 2, seed=rank)
    close(distribute_tensor(ember.tensor(x), mesh, [Replicate()]).to_local(), torch.tensor(data(4, 2, seed=0)))
    mine = distribute_tensor(ember.tensor(x), mesh, [Shard(0)], src_data_rank=None)
    close(mine.to_local(), torch.tensor(x).chunk(2)[rank])
    t = distribute_tensor(ember.tensor(x, requires_grad=True), mesh, [Shard(0)])
    assert t.is_leaf and t.requires_grad and isinstance(t, DTensor)


@pytest.mark.parametrize("src", PLACEMENTS, ids=str)
@pytest.mark.parametrize("dst", PLACEMENTS, ids=str)
def test_redistribute_keeps_the_value_and_its_gradient_is_the_adjoint(mesh, rank, src, dst):
    x, w = data(5, 4), data(5, 4, seed=1)
    xe, xt = leaf(x)
    d = distribute_tensor(xe, mesh, [Replicate()]).redistribute(placements=[src]) if src != Partial() \
        else distribute_tensor(xe, mesh, [Partial()])
    assert d.placements == (src,)
    if dst == Partial() and src != dst:
        with pytest.raises(RuntimeError, match="redistributing to Partial is for internal use only"):
            d.redistribute(placements=[dst])
        return
    moved = d.redistribute(placements=[dst])
    assert moved.placements == (dst,)
    full = moved.full_tensor()
    close(full, xt)
    (full * ember.tensor(w)).sum().backward()
    (xt * torch.tensor(w)).sum().backward()
    assert xe.grad is None  # distribute_tensor returns a new leaf, as in PyTorch
    d_leaf = distribute_tensor(ember.tensor(x, requires_grad=True), mesh, [src])
    (d_leaf.redistribute(placements=[dst]).full_tensor() * ember.tensor(w)).sum().backward()
    assert d_leaf.grad.placements == (Replicate() if src == Partial() else src,)
    close(d_leaf.grad.full_tensor(), xt.grad)


def test_partial_reduce_ops(mesh, rank):
    local = ember.tensor([float(rank + 1), -float(rank)])
    for op, expected in (("sum", [3.0, -1.0]), ("avg", [1.5, -0.5]), ("max", [2.0, 0.0]), ("min", [1.0, -1.0]),
                         ("product", [2.0, 0.0])):
        d = DTensor.from_local(local, mesh, [Partial(op)])
        assert d.full_tensor().tolist() == expected
    with pytest.raises(ValueError, match="reduce_op"):
        Partial("prod")


def _binary_case(mesh, pa, pb, shape_a, shape_b, op):
    a, b = data(*shape_a), data(*shape_b, seed=1) + 3.0
    ae, at = leaf(a)
    be, bt = leaf(b)
    da, db = distribute_tensor(ae, mesh, [pa]), distribute_tensor(be, mesh, [pb])
    out = op(da, db)
    ref = op(at, bt)
    close(out.full_tensor(), ref)
    g = data(*ref.shape, seed=2)
    (out.full_tensor() * ember.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    close(da.grad.full_tensor(), at.grad)
    close(db.grad.full_tensor(), bt.grad)
    return out


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
                                lambda a, b: a.add(b, alpha=2)], ids=["add", "sub", "mul", "div", "add_alpha"])
@pytest.mark.parametrize("pa,pb,out", [(Shard(0), Shard(0), Shard(0)), (Shard(0), Replicate(), Shard(0)),
                                       (Replicate(), Shard(1), Shard(1)), (Replicate(), Replicate(), Replicate()),
                                       (Shard(1), Shard(0), Shard(0))], ids=str)
def test_elementwise_values_gradients_and_placements(mesh, op, pa, pb, out):
    assert _binary_case(mesh, pa, pb, (4, 6), (4, 6), op).placements == (out,)


def test_elementwise_broadcast_of_a_replicated_bias(mesh):
    out = _binary_case(mesh, Shard(0), Replicate(), (5, 3), (3,), lambda a, b: a * b + b)
    assert out.placements == (Shard(0),)
    out = _binary_case(mesh, Shard(1), Shard(0), (4, 6), (6,), lambda a, b: a - b)
    assert out.placements == (Shard(1),)


def test_partial_stays_partial_only_where_the_op_is_linear(mesh, rank):
    a, b = data(3, 2), data(3, 2, seed=1)
    pa = DTensor.from_local(ember.tensor(a * (rank + 1) / 3), mesh, [Partial()])  # sums to a
    pb = DTensor.from_local(ember.tensor(b * (2 - rank) / 3), mesh, [Partial()])  # sums to b
    assert (pa + pb).placements == (Partial(),) and (pa * 2).placements == (Partial(),)
    assert (pa / 4).placements == (Partial(),) and (-pa).placements == (Partial(),)
    assert (pa + 1).placements == (Replicate(),) and (pa * pb).placements == (Partial(),)  # pb is reduced
    assert pa.relu().placements == (Replicate(),) and (pa / pb).placements == (Partial(),)
    assert (pb.t() / pa.t()).placements == (Partial(),) and (ember.tensor(1.0) / pa).placements == (Replicate(),)
    close((pa + pb).full_tensor(), torch.tensor(a + b))
    close((pa * pb).full_tensor(), torch.tensor(a * b))
    close((pa + 1).full_tensor(), torch.tensor(a + 1))
    close(pa.relu().full_tensor(), torch.tensor(a).relu())
    close((pa * 2 - pb / 4).full_tensor(), torch.tensor(2 * a - b / 4))
    close((pa / pb).full_tensor(), torch.tensor(a / b))
    close((ember.tensor(1.0) / pa).full_tensor(), torch.tensor(1 / a))


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "exp", "neg", "abs", "square"])
@pytest.mark.parametrize("p", [Shard(0), Shard(1), Replicate()], ids=str)
def test_unary_ops(mesh, name, p):
    x = data(4, 5)
    xe, xt = leaf(x)
    d = distribute_tensor(xe, mesh, [p])
    out = getattr(d, name)()
    assert out.placements == (p,)
    ref = getattr(xt, name)()
    close(out.full_tensor(), ref)
    out.full_tensor().sum().backward()
    ref.sum().backward()
    close(d.grad.full_tensor(), xt.grad)


@pytest.mark.parametrize("pa,pb,out", [
    (Shard(0), Replicate(), Shard(0)),      # rows of a
    (Replicate(), Shard(1), Shard(1)),      # columns of b
    (Shard(1), Shard(0), Partial()),        # the contraction dimension
    (Replicate(), Replicate(), Replicate()),
    (Shard(0), Shard(1), Shard(0)),         # b is gathered
    (Shard(1), Replicate(), Partial()),     # b is sharded to match
    (Replicate(), Shard(0), Partial()),
    (Partial(), Replicate(), Partial()),
    (Replicate(), Partial(), Partial()),
], ids=str)
def test_matmul_placements_values_and_gradients(mesh, pa, pb, out):
    res = _binary_case(mesh, pa, pb, (6, 4), (4, 5), lambda a, b: a @ b)
    assert res.placements == (out,)


def test_matmul_of_a_batch_and_linear_through_t(mesh, rank):
    x, w, bias = data(2, 4, 6), data(5, 6, seed=1), data(5, seed=2)
    (xe, xt), (we, wt), (be, bt) = leaf(x), leaf(w), leaf(bias)
    dx = distribute_tensor(xe, mesh, [Replicate()])
    dw = distribute_tensor(we, mesh, [Shard(0)])  # colwise: the output features are split
    db = distribute_tensor(be, mesh, [Shard(0)])
    y = dx @ dw.t() + db
    assert y.placements == (Shard(2),) and tuple(y.shape) == (2, 4, 5)
    ref = torch.nn.functional.linear(xt, wt, bt)
    close(y.full_tensor(), ref)
    (y.full_tensor() ** 2).sum().backward() if False else y.full_tensor().square().sum().backward()
    ref.square().sum().backward()
    for d, t in ((dx, xt), (dw, wt), (db, bt)):
        close(d.grad.full_tensor(), t.grad)


@pytest.mark.parametrize("p", [Shard(0), Shard(1), Replicate()], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_sum_and_mean(mesh, p, dim):
    x = data(4, 6)
    for name in ("sum", "mean"):
        xe, xt = leaf(x)
        d = distribute_tensor(xe, mesh, [p])
        out = getattr(d, name)() if dim is None else getattr(d, name)(dim)
        ref = getattr(xt, name)() if dim is None else getattr(xt, name)(dim)
        reduced = dim is None or (isinstance(p, Shard) and p.dim in ((dim,) if isinstance(dim, int) else dim))
        assert out.placements == ((Partial(),) if isinstance(p, Shard) and reduced else
                                  (Shard(p.dim - (0 if dim is None or dim == 1 else 1)),) if isinstance(p, Shard)
                                  else (p,)) or not isinstance(p, Shard)
        close(out.full_tensor(), ref)
        (out.full_tensor() * 3).sum().backward()
        (ref * 3).sum().backward()
        close(d.grad.full_tensor(), xt.grad)


def test_local_pieces_and_from_local_carry_gradients(mesh, rank):
    local = ember.tensor(data(2, 3, seed=rank), requires_grad=True)
    d = DTensor.from_local(local, mesh, [Shard(0)])
    assert tuple(d.shape) == (4, 3) and d.to_local()._data is local._data  # same storage
    (d.full_tensor() * 2).sum().backward()
    close(local.grad, torch.full((2, 3), 2.0, dtype=torch.float64))
    uneven = DTensor.from_local(ember.zeros(3 - rank, 2), mesh, [Shard(0)], shape=(5, 2))
    assert tuple(uneven.shape) == (5, 2) and tuple(uneven.full_tensor().shape) == (5, 2)
    with pytest.raises(RuntimeError, match="local piece has shape"):
        DTensor.from_local(ember.zeros(2, 2), mesh, [Shard(0)], shape=(9, 2))


def test_from_local_run_check_and_deepcopy(mesh, rank):
    d = DTensor.from_local(ember.full((2,), float(rank)), mesh, [Replicate()], run_check=True)
    assert d.to_local().tolist() == [0.0, 0.0]  # rank 0's piece
    w = ember.nn.Parameter(distribute_tensor(ember.arange(6.0).reshape(3, 2), mesh, [Shard(0)]))
    c = copy.deepcopy(w)
    assert isinstance(c, DTensor) and isinstance(c, ember.nn.Parameter) and c.placements == w.placements
    assert c.requires_grad and c.to_local()._data is not w.to_local()._data
    assert c.full_tensor().tolist() == w.full_tensor().tolist()


def test_to_local_grad_placements(mesh, rank):
    d = distribute_tensor(ember.ones(4, 2, requires_grad=True), mesh, [Replicate()])
    # each rank's piece feeds a different loss: the gradient is Partial, summed on the way back
    (d.to_local(grad_placements=[Partial()]) * (rank + 1)).sum().backward()
    assert d.grad.full_tensor().tolist() == [[3.0, 3.0]] * 4


def test_factories(mesh, rank):
    z = dzeros(5, 2, device_mesh=mesh, placements=[Shard(0)], dtype=ember.float64)
    assert tuple(z.shape) == (5, 2) and tuple(z.to_local().shape) == ((3, 2) if rank == 0 else (2, 2))
    assert z.dtype == ember.float64 and z.full_tensor().tolist() == [[0.0, 0.0]] * 5
    o = dones((3, 4), device_mesh=mesh, placements=[Shard(1)], requires_grad=True)
    assert o.requires_grad and o.is_leaf and o.to_local().tolist() == [[1.0, 1.0]] * 3
    r = drandn(6, 3, device_mesh=mesh, placements=[Shard(0)])
    gathered = r.full_tensor()
    rows = gathered.numpy()[3 * rank: 3 * rank + 3]
    np.testing.assert_array_equal(r.to_local().numpy(), rows)
    with mesh:
        assert ember.distributed.tensor.full((2,), 7.0).full_tensor().tolist() == [7.0, 7.0]


def test_functions_with_a_rule_dispatch_on_dtensors(mesh):
    x, w, b = data(3, 4), data(5, 4, seed=1), data(5, seed=2)
    (xe, xt), (we, wt), (be, bt) = leaf(x), leaf(w), leaf(b)
    dx = distribute_tensor(xe, mesh, [Shard(0)])
    dw, db = distribute_tensor(we, mesh, [Shard(0)]), distribute_tensor(be, mesh, [Shard(0)])
    y = ember.nn.functional.linear(ember.tanh(dx), dw, db)
    assert isinstance(y, DTensor) and y.placements == (Shard(0),)  # dw is gathered: rows of x stay split
    z = ember.nn.functional.relu(y) @ dw
    ref = torch.matmul(torch.nn.functional.linear(xt.tanh(), wt, bt).relu(), wt)
    close(z.full_tensor(), ref)
    z.full_tensor().sum().backward()
    ref.sum().backward()
    for d, t in ((dx, xt), (dw, wt), (db, bt)):
        close(d.grad.full_tensor(), t.grad)


def test_unsupported_ops_raise_instead_of_computing_on_the_piece(mesh):
    d = distribute_tensor(ember.ones(4, 2), mesh, [Shard(0)])
    for call in (lambda: d.view(8), lambda: d[0], lambda: ember.softmax(d, 0), lambda: d.reshape(2, 4),
                 lambda: d.max(), lambda: d ** 2, lambda: ember.nn.functional.gelu(d), lambda: np.asarray(d),
                 lambda: ember.cat([d, d])):
        with pytest.raises(NotImplementedError, match=r"no sharding rule for .*Shard\(dim=0\)"):
            call()
    with pytest.raises(RuntimeError, match="mixed torch.Tensor and DTensor"):
        d + ember.ones(4, 2)
    assert (d * ember.tensor(2.0)).full_tensor().tolist() == [[2.0, 2.0]] * 4  # a 0-d tensor is a scalar
    assert len(d) == 4 and d.size(0) == 4 and d.ndim == 2 and d.numel() == 8


def test_dtensor_parameters_train_with_an_optimizer(mesh, rank):
    w0 = data(4, 3)
    w = ember.nn.Parameter(distribute_tensor(ember.tensor(w0), mesh, [Shard(0)]))
    assert isinstance(w, DTensor) and isinstance(w, ember.nn.Parameter) and w.placements == (Shard(0),)
    wt = torch.nn.Parameter(torch.tensor(w0))
    opt, opt_t = ember.optim.Adam([w], lr=0.1), torch.optim.Adam([wt], lr=0.1)
    x = data(2, 4, seed=5)
    for _ in range(3):
        opt.zero_grad()
        (ember.tensor(x) @ w.full_tensor()).square().sum().backward()
        opt.step()
        opt_t.zero_grad()
        (torch.tensor(x) @ wt).square().sum().backward()
        opt_t.step()
    close(w.full_tensor(), wt, tol=1e-10)
