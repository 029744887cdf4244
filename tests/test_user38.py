"""Found by trying ember as a new user would (session 38's programs): each case against PyTorch."""

from __future__ import annotations

import pytest
import torch

import ember

# (name, function of the module and its bool tensors): PyTorch's matrix products have no bool kernel
_BOOL_PRODUCTS = [
    ("v@v", lambda m, a, v, s: v @ v),
    ("v@m", lambda m, a, v, s: v @ a),
    ("m@v", lambda m, a, v, s: a @ v),
    ("m@m", lambda m, a, v, s: a @ a),
    ("s@m", lambda m, a, v, s: s @ a),
    ("m@s", lambda m, a, v, s: a @ s),
    ("v@s", lambda m, a, v, s: v @ s),
    ("s@v", lambda m, a, v, s: s @ v),
    ("s@s", lambda m, a, v, s: s @ s),
    ("mm", lambda m, a, v, s: m.mm(a, a)),
    ("bmm", lambda m, a, v, s: m.bmm(s, s)),
    ("mv", lambda m, a, v, s: m.mv(a, v)),
    ("dot", lambda m, a, v, s: m.dot(v, v)),
    ("vdot", lambda m, a, v, s: m.vdot(v, v)),
    ("addmm", lambda m, a, v, s: m.addmm(a, a, a)),
    ("baddbmm", lambda m, a, v, s: m.baddbmm(s, s, s)),
    ("addbmm", lambda m, a, v, s: m.addbmm(a, s, s)),
    ("addmv", lambda m, a, v, s: m.addmv(v, a, v)),
    ("inner", lambda m, a, v, s: m.inner(a, a)),
    ("tensordot", lambda m, a, v, s: m.tensordot(a, a)),
    ("einsum", lambda m, a, v, s: m.einsum("ij,jk->ik", a, a)),
    ("linear", lambda m, a, v, s: m.nn.functional.linear(a, a)),
    ("linear_3d", lambda m, a, v, s: m.nn.functional.linear(s, a, v)),
    ("linear_empty", lambda m, a, v, s: m.nn.functional.linear(a[:0], a)),
    ("tensordot_1", lambda m, a, v, s: m.tensordot(a, a, 1)),
    ("tensordot_3", lambda m, a, v, s: m.tensordot(s, s, 3)),
    ("einsum_row_sums", lambda m, a, v, s: m.einsum("ij,ij->i", a, a)),
    ("einsum_batched", lambda m, a, v, s: m.einsum("bij,bjk->bik", s, s)),
    ("multi_dot", lambda m, a, v, s: m.linalg.multi_dot([a, a, a])),
    # the elementwise ones keep bool, as PyTorch's
    ("outer", lambda m, a, v, s: m.outer(v, v)),
    ("addr", lambda m, a, v, s: m.addr(a, v, v)),
    ("kron", lambda m, a, v, s: m.kron(a, a)),
    ("einsum_outer", lambda m, a, v, s: m.einsum("i,j->ij", v, v)),
    ("einsum_mul", lambda m, a, v, s: m.einsum("ij,ij->ij", a, a)),
]


def _bool_operands(m):
    a = m.tensor([[True, False], [True, True]])
    return a, a[1], m.stack([a, a, a])


@pytest.mark.parametrize("name,f", _BOOL_PRODUCTS, ids=[c[0] for c in _BOOL_PRODUCTS])
def test_bool_matrix_products_error_as_pytorch(name, f):
    try:
        want = f(torch, *_bool_operands(torch))
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as got:
            f(ember, *_bool_operands(ember))
        assert str(got.value) == str(e)
        return
    got = f(ember, *_bool_operands(ember))
    assert str(got.dtype)[-4:] == str(want.dtype)[-4:] == "bool"
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("sa,sb", [((0, 2), (2, 2)), ((2, 0), (0, 2)), ((2, 2), (2, 0)), ((0,), (0,)),
                                   ((2, 0), (0,)), ((0, 2, 2), (0, 2, 2)), ((3, 2, 0), (3, 0, 2)), ((0, 2), (2,))])
def test_empty_bool_matrix_products_as_pytorch(sa, sb):
    def run(m):
        return m.ones(sa, dtype=m.bool) @ m.ones(sb, dtype=m.bool)

    try:
        want = run(torch)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e).replace('"', '.')):
            run(ember)
        return
    got = run(ember)
    assert str(got.dtype)[-4:] == str(want.dtype)[-4:] == "bool" and got.tolist() == want.tolist()


@pytest.mark.parametrize("name,shape,args", [
    ("max_pool1d_with_indices", (2, 3, 11), (3, 2, 1)),
    ("max_pool2d_with_indices", (2, 3, 9, 9), (2, 2)),
    ("max_pool2d_with_indices", (3, 9, 7), (3, 2, 1, 1, True)),
    ("max_pool3d_with_indices", (1, 2, 5, 6, 4), (2,)),
    ("adaptive_max_pool1d_with_indices", (2, 3, 11), (4,)),
    ("adaptive_max_pool2d_with_indices", (2, 3, 9, 7), ((4, 3),)),
    ("adaptive_max_pool3d_with_indices", (1, 2, 5, 6, 4), (2,)),
])
def test_pool_with_indices_as_pytorch(name, shape, args):
    import numpy as np

    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t, e = torch.tensor(data, requires_grad=True), ember.tensor(data, requires_grad=True)
    # (return_indices=False is ignored: the indices always come)
    (to, ti), (eo, ei) = (getattr(m.nn.functional, name)(x, *args, return_indices=False)
                          for m, x in ((torch, t), (ember, e)))
    assert np.array_equal(eo.detach().numpy(), to.detach().numpy())
    assert str(ei.dtype)[-5:] == "int64" and np.array_equal(ei.numpy(), ti.numpy())
    (to * to).sum().backward()
    (eo * eo).sum().backward()
    assert np.allclose(e.grad.numpy(), t.grad.numpy())
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__


_INT_POOLS = [
    ("max_pool1d", lambda F, t: F.max_pool1d(t[0, 0], 2)),
    ("max_pool1d_indices", lambda F, t: F.max_pool1d(t[0, 0], 2, return_indices=True)[0]),
    ("max_pool2d", lambda F, t: F.max_pool2d(t[:, 0], 2)),
    ("max_pool2d_indices", lambda F, t: F.max_pool2d(t[:, 0], 2, return_indices=True)[1]),
    ("max_pool3d", lambda F, t: F.max_pool3d(t, 1)),
    ("adaptive_max_pool1d", lambda F, t: F.adaptive_max_pool1d(t[0, 0], 2)),
    ("adaptive_max_pool2d", lambda F, t: F.adaptive_max_pool2d(t[:, 0], 2)),
    ("adaptive_max_pool3d", lambda F, t: F.adaptive_max_pool3d(t, 1)),
    ("avg_pool1d", lambda F, t: F.avg_pool1d(-t[0, 0], 3, 2, 1)),
    ("avg_pool1d_ceil", lambda F, t: F.avg_pool1d(t[0, 0] - 7, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", lambda F, t: F.avg_pool2d(t[:, 0] - 9, 2, 1, 1)),
    ("avg_pool2d_divisor", lambda F, t: F.avg_pool2d(t[:, 0] - 9, 2, divisor_override=3)),
    ("avg_pool3d", lambda F, t: F.avg_pool3d(t - 5, 2)),
    ("adaptive_avg_pool1d", lambda F, t: F.adaptive_avg_pool1d(t[0, 0], 2)),
    ("adaptive_avg_pool2d", lambda F, t: F.adaptive_avg_pool2d(t[:, 0], 2)),
    ("adaptive_avg_pool2d_ones", lambda F, t: F.adaptive_avg_pool2d(t[:, 0], 1)),
    ("adaptive_avg_pool3d", lambda F, t: F.adaptive_avg_pool3d(t, (2, 1, 1))),
    ("lp_pool1d", lambda F, t: F.lp_pool1d(t[0, 0], 2, 2)),
]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("name,f", _INT_POOLS, ids=[c[0] for c in _INT_POOLS])
def test_integer_pooling_as_pytorch(name, f, dtype):
    """PyTorch's pooling kernels by dtype: max pooling takes integers (not bool; 1-d without indices floats only),
    average pooling int64 (a truncating division), the adaptive ones floats only."""
    def run(m):
        t = m.arange(16).view(1, 1, 2, 2, 4).to(getattr(m, dtype))
        return f(m.nn.functional, t if dtype != "bool" else (t % 3 == 0))

    try:
        want = run(torch)
    except (NotImplementedError, RuntimeError) as e:
        with pytest.raises(type(e)) as got:
            run(ember)
        assert str(got.value).startswith(str(e))  # (ember's mean adds a hint)
        return
    got = run(ember)
    assert str(got.dtype)[-5:] == str(want.dtype)[-5:]
    if got.is_floating_point():
        assert got.flatten().tolist() == pytest.approx(want.flatten().tolist())
    else:
        assert got.tolist() == want.tolist()


_RESIZED_OUTS = [
    ("arange", lambda m: m.arange(4, out=m.empty(3))),
    ("arange_start", lambda m: m.arange(0, 5, out=m.empty(3))),
    ("add", lambda m: m.add(m.ones(3), 1, out=m.empty(2))),
    ("sin", lambda m: m.sin(m.ones(3), out=m.empty(2))),
    ("sum", lambda m: m.sum(m.ones(3, 2), 0, out=m.empty(3))),
    ("matmul", lambda m: m.matmul(m.ones(2, 2), m.ones(2, 2), out=m.empty(3))),
    ("cat", lambda m: m.cat([m.ones(2), m.ones(2)], out=m.empty(3))),
]


@pytest.mark.parametrize("name,f", _RESIZED_OUTS, ids=[c[0] for c in _RESIZED_OUTS])
def test_resized_out_warning_names_the_users_line(name, f):
    """The warning of a resized ``out=`` names the line that called the op, as PyTorch's."""
    import warnings

    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f(m)
        assert [w.filename for w in caught] == [__file__], (m.__name__, [(w.filename, w.lineno) for w in caught])


def test_resized_out_warning_names_the_users_line_under_compat(tmp_path):
    """The same under ``python -m ember.compat``: the script's line, not the runner's."""
    from conftest import run_under_compat

    source = (
        "import sys, warnings\nimport torch\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    torch.arange(4, out=torch.empty(3))\n"
        "    torch.add(torch.ones(3), 1, out=torch.empty(2))\n"
        "    torch.sum(torch.ones(3, 2), 0, out=torch.empty(3))\n"
        "print(sorted({w.filename == __file__ for w in caught}), len(caught))\n"
    )
    out = run_under_compat(source, str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[True]", "3"]


@pytest.mark.parametrize("mask", [None, "bool", "float"])
@pytest.mark.parametrize("autocast", [False, True])
def test_multihead_attention_weights_as_pytorch(mask, autocast):
    """MultiheadAttention's returned weights: PyTorch's baddbmm with the mask, so under bfloat16 autocast they are
    bfloat16 (the mask cast with the product)."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 5, 8)).astype(np.float32)
    masks = {None: None, "bool": np.triu(np.ones((5, 5), bool), 1),
             "float": rng.standard_normal((5, 5)).astype(np.float32)}

    def run(m):
        m.manual_seed(0)
        mha = m.nn.MultiheadAttention(8, 2, batch_first=True)
        with m.no_grad():
            for i, p in enumerate(mha.parameters()):
                p.copy_(m.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        x = m.tensor(data, requires_grad=True)
        am = None if masks[mask] is None else m.tensor(masks[mask])
        with m.autocast("cpu", dtype=m.bfloat16, enabled=autocast):
            out, w = mha(x, x, x, attn_mask=am)
        (out.float().sum() + w.float().sum()).backward()
        return out, w, x.grad

    (to, tw, tg), (eo, ew, eg) = run(torch), run(ember)
    assert str(ew.dtype)[-8:] == str(tw.dtype)[-8:] and str(eo.dtype)[-8:] == str(to.dtype)[-8:]
    tol = 3e-2 if autocast else 1e-5
    assert np.allclose(ew.float().detach().numpy(), tw.float().detach().numpy(), atol=tol)
    assert np.allclose(eo.float().detach().numpy(), to.float().detach().numpy(), atol=tol * 4)
    assert np.allclose(eg.numpy(), tg.numpy(), atol=tol * 4)


_ADDED_PRODUCTS = [
    ("addmm", lambda m, i, s, v, beta, alpha: m.addmm(i, i, i, beta=beta, alpha=alpha)),
    ("baddbmm", lambda m, i, s, v, beta, alpha: m.baddbmm(s, s, s, beta=beta, alpha=alpha)),
    ("addbmm", lambda m, i, s, v, beta, alpha: m.addbmm(i, s, s, beta=beta, alpha=alpha)),
    ("addmv", lambda m, i, s, v, beta, alpha: m.addmv(v, i, v, beta=beta, alpha=alpha)),
    ("addr", lambda m, i, s, v, beta, alpha: m.addr(i, v, v, beta=beta, alpha=alpha)),
    ("addr_float_input", lambda m, i, s, v, beta, alpha: m.addr(i.float(), v, v, beta=beta, alpha=alpha)),
    ("addmm_", lambda m, i, s, v, beta, alpha: i.clone().addmm_(i, i, beta=beta, alpha=alpha)),
]


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "float32"])
@pytest.mark.parametrize("beta,alpha", [(1, 2.5), (0.5, 1), (2.7, -1.5), (False, True), (1.0, 1), (1, 300), (True, 2)])
@pytest.mark.parametrize("name,f", _ADDED_PRODUCTS, ids=[c[0] for c in _ADDED_PRODUCTS])
def test_added_products_scalars_on_integers_as_pytorch(name, f, beta, alpha, dtype):
    """The addmm family converts beta and alpha to an integer result's type (truncated, range-checked); addr refuses
    a float one for integers and a bool one for non-bool results."""
    def run(m):
        i = m.full((2, 2), 3, dtype=getattr(m, dtype))
        return f(m, i, i[None], i[0], beta, alpha)

    try:
        want = run(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            run(ember)
        assert str(got.value) == str(e)
        return
    got = run(ember)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] and got.tolist() == want.tolist()
