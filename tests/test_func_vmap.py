"""``torch.func.vmap`` against PyTorch's: each op family's values, in_dims/out_dims, nesting, chunking, randomness,
errors; ops with a batching rule must run once on the batch (no per-example fallback warning)."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.func import vmap


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [s if isinstance(s, np.ndarray) else rng.standard_normal(s).astype(np.float32) for s in shapes]


def _np(t):
    return t.detach().numpy() if isinstance(t, (torch.Tensor, ember.Tensor)) else np.asarray(t)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    if isinstance(out, dict):
        return [x for o in out.values() for x in _flat(o)]
    return [out]


def _torch_loop(f, in_dims, out_dims, **_):
    """vmap by a Python loop over the examples (in_dims 0 / None, out_dims 0)."""
    def looped(*args):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        outs = [f(*(a if d is None else a.select(d, i) for a, d in zip(args, dims))) for i in range(size)]
        return torch.stack(outs)
    return looped


def check(fn, shapes, in_dims=0, out_dims=0, rtol=1e-5, atol=1e-6, fallback=False, against_loop=False,
          **vmap_kwargs):
    """``vmap(fn(m, F))`` on the same inputs under PyTorch and ember: equal outputs; without ``fallback`` the ops
    must all have batching rules (the slow path warns). ``against_loop``: PyTorch's side loops over the examples."""
    arrays = _arrays(shapes)
    results = []
    torch_vmap = _torch_loop if against_loop else torch.func.vmap
    for m, F, vm in ((torch, torch.nn.functional, torch_vmap), (ember, ember.nn.functional, vmap)):
        inputs = [m.tensor(a) for a in arrays]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(_flat(vm(fn(m, F), in_dims, out_dims, **vmap_kwargs)(*inputs)))
        slow = [w for w in caught if "There is a performance drop" in str(w.message)]
        others = [w for w in caught if w not in slow]
        assert not others, [str(w.message) for w in others]
        if m is ember:  # the slow path warns exactly when the case expects it to be taken
            assert bool(slow) == fallback, [str(w.message) for w in slow]
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("expr", [
    lambda m, F: lambda x, y: x + y * 2 - x / (y.abs() + 1),
    lambda m, F: lambda x, y: m.maximum(x, y) + m.where(x > y, x, y) ** 2,
    lambda m, F: lambda x, y: m.exp(x).log1p() + m.tanh(y) + x.sigmoid() * y.clamp(-0.5, 0.5),
    lambda m, F: lambda x, y: F.relu(x) + F.gelu(y) + F.silu(x) + F.leaky_relu(y, 0.1) + F.softplus(x),
    lambda m, F: lambda x, y: (x == y).float() + (x < 0).to(x.dtype) + x.masked_fill(y > 0, 3.0),
    lambda m, F: lambda x, y: 2 - x + 1 / (y * y + 1) - (-x),
    lambda m, F: lambda x, y: m.atan2(x, y) + m.lerp(x, y, 0.3) + m.addcmul(x, x, y, value=0.5),
])
def test_elementwise(expr):
    check(expr, [(4, 3, 5), (4, 3, 5)])


def test_elementwise_broadcasting_with_unbatched_and_lower_rank_inputs():
    check(lambda m, F: lambda x, y: x * y + y, [(4, 3, 5), (5,)], in_dims=(0, None))
    check(lambda m, F: lambda x, y: x * y + x, [(4, 5), (3, 5)], in_dims=(0, None))
    check(lambda m, F: lambda x, y: x - y, [(4,), (4, 2, 3)], in_dims=(0, 0))
    check(lambda m, F: lambda x, y: x + y, [(3, 4), (4, 2, 3)], in_dims=(1, 0))


def test_in_place_ops_on_batched_tensors():
    def fn(m, F):
        def f(x, y):
            z = x.clone()
            z.add_(y)
            z *= 2
            z.clamp_(min=-1.0)
            return z
        return f
    check(fn, [(4, 3), (4, 3)])
    check(fn, [(4, 3), (3,)], in_dims=(0, None))


def test_in_place_on_unbatched_self_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match="is not possible because there exists a Tensor `other`"):
        vmap(lambda x, y: ember.zeros(3).mul_(x))(ember.ones(2, 3), ember.ones(2))


# ----------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("expr", [
    lambda m, F: lambda x: x.sum(),
    lambda m, F: lambda x: x.sum(0),
    lambda m, F: lambda x: x.sum(-1, keepdim=True),
    lambda m, F: lambda x: x.sum((0, 2)),
    lambda m, F: lambda x: m.sum(x, dim=1),
    lambda m, F: lambda x: x.mean(dim=-2),
    lambda m, F: lambda x: x.mean(),
    lambda m, F: lambda x: x.max(),
    lambda m, F: lambda x: x.max(dim=1),
    lambda m, F: lambda x: x.min(-1, keepdim=True),
    lambda m, F: lambda x: x.amax((0, 1)),
    lambda m, F: lambda x: x.argmax(),
    lambda m, F: lambda x: x.argmax(1),
    lambda m, F: lambda x: x.prod(1),
    lambda m, F: lambda x: x.prod(),
    lambda m, F: lambda x: x.var(1) + x.std(0, keepdim=True).sum(),
    lambda m, F: lambda x: x.var(),
    lambda m, F: lambda x: x.norm(),
    lambda m, F: lambda x: x.norm(dim=-1),
    lambda m, F: lambda x: m.logsumexp(x, 1),
    lambda m, F: lambda x: x.softmax(-1) + x.log_softmax(0),
    lambda m, F: lambda x: F.softmax(x, dim=1) + F.log_softmax(x, dim=2),
    lambda m, F: lambda x: x.cumsum(1) + x.cumprod(-1),
    lambda m, F: lambda x: x.sort(1).values + x.sort(-1, descending=True).indices,
    lambda m, F: lambda x: x.topk(2, dim=0).values,
    lambda m, F: lambda x: (x > 0).any(1).float() + (x > 0).all().float(),
    lambda m, F: lambda x: x.median(),
    lambda m, F: lambda x: x.flip(0) + x.roll(1, 2) + x.roll(2),
])
def test_reductions_and_ops_along_a_dim(expr):
    check(expr, [(4, 3, 5, 2)])


def test_dim_out_of_range_is_pytorchs_index_error():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        vmap(lambda x: x.sum(2))(ember.ones(4, 3, 5))


# ----------------------------------------------------------------------------- shapes and indexing
@pytest.mark.parametrize("expr", [
    lambda m, F: lambda x: x.view(6, 5),
    lambda m, F: lambda x: x.reshape(-1),
    lambda m, F: lambda x: m.reshape(x, (5, -1)),
    lambda m, F: lambda x: x.permute(2, 0, 1),
    lambda m, F: lambda x: x.transpose(0, 2) + 0,
    lambda m, F: lambda x: x.unsqueeze(0).unsqueeze(-1),
    lambda m, F: lambda x: x.unsqueeze(1).squeeze(),
    lambda m, F: lambda x: x.unsqueeze(1).squeeze(1),
    lambda m, F: lambda x: x.flatten(),
    lambda m, F: lambda x: x.flatten(1),
    lambda m, F: lambda x: x.unflatten(0, (3, 1)),
    lambda m, F: lambda x: x[0],
    lambda m, F: lambda x: x[:, 1:4:2],
    lambda m, F: lambda x: x[..., 0],
    lambda m, F: lambda x: x[None, 1, :, None],
    lambda m, F: lambda x: x[[0, 2]],
    lambda m, F: lambda x: x[[0, 2], :, [1, 0]],
    lambda m, F: lambda x: x.expand(2, 3, 2, 5),
    lambda m, F: lambda x: x.repeat(2, 1, 1),
    lambda m, F: lambda x: m.cat([x, x * 2], dim=1),
    lambda m, F: lambda x: m.stack([x, x + 1], dim=-1),
    lambda m, F: lambda x: m.stack([x, x + 1]),
    lambda m, F: lambda x: x.chunk(2, dim=2)[1],
    lambda m, F: lambda x: x.split(1, dim=0)[2],
    lambda m, F: lambda x: x.unbind(1)[0],
    lambda m, F: lambda x: x.mT + x.transpose(-1, -2),
    lambda m, F: lambda x: x.narrow(2, 1, 3),
    lambda m, F: lambda x: x.unfold(2, 2, 1).sum(-1) + x.unfold(-1, 3, 2)[..., :1, :].sum(),
    lambda m, F: lambda x: x.unfold(0, 2, 2) * x.unfold(dimension=0, size=2, step=2),
    lambda m, F: lambda x: x[0, 0].unfold(0, 5, 5) + x.sum().unfold(0, 1, 1),
    lambda m, F: lambda x: (x.sum().unfold(0, 0, 1), x.sum().unfold(0, 0, 2), x.sum().unfold(0, 1, 3)),
    lambda m, F: lambda x: x.movedim(0, -1),
    lambda m, F: lambda x: x.t() if x.ndim == 2 else x[0].t(),
    lambda m, F: lambda x: x.contiguous().clone().detach(),
    lambda m, F: lambda x: m.gather(x, 1, (x.abs() * 2).long().clamp(max=1)) + x.gather(-1, x.argsort(-1)),
    lambda m, F: lambda x: x.index_select(-1, m.tensor([4, 0, 0])),
    lambda m, F: lambda x: x.new_zeros(2, 3) + x.new_ones(3) + x.sum(),
    lambda m, F: lambda x: x.type(m.float64),
])
def test_shape_ops_and_indexing(expr):
    check(expr, [(4, 3, 2, 5)])


def test_cat_with_unbatched_tensor_and_setitem():
    check(lambda m, F: lambda x, y: m.cat([x, y]), [(4, 3, 2), (5, 2)], in_dims=(0, None))

    def fn(m, F):
        def f(x, y):
            z = x.clone()
            z[1] = y
            z[:, 0] = 0.0
            return z
        return f
    check(fn, [(4, 3, 2), (4, 2)])
    check(fn, [(4, 3, 2), (2,)], in_dims=(0, None))


# ----------------------------------------------------------------------------- matrix products
@pytest.mark.parametrize("shapes,in_dims", [
    ([(4, 3, 5), (5, 2)], (0, None)),
    ([(4, 5), (5, 2)], (0, None)),
    ([(4, 5), (4, 5, 2)], 0),
    ([(3, 5), (4, 5)], (None, 0)),
    ([(4, 2, 3, 5), (4, 5, 2)], 0),
    ([(4, 5), (4, 5)], 0),
    ([(4, 3, 5), (6, 5, 2)], (0, None)),
    ([(2, 4, 5), (5,)], (1, None)),
])
def test_matmul(shapes, in_dims):
    check(lambda m, F: lambda a, b: a @ b + m.matmul(a, b), shapes, in_dims=in_dims, rtol=1e-4, atol=1e-5)


def test_mm_bmm_mv_dot_outer_einsum():
    check(lambda m, F: lambda a, b: m.mm(a, b), [(4, 3, 5), (4, 5, 2)], rtol=1e-5)
    check(lambda m, F: lambda a, b: m.mv(a, b[:, 0]), [(4, 3, 5), (4, 5, 2)], rtol=1e-5)
    check(lambda m, F: lambda a, b: m.dot(a, b), [(4, 5), (4, 5)], rtol=1e-5)
    check(lambda m, F: lambda a, b: m.outer(a, b), [(4, 5), (3,)], in_dims=(0, None))
    check(lambda m, F: lambda a, b: m.einsum("ij,jk->ik", a, b), [(4, 3, 5), (5, 2)], in_dims=(0, None), rtol=1e-5)
    check(lambda m, F: lambda a, b: m.einsum("ij,ij", a, b), [(4, 3, 5), (4, 3, 5)], rtol=1e-5)
    check(lambda m, F: lambda a, b: m.einsum("...i,i->...", a, b), [(4, 3, 5), (4, 5)], rtol=1e-5)


# ----------------------------------------------------------------------------- nn.functional
def test_linear_shared_and_per_example_weights():
    check(lambda m, F: lambda x, w, b: F.linear(x, w, b), [(4, 3, 5), (2, 5), (2,)], in_dims=(0, None, None))
    check(lambda m, F: lambda x, w, b: F.linear(x, w, b), [(4, 5), (4, 2, 5), (4, 2)], rtol=1e-5)
    check(lambda m, F: lambda x, w, b: F.linear(x, w, b), [(3, 5), (4, 2, 5), (2,)], in_dims=(None, 0, None))
    check(lambda m, F: lambda x, w, b: F.linear(x, w, b), [(4, 3, 5), (2, 5), (4, 2)], in_dims=(0, None, 0))


@pytest.mark.parametrize("x_shape,w_shape,in_dims,kw", [
    ((4, 2, 3, 8, 8), (5, 3, 3, 3), (0, None), {}),
    ((4, 3, 8, 8), (5, 3, 3, 3), (0, None), {"padding": 1, "stride": 2}),
    ((4, 2, 3, 8, 8), (4, 5, 3, 3, 3), (0, 0), {"padding": 1}),
    ((2, 3, 8, 8), (4, 5, 3, 3, 3), (None, 0), {}),
    ((4, 3, 8, 8), (4, 6, 1, 3, 3), (0, 0), {"groups": 3}),
])
def test_conv2d_shared_and_per_example_weights(x_shape, w_shape, in_dims, kw):
    check(lambda m, F: lambda x, w: F.conv2d(x, w, **kw), [x_shape, w_shape], in_dims=in_dims, rtol=1e-4, atol=1e-5)


def test_conv_layers_pooling_and_norms():
    def fn(m, F):
        def f(x, w):
            y = F.conv1d(x, w, padding=1)
            y = F.max_pool1d(y, 2) + F.avg_pool1d(y, 2)
            y = F.layer_norm(y, y.shape[-1:])
            y = F.group_norm(y, 1)
            return F.batch_norm(y, None, None, training=True)
        return f
    check(fn, [(4, 2, 3, 8), (5, 3, 3)], in_dims=(0, None), rtol=1e-4, atol=1e-5)
    check(lambda m, F: lambda x: F.adaptive_avg_pool2d(F.max_pool2d(x, 2), 1), [(4, 3, 8, 8)])
    check(lambda m, F: lambda x, w, b: F.layer_norm(x, (5,), w, b), [(4, 3, 5), (4, 5), (5,)], in_dims=(0, 0, None),
          rtol=1e-5)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32) * 2
    check(lambda m, F: lambda x: F.batch_norm(x, m.tensor(rm), m.tensor(rv), training=False), [(4, 2, 3, 5)],
          rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(reduction):
    logits = (4, 6, 5)
    target = np.random.default_rng(3).integers(0, 5, (4, 6))
    weight = np.abs(_arrays([(5,)], seed=9)[0]) + 0.5
    check(lambda m, F: lambda x, t: F.cross_entropy(x, t.long(), reduction=reduction), [logits, target], rtol=1e-5)
    check(lambda m, F: lambda x, t: F.cross_entropy(x, t.long(), m.tensor(weight), reduction=reduction,
                                                    ignore_index=2, label_smoothing=0.1), [logits, target],
          rtol=1e-5, against_loop=True)  # (PyTorch's vmap cannot batch this one: its rule uses masked_select)
    check(lambda m, F: lambda x, t: F.cross_entropy(x, t.long(), reduction=reduction), [(4, 5), target[:, 0]],
          rtol=1e-5)
    check(lambda m, F: lambda x, t: F.nll_loss(F.log_softmax(x, 1), t.long(), m.tensor(weight), reduction=reduction),
          [logits, target], rtol=1e-5)
    check(lambda m, F: lambda x, y: F.mse_loss(x, y, reduction=reduction) + 0 * F.l1_loss(x, y, reduction=reduction),
          [(4, 3, 2), (4, 3, 2)], rtol=1e-5)
    check(lambda m, F: lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction=reduction),
          [(4, 3, 2), (3, 2)], in_dims=(0, None), rtol=1e-5)
    check(lambda m, F: lambda x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.5), [(4, 7), (4, 7)],
          rtol=1e-5)


def test_modules_inside_vmap():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(4 * 6 * 6, 5), torch.nn.LayerNorm(5), torch.nn.Dropout(0.5))
    enet = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Flatten(),
                               ember.nn.Linear(4 * 6 * 6, 5), ember.nn.LayerNorm(5), ember.nn.Dropout(0.5))
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    tnet.eval(), enet.eval()
    x = _arrays([(4, 2, 3, 8, 8)])[0]
    expected = torch.func.vmap(tnet)(torch.tensor(x))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        got = vmap(enet)(ember.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- vmap's own arguments
def test_in_dims_and_out_dims_pytrees():
    def fn(m, F):
        def f(d, pair, scale):
            return {"s": d["a"] * scale + pair[0].sum(), "t": (pair[1] * 2, d["b"])}
        return f

    arrays = _arrays([(3, 4), (4, 3), (2, 4), (5, 4)])
    outs = []
    for m, vm in ((torch, torch.func.vmap), (ember, vmap)):
        a, b, p0, p1 = [m.tensor(x) for x in arrays]
        f = vm(fn(m, None), in_dims=({"a": 1, "b": None}, [1, 1], None), out_dims={"s": 1, "t": (0, None)})
        outs.append(_flat(f({"a": a, "b": b}, [p0, p1], 2.0)))
    for a, b in zip(*outs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6)
    check(lambda m, F: lambda x: (x, x.sum()), [(3, 4)], in_dims=-1, out_dims=(1, -1))
    check(lambda m, F: lambda x, y: x * 0 + y, [(3, 4), (4,)], in_dims=(0, None))  # unbatched output expanded


def test_nested_vmap_each_level_its_own_batch_dim():
    check(lambda m, F: lambda x: torch.func.vmap(lambda r: r.sum() * r)(x) if m is torch else
          vmap(lambda r: r.sum() * r)(x), [(2, 3, 4)])

    def outer(m, F):
        vm = torch.func.vmap if m is torch else vmap

        def f(x, y):
            return vm(lambda a, b: a @ b + a.sum(), in_dims=(None, 0))(x, y)
        return f
    check(outer, [(2, 3, 4), (5, 2, 4, 2)], in_dims=(0, 1), rtol=1e-5)
    check(lambda m, F: lambda x: (torch.func.vmap if m is torch else vmap)(
        (torch.func.vmap if m is torch else vmap)(lambda r: r.max()))(x), [(2, 3, 4)])


def test_chunk_size_gives_the_same_result():
    check(lambda m, F: lambda x, y: (x @ y, x.sum()), [(7, 3, 4), (4, 2)], in_dims=(0, None), chunk_size=3,
          rtol=1e-5)
    check(lambda m, F: lambda x: x * 2, [(7, 3)], chunk_size=1, out_dims=1)


def test_errors_as_pytorch():
    ones = ember.ones(2, 3)

    def raises_like(call_ember, call_torch, error):
        with pytest.raises(error) as got:
            call_ember()
        with pytest.raises(error) as want:
            call_torch()
        assert str(got.value) == str(want.value).replace("torch", "ember")

    def f(x, y):
        return x + y

    t_ones = torch.ones(2, 3)
    raises_like(lambda: vmap(f)(ones, ember.ones(3, 3)), lambda: torch.func.vmap(f)(t_ones, torch.ones(3, 3)),
                ValueError)
    raises_like(lambda: vmap(f, in_dims=(0, 2))(ones, ones), lambda: torch.func.vmap(f, in_dims=(0, 2))(t_ones, t_ones),
                ValueError)
    raises_like(lambda: vmap(f, in_dims=(0, 0))(ones, 1.0),
                lambda: torch.func.vmap(f, in_dims=(0, 0))(t_ones, 1.0), ValueError)
    raises_like(lambda: vmap(f, in_dims=(0,))(ones, ones), lambda: torch.func.vmap(f, in_dims=(0,))(t_ones, t_ones),
                ValueError)
    raises_like(lambda: vmap(lambda x: 3)(ones), lambda: torch.func.vmap(lambda x: 3)(t_ones), ValueError)
    raises_like(lambda: vmap(f, in_dims=None)(ones, ones), lambda: torch.func.vmap(f, in_dims=None)(t_ones, t_ones),
                ValueError)
    raises_like(lambda: vmap(f)(), lambda: torch.func.vmap(f)(), ValueError)
    raises_like(lambda: vmap(f, in_dims=[0, 0])(ones, ones),
                lambda: torch.func.vmap(f, in_dims=[0, 0])(t_ones, t_ones), ValueError)
    raises_like(lambda: vmap(lambda x: x, out_dims=None)(ones),
                lambda: torch.func.vmap(lambda x: x, out_dims=None)(t_ones), ValueError)
    raises_like(lambda: vmap(lambda x: x, out_dims="a")(ones),
                lambda: torch.func.vmap(lambda x: x, out_dims="a")(t_ones), ValueError)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(f, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(f, chunk_size=0)
    with pytest.raises(RuntimeError, match="calling .item"):
        vmap(lambda x: x.sum().item())(ones)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda x: x if x.sum() > 0 else -x)(ones)


# ----------------------------------------------------------------------------- randomness
@pytest.mark.parametrize("op", [
    lambda x: ember.nn.functional.dropout(x, 0.5),
    lambda x: ember.rand(3),
    lambda x: x + ember.randn_like(x),
    lambda x: ember.bernoulli(x.sigmoid()),
    lambda x: x.clone().uniform_(),
    lambda x: ember.nn.Dropout(0.2)(x),
])
def test_random_ops_raise_pytorchs_error_by_default(op):
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        vmap(op)(ember.ones(4, 3))


def test_randomness_different_and_same():
    ember.manual_seed(0)  # one fixed draw: the verdict must not depend on what ran before
    x = ember.ones(6, 1000)
    different = vmap(lambda r: ember.nn.functional.dropout(r, 0.5), randomness="different")(x)
    assert not all(np.array_equal(different[0].numpy(), different[i].numpy()) for i in range(1, 6))
    assert abs(float((different == 0).float().mean()) - 0.5) < 0.05
    same = vmap(lambda r: ember.nn.functional.dropout(r, 0.5), randomness="same")(x)
    assert all(np.array_equal(same[0].numpy(), same[i].numpy()) for i in range(1, 6))
    drawn = vmap(lambda r: r + ember.rand(1000), randomness="different")(x)
    assert not np.array_equal(drawn[0].numpy(), drawn[1].numpy())
    shared = vmap(lambda r: r + ember.rand(1000), randomness="same")(x)
    assert np.array_equal(shared[0].numpy(), shared[5].numpy())
    chunked = vmap(lambda r: r + ember.randn_like(r), randomness="same", chunk_size=2)(x)
    assert np.array_equal(chunked[0].numpy(), chunked[5].numpy())
    # dropout in eval mode / p=0 draws nothing: fine under 'error'
    vmap(lambda r: ember.nn.functional.dropout(r, 0.5, training=False))(x)


# ----------------------------------------------------------------------------- fallback
def test_ops_without_a_rule_fall_back_with_pytorchs_warning():
    check(lambda m, F: lambda x: m.diag(x[0]), [(3, 2, 2)], fallback=True)
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented"):
        out = vmap(lambda x: x.trace())(ember.tensor(np.arange(18.0).reshape(2, 3, 3)))
    np.testing.assert_allclose(out.numpy(), [12.0, 39.0])


def test_model_ensembling_with_stack_module_state_as_pytorchs_tutorial():
    def build(nn):
        return [nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 5))
                for _ in range(4)]
    torch.manual_seed(0)
    tmodels, emodels = build(torch.nn), build(ember.nn)
    for t, e in zip(tmodels, emodels):
        t.eval(), e.eval()
        t[1].running_mean.uniform_(), t[1].running_var.uniform_(0.5, 2)
        e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = _arrays([(8, 1, 6, 6)])[0]
    results = []
    for m, models, func in ((torch, tmodels, torch.func), (ember, emodels, ember.func)):
        params, buffers = func.stack_module_state(models)
        base = models[0]

        def call(p, b, data, base=base, func=func):
            return func.functional_call(base, (p, b), (data,))
        with warnings.catch_warnings():
            if m is ember:
                warnings.filterwarnings("error", message="There is a performance drop")
            same = func.vmap(call, in_dims=(0, 0, None))(params, buffers, m.tensor(x))
            split = func.vmap(call)(params, buffers, m.tensor(x).reshape(4, 2, 1, 6, 6))
        results.append((same.detach().numpy(), split.detach().numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


_UNARY = ("abs neg exp expm1 log1p sqrt rsqrt square sin cos tan atan sinh cosh tanh asinh sigmoid relu erf erfc "
          "floor ceil round trunc frac sign reciprocal logit isnan isinf isfinite lgamma digamma "
          "angle logical_not").split()


@pytest.mark.parametrize("name", _UNARY)
def test_unary_functions_and_methods(name):
    data = np.abs(_arrays([(4, 3, 2)])[0]) * 0.4 + 0.1
    for in_dims in (0, 2):
        check(lambda m, F: lambda x: getattr(m, name)(x), [data], in_dims=in_dims)
        check(lambda m, F: lambda x: getattr(x, name)(), [data], in_dims=in_dims)


_BINARY = ("add sub mul div pow atan2 hypot maximum minimum fmax fmin logaddexp remainder fmod eq ne lt le "
           "gt ge logical_and logical_or logical_xor xlogy").split()


@pytest.mark.parametrize("name", _BINARY)
def test_binary_functions_with_every_batching(name):
    shapes = [np.abs(a) + 0.1 for a in _arrays([(4, 4, 4), (4, 4)])]
    for in_dims in ((0, 0), (0, None), (None, 0), (2, 1)):
        check(lambda m, F: lambda x, y: getattr(m, name)(x, y), shapes, in_dims=in_dims)


@pytest.mark.parametrize("name", ["relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "hardtanh", "hardsigmoid",
                                  "hardswish", "softplus", "softsign", "tanhshrink", "hardshrink", "softshrink",
                                  "logsigmoid", "sigmoid", "tanh"])
def test_activations(name):
    check(lambda m, F: lambda x: getattr(F, name)(x), [(4, 3, 5)], rtol=1e-5)


def test_code_reading_a_batched_array_makes_vmap_run_per_example_with_the_warning():
    x = ember.tensor(_arrays([(3, 4)])[0])
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                         "batching rule for ember._tensor.numel"):
        out = vmap(lambda r: r * ember.Tensor.numel(r) + r.sum())(x)  # Tensor's own numel reads the array
    np.testing.assert_allclose(out.numpy(), x.numpy() * 4 + x.numpy().sum(1, keepdims=True), rtol=1e-6)


def test_vmap_state_is_per_thread():
    import threading

    inside, done, seen = threading.Event(), threading.Event(), []

    def f(r):
        inside.set()
        done.wait(10)
        return r * 2

    def other():
        inside.wait(10)
        seen.append(ember.rand(2).shape)  # not in this thread's vmap: no randomness error
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    out = vmap(f)(ember.ones(3, 2))
    thread.join()
    assert seen == [ember.Size([2])] and out.shape == (3, 2)


def test_keyword_arguments_are_passed_unbatched():
    out = vmap(lambda x, scale: x * scale)(ember.ones(3, 4), scale=ember.tensor(2.0))
    np.testing.assert_array_equal(out.numpy(), np.full((3, 4), 2.0, np.float32))


def test_attention_embedding_interpolate_pad():
    check(lambda m, F: lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          [(3, 2, 5, 4), (3, 2, 5, 4), (2, 5, 4)], in_dims=(0, 0, None), rtol=1e-5)
    idx = np.random.default_rng(4).integers(0, 7, (3, 5))
    check(lambda m, F: lambda i, w: F.embedding(i.long(), w), [idx, (7, 4)], in_dims=(0, None))
    check(lambda m, F: lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [(3, 2, 4, 5, 5)], rtol=1e-5)
    check(lambda m, F: lambda x: F.pad(x, (1, 2)) + F.pad(x, (1, 2), value=3.0), [(3, 4, 5)])
    check(lambda m, F: lambda x: F.pad(x, (1, 1, 2, 0), mode="reflect"), [(3, 2, 4, 5)])


def test_randomness_in_a_function_run_per_example():
    def f(r):
        return r * ember.Tensor.numel(r) + ember.rand(3)  # numel reads the array: the whole function per example
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="randomness error mode"):
            vmap(f)(ember.ones(4, 3))
        same = vmap(f, randomness="same")(ember.ones(4, 3))
        different = vmap(f, randomness="different")(ember.ones(4, 3))
    assert np.array_equal(same[0].numpy(), same[3].numpy())
    assert not np.array_equal(different[0].numpy(), different[3].numpy())


def test_nested_randomness_each_level_its_own():
    x = ember.ones(2, 3, 500)

    def inner(mode):
        return vmap(lambda r: r + ember.rand(500), randomness=mode)

    out = vmap(inner("different"), randomness="different")(x)
    flat = out.reshape(6, 500).numpy()
    assert len({row.tobytes() for row in flat}) == 6
    out = vmap(inner("same"), randomness="different")(x)  # the same draw across the inner batch only
    assert np.array_equal(out[0, 0].numpy(), out[0, 2].numpy()) and not np.array_equal(out[0, 0].numpy(),
                                                                                        out[1, 0].numpy())
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(inner("different"))(x)
    drop = vmap(vmap(lambda r: ember.nn.functional.dropout(r, 0.5), randomness="different"),
                randomness="different")(x)
    assert len({row.tobytes() for row in drop.reshape(6, 500).numpy()}) == 6


def test_nested_vmap_through_functions_without_fallback():
    def fn(m, F):
        vm = torch.func.vmap if m is torch else vmap

        def f(w, x):  # outer: one weight per model; inner: one sample per call
            def per_sample(xi):
                h = F.relu(F.linear(xi, w))
                return F.cross_entropy(h.unsqueeze(0), m.tensor([1])) + m.sum(m.matmul(h, w)) + F.softmax(h, 0)[0]
            return vm(per_sample)(x)
        return f
    check(fn, [(3, 4, 5), (3, 6, 5)], rtol=1e-5)

    def conv(m, F):
        vm = torch.func.vmap if m is torch else vmap
        return lambda w, x: vm(lambda xi: F.conv2d(xi, w, padding=1).sum((1, 2)))(x)
    check(conv, [(2, 4, 3, 3, 3), (2, 5, 3, 6, 6)], rtol=1e-4, atol=1e-5)
