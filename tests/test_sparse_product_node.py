"""A sparse matrix times a dense one (``torch.sparse.mm``, ``torch.spmm``, ``mm``/``@`` with a sparse operand) is one
node whose forward and backward gather, scale and scatter-add rows (a graph layer's step: SGC's precompute was 30x
PyTorch's time as index_select, mul and index_add). Values, gradients, node names against PyTorch."""

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta:UserWarning"),  # torch's
              pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled:UserWarning")]


def _pair(n, m, nnz, dtype=np.float32, repeats=True):
    idx = np.stack([RNG.integers(0, n, nnz), RNG.integers(0, m, nnz)])
    if repeats and nnz:
        idx[:, -1] = idx[:, 0]  # a repeated entry: an uncoalesced matrix sums its repeats
    vals = RNG.standard_normal(nnz).astype(dtype)
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (n, m))
    e = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (n, m))
    return t, e


def _dense(shape, dtype=np.float32):
    a = RNG.standard_normal(shape).astype(dtype)
    return torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)


def _layout(x, layout):
    return {"coo": lambda: x, "coalesced": x.coalesce, "csr": x.to_sparse_csr, "csc": x.to_sparse_csc}[layout]()


@pytest.mark.parametrize("layout", ["coo", "coalesced", "csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nnz", [0, 1, 40])
def test_sparse_times_dense_values_and_gradient(layout, dtype, nnz):
    st, se = _pair(7, 5, nnz, dtype)
    if layout in ("csr", "csc") and nnz:
        st, se = st.coalesce(), se.coalesce()
    st, se = _layout(st, layout), _layout(se, layout)
    for shape in ((5, 3), (5,)):
        dt, de = _dense(shape, dtype)
        gt = np.asarray(RNG.standard_normal((7, 3)[:len(shape)]), dtype)
        fns = [(lambda s, d, lib: lib.sparse.mm(s, d)), (lambda s, d, lib: s @ d), (lambda s, d, lib: lib.mm(s, d))]
        if layout in ("coo", "coalesced"):
            fns.append(lambda s, d, lib: lib.spmm(s, d))
        for fn in fns:
            if len(shape) == 1 and fn is not fns[1]:
                continue
            ot, oe = fn(st, dt, torch), fn(se, de, ember)
            np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-5, atol=1e-6)
            assert oe.dtype == ember.float32 if dtype == np.float32 else ember.float64
            dt.grad = de.grad = None
            ot.backward(torch.tensor(gt))
            oe.backward(ember.tensor(gt))
            np.testing.assert_allclose(de.grad.numpy(), dt.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 7), (7,)])
def test_dense_times_sparse_values_and_gradient(shape):
    st, se = _pair(7, 5, 30)
    dt, de = _dense(shape)
    ot, oe = dt @ st, de @ se
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
    ot.backward(torch.tensor(g))
    oe.backward(ember.tensor(g))
    np.testing.assert_allclose(de.grad.numpy(), dt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_node_names_are_pytorchs():
    st, se = _pair(6, 4, 10)
    (dt, de), (vt, ve), (yt, ye) = _dense((4, 3)), _dense((4,)), _dense((2, 6))
    for ft in (lambda s, d, y, v, lib: s @ d, lambda s, d, y, v, lib: lib.spmm(s, d),
               lambda s, d, y, v, lib: lib.sparse.mm(s, d), lambda s, d, y, v, lib: lib.sparse.mm(y, s),
               lambda s, d, y, v, lib: lib.sparse.mm(s.to_sparse_csr(), d),
               lambda s, d, y, v, lib: s @ v, lambda s, d, y, v, lib: y @ s, lambda s, d, y, v, lib: lib.mm(y, s)):
        t, e = ft(st, dt, yt, vt, torch), ft(se, de, ye, ve, ember)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


def test_twice_differentiable_and_forward_mode():
    st, se = _pair(6, 4, 12)
    dt, de = _dense((4, 3))
    results = []
    for s, d, lib in ((st, dt, torch), (se, de, ember)):
        out = lib.sparse.mm(s, d)
        (g,) = lib.autograd.grad((out ** 2).sum(), d, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), d)
        results.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    import ember.autograd.forward_ad as fwd

    tangent = RNG.standard_normal((4, 3)).astype(np.float32)
    with fwd.dual_level():
        x = fwd.make_dual(ember.tensor(de.detach().numpy()), ember.tensor(tangent))
        jvp = fwd.unpack_dual(se @ x).tangent
    np.testing.assert_allclose(jvp.numpy(), (st @ torch.tensor(tangent)).numpy(), rtol=1e-5, atol=1e-6)


def test_shape_and_dtype_errors_as_pytorchs():
    st, se = _pair(6, 4, 5)
    cases = [lambda s, lib: lib.sparse.mm(s, lib.ones(5, 2)), lambda s, lib: s @ lib.ones(5, 2),
             lambda s, lib: s @ lib.ones(5), lambda s, lib: lib.ones(2, 5) @ s,
             lambda s, lib: s.to_sparse_csr() @ lib.ones(5, 2), lambda s, lib: lib.ones(2, 5) @ s.to_sparse_csr(),
             lambda s, lib: lib.sparse.mm(s, lib.ones(4, 2, dtype=lib.float64)),
             lambda s, lib: lib.sparse.mm(s, lib.ones(4)), lambda s, lib: lib.sparse.mm(lib.ones(6), s)]
    for case in cases:
        with pytest.raises((RuntimeError, IndexError)) as theirs:
            case(st, torch)
        with pytest.raises(theirs.type) as ours:
            case(se, ember)
        assert str(ours.value) == str(theirs.value)
