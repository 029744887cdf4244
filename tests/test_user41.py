"""Found by running small training programs under PyTorch and ember side by side: each checked against torch."""

import numpy as np
import pytest
import torch
from oracle import assert_close, node_names

import ember

RNG = np.random.default_rng(41)
X8 = RNG.standard_normal((2, 8, 3, 4)).astype(np.float32)


def _shuffle_input(m, layout):
    x = m.tensor(X8)
    return {"contiguous": lambda: x, "channels_last": lambda: x.to(memory_format=m.channels_last),
            "sliced": lambda: x[:, :, :, :2], "3d": lambda: x[0], "5d": lambda: x.reshape(1, 2, 8, 3, 4)}[layout]()


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "sliced", "3d", "5d"])
@pytest.mark.parametrize("op,factor", [("pixel_shuffle", 2), ("pixel_shuffle", 1), ("pixel_unshuffle", 1)])
def test_pixel_shuffle_is_one_new_tensor_laid_out_as_pytorch(layout, op, factor):
    # A factor of 1 gave a view of the input (an in-place write reached it) and a channels-last input a row-major
    # result; the node's next function was ember's inner permute, not the input's node.
    results = []
    for m in (ember, torch):
        x = _shuffle_input(m, layout).detach().clone(memory_format=m.preserve_format).requires_grad_()
        x_before = x.detach().clone()
        y = getattr(m.nn.functional, op)(x * 2, factor)
        names = node_names(y.grad_fn)
        y.detach()[(0,) * y.ndim] = 100.0  # a new tensor: the input is untouched
        (y * m.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        results.append((y, x.grad, names, y.stride(), m.equal(x.detach(), x_before)))
    (ey, eg, en, es, eu), (ty, tg, tn, ts, tu) = results
    assert_close(ey, ty)
    assert_close(eg, tg)
    assert (en, es, eu) == (tn, ts, tu)


def test_pixel_unshuffle_channels_last():
    for r in (1, 2):
        e = ember.nn.functional.pixel_unshuffle(ember.tensor(X8[:1, :2, :2]).to(memory_format=ember.channels_last), r)
        t = torch.nn.functional.pixel_unshuffle(torch.tensor(X8[:1, :2, :2]).to(memory_format=torch.channels_last), r)
        assert_close(e, t)
        assert e.stride() == t.stride()


def test_pixel_shuffle_double_backward():
    out = []
    for m in (ember, torch):
        x = m.tensor(X8, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.pixel_shuffle(x, 2)
        (g,) = m.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        out.append(gg)
    assert_close(*out)


A45 = RNG.standard_normal((4, 5))
_SELECTING = {
    "sort": lambda a: a.sort(1)[0], "sort_stable": lambda a: a.sort(dim=1, stable=True)[0],
    "sort_stable_false": lambda a: a.sort(stable=False)[0], "sort_stable_none": lambda a: a.sort(stable=None)[0],
    "sort_desc": lambda a: a.sort(0, True)[0], "msort": lambda a: a.msort(),
    "sort_transposed": lambda a: a.t().sort(1)[0], "topk": lambda a: a.topk(2)[0],
    "topk_transposed": lambda a: a.t().topk(1, 0)[0], "kthvalue": lambda a: a.kthvalue(2)[0],
    "kthvalue_keepdim": lambda a: a.kthvalue(3, 0, keepdim=True)[0], "median_dim": lambda a: a.median(1)[0],
    "nanmedian_dim": lambda a: a.nanmedian(0, keepdim=True)[0], "sort_0d": lambda a: a[0, 0].sort()[0],
    "topk_0d": lambda a: a[1, 2].topk(1)[0], "kthvalue_0d": lambda a: a[0, 1].kthvalue(1)[0],
    "median_0d": lambda a: a[2, 2].median(0)[0],
}


@pytest.mark.parametrize("case", list(_SELECTING))
def test_sort_topk_kthvalue_median_are_one_node(case):
    # sort and topk read as GatherBackward0, kthvalue and median had ember's gather (and squeeze) below their node
    out = []
    for m in (ember, torch):
        a = m.tensor(A45, requires_grad=True)
        y = _SELECTING[case](a)
        names = node_names(y.grad_fn, depth=1)
        (g,) = m.autograd.grad((y * y).sum(), a, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), a)
        out.append((y, g, gg, names, y.stride()))
    (ey, eg, egg, en, es), (ty, tg, tgg, tn, ts) = out
    assert_close(ey, ty)
    assert_close(eg, tg)
    assert_close(egg, tgg)
    assert (en, es) == (tn, ts)


def test_sort_saves_no_input():
    # PyTorch's sort/topk/kthvalue save the indices, not the input: changing it in place before backward is fine
    for m in (ember, torch):
        a = m.tensor(A45, requires_grad=True)
        b = a * 1
        ys = [b.sort(1)[0], b.topk(2)[0], b.kthvalue(2)[0], b.median(1)[0]]
        b.mul_(2)
        sum(y.sum() for y in ys).backward()
        assert a.grad.sum().item() == pytest.approx(20 + 8 + 4 + 4)


X57 = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)
_AREA = {
    "one": lambda m, x: m.nn.functional.interpolate(x, size=1, mode="area"),
    "three_by_two": lambda m, x: m.nn.functional.interpolate(x, size=(3, 2), mode="area"),
    "up": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="area"),
    "channels_last": lambda m, x: m.nn.functional.interpolate(x.contiguous(memory_format=m.channels_last),
                                                              size=(2, 3), mode="area"),
    "1d": lambda m, x: m.nn.functional.interpolate(x[0], size=2, mode="area"),
    "1d_one": lambda m, x: m.nn.functional.interpolate(x[0], size=1, mode="area"),
    "3d_one": lambda m, x: m.nn.functional.interpolate(x[None], size=1, mode="area"),
    "float64": lambda m, x: m.nn.functional.interpolate(x.double(), scale_factor=0.5, mode="area"),
    "recompute": lambda m, x: m.nn.functional.interpolate(x, scale_factor=0.7, mode="area",
                                                          recompute_scale_factor=True),
}


@pytest.mark.parametrize("case", list(_AREA))
def test_interpolate_area_is_adaptive_avg_pool(case):
    # PyTorch's 'area' is adaptive_avg_pool{1,2,3}d: a mean (MeanBackward1) for an output of ones, a squeeze after a
    # 2-d pooling for 3-D input; ember named its own node AdaptiveAvgPool*DBackward0 in every case
    out = []
    for m in (ember, torch):
        x = m.tensor(X57, requires_grad=True)
        y = _AREA[case](m, x)
        (g,) = m.autograd.grad((y.double() ** 2).sum(), x)
        out.append((y, g, node_names(y.grad_fn, depth=3)))
    (ey, eg, en), (ty, tg, tn) = out
    assert_close(ey, ty)
    assert_close(eg, tg)
    assert en == tn


@pytest.mark.parametrize("case", ["long", "long_one", "empty_channels", "zero_size", "empty_batch", "zero_spatial"])
def test_interpolate_area_checks_as_adaptive_avg_pool(case):
    # ember refused integer and channel-less inputs with its interpolation check; PyTorch's pooling (or mean) decides
    def run(m):
        F = m.nn.functional
        return {"long": lambda: F.interpolate(m.ones(1, 1, 4, 4, dtype=m.long), size=2, mode="area"),
                "long_one": lambda: F.interpolate(m.ones(1, 1, 4, 4, dtype=m.long), size=1, mode="area"),
                "empty_channels": lambda: F.interpolate(m.ones(1, 0, 4, 4), size=1, mode="area"),
                "zero_size": lambda: F.interpolate(m.ones(1, 1, 4, 4), size=0, mode="area"),
                "empty_batch": lambda: F.interpolate(m.ones(0, 1, 4, 4), size=2, mode="area"),
                "zero_spatial": lambda: F.interpolate(m.ones(1, 1, 0, 4), size=2, mode="area")}[case]()
    try:
        expected = run(torch)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            run(ember)
        assert str(e).split(":")[0][:30] == str(got.value).split(":")[0][:30]
        return
    assert tuple(run(ember).shape) == tuple(expected.shape)


@pytest.mark.parametrize("nd,size", [(1, 2), (2, (2, 3)), (2, (3, 3)), (3, (1, 2, 2)), (3, (2, 3, 3))])
def test_adaptive_avg_pool_keeps_non_finite_values_in_their_bins(nd, size):
    # the averaging matrices' 0 * nan spread a NaN or inf of the input (or of the gradient) over every bin of its line
    a = np.arange(2 * 4 * 5, dtype=np.float32).reshape(1, 2, 4, 5)
    a[0, 0, 0, 0], a[0, 1, 3, 4] = np.nan, np.inf
    a = a[0] if nd == 1 else a[None] if nd == 3 else a
    out = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = getattr(m.nn.functional, f"adaptive_avg_pool{nd}d")(x, size)
        g = m.zeros(y.shape)
        g.view(-1)[0] = float("nan")
        (gx,) = m.autograd.grad(y, x, g)
        out.append((y.detach().numpy(), gx.numpy()))
    for e, t in zip(*out):
        np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
        np.testing.assert_allclose(np.nan_to_num(e), np.nan_to_num(t), rtol=1e-6)


def _shared_checkpoint(m):
    emb, lin = m.nn.Embedding(4, 3), m.nn.Linear(3, 4, bias=False)
    lin.weight = emb.weight  # tied, as a language model's embedding and output layer
    w = m.arange(12.0)
    return {"sd": m.nn.ModuleDict({"e": emb, "l": lin}).state_dict(), "w": w, "again": w, "tail": w[6:],
            "rows": w.view(3, 4)[:, 1], "expanded": m.ones(3)[:1].expand(2, 4), "flipped": w.flip(0)[:3],
            "alone": m.ones(2)}


def _sharing(r):
    w = r["w"]
    w.add_(100)  # in place: its views in the file see it
    return (r["sd"]["e.weight"].data_ptr() == r["sd"]["l.weight"].data_ptr(), r["w"] is r["again"],
            r["tail"].tolist(), r["rows"].tolist(), r["rows"].storage_offset(), r["rows"].stride(),
            r["expanded"].stride(), r["flipped"].tolist())


@pytest.mark.parametrize("saver,loader", [("ember", "ember"), ("ember", "torch"), ("torch", "ember")])
def test_save_keeps_shared_storage(tmp_path, saver, loader):
    # ember wrote each tensor as a storage of its own: tied weights and views loaded untied, a tensor saved twice
    # loaded as two
    expected = _sharing(torch.load(_saved(torch, tmp_path / "t.pt"), weights_only=True))
    load = ember.load if loader == "ember" else torch.load
    got = _sharing(load(_saved(ember if saver == "ember" else torch, tmp_path / "x.pt"), weights_only=True))
    assert got == expected


def _saved(m, path):
    m.save(_shared_checkpoint(m), path, **({"format": "torch"} if m is ember else {}))  # (as torch.save under compat)
    return path


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("size", [(5, 4), (13, 3), (2, 2)])
def test_interpolate_area_half_precision_rounds_as_pytorch(dtype, size):
    # ember's resampling rounded half-precision bins differently from PyTorch's pooling kernel (1 ulp, most elements)
    x = np.random.default_rng(1).standard_normal((2, 3, 13, 11)).astype(np.float32)
    e = ember.nn.functional.interpolate(ember.tensor(x).to(getattr(ember, dtype)), size=size, mode="area")
    t = torch.nn.functional.interpolate(torch.tensor(x).to(getattr(torch, dtype)), size=size, mode="area")
    assert e.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=0, atol={"float16": 0, "bfloat16": 1e-3}[dtype])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("call", ["area_3", "area_1", "area_1d", "area_3d", "pool2d_3", "pool1d_3", "mean"])
def test_area_and_adaptive_pool_second_derivative(dtype, call):
    # under create_graph in half precision the pooling's float32 averaging matrices met the half gradient (refused
    # product); a mean's gradient was an expanded view (strides 0) where PyTorch's is a tensor of its own
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 5)).astype(np.float32)
    calls = {"area_3": lambda F, t: F.interpolate(t, size=3, mode="area"),
             "area_1": lambda F, t: F.interpolate(t, size=1, mode="area"),
             "area_1d": lambda F, t: F.interpolate(t[0], size=3, mode="area"),
             "area_3d": lambda F, t: F.interpolate(t[None], size=(2, 3, 2), mode="area"),
             "pool2d_3": lambda F, t: F.adaptive_avg_pool2d(t, 3),
             "pool1d_3": lambda F, t: F.adaptive_avg_pool1d(t[0], 3),
             "mean": lambda F, t: t.mean((2, 3))}
    res = []
    for m in (ember, torch):
        t = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        y = calls[call](m.nn.functional, t)
        (g,) = m.autograd.grad((y * y).sum(), t, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), t)
        res.append((g, gg))
    (g, gg), (tg, tgg) = res
    assert str(g.dtype).split(".")[-1] == str(tg.dtype).split(".")[-1]
    if call in ("mean", "area_1"):
        assert g.stride() == tg.stride()
    tol = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5}[dtype]
    assert_close(g.float(), tg.float(), atol=tol, rtol=tol)
    assert_close(gg.float(), tgg.float(), atol=tol, rtol=tol)
