"""Sparse CSR / CSC matrices against PyTorch: conversion, parts, construction, product with a dense matrix
(values and the dense operand's gradient), errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

DENSE = np.array([[0.0, 1.5, 0.0, 0.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 0.0, -5.0]],
                 dtype=np.float32)
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta:UserWarning"),  # torch's
              pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled:UserWarning")]
PARTS = {"sparse_csr": ("crow_indices", "col_indices"), "sparse_csc": ("ccol_indices", "row_indices")}


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc"])
def test_conversion_and_parts_as_pytorch(layout):
    t = getattr(torch.tensor(DENSE), f"to_{layout}")()
    e = getattr(ember.tensor(DENSE), f"to_{layout}")()
    assert repr(e.layout) == repr(t.layout) and e.layout is getattr(ember, layout)
    for name in (*PARTS[layout], "values"):
        assert_close(getattr(e, name)(), getattr(t, name)())
    assert_close(e.to_dense(), t.to_dense())
    assert e._nnz() == t._nnz() and tuple(e.shape) == tuple(t.shape)
    assert e.is_sparse is t.is_sparse is False and e.is_sparse_csr == t.is_sparse_csr
    other = next(n for n in PARTS if n != layout)
    with pytest.raises(RuntimeError):
        getattr(e, PARTS[other][0])()
    with pytest.raises(TypeError):
        e.numpy()


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc"])
def test_constructors_as_pytorch(layout):
    parts = getattr(torch.tensor(DENSE), f"to_{layout}")()
    args = [getattr(parts, n)().tolist() for n in PARTS[layout]] + [parts.values().tolist()]
    for size in (None, (4, 6) if layout == "sparse_csr" else (6, 4)):
        given = () if size is None else (size,)
        t = getattr(torch, f"{layout}_tensor")(*args, *given)
        e = getattr(ember, f"{layout}_tensor")(*args, *given)
        assert tuple(e.shape) == tuple(t.shape)
        assert_close(e.to_dense(), t.to_dense())
    ints = getattr(ember, f"{layout}_tensor")(*args[:2], [1] * len(args[2]))
    assert str(ints.dtype) == "ember.int64"
    assert getattr(torch, f"{layout}_tensor")(*args[:2], [1] * len(args[2])).dtype == torch.int64
    with pytest.raises(RuntimeError):
        getattr(ember, f"{layout}_tensor")(args[0], args[1][:-1], args[2])


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc"])
@pytest.mark.parametrize("shape", [(4, 3), (4,)])
def test_product_with_a_dense_operand_and_its_gradient(layout, shape):
    w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    g = np.random.default_rng(1).standard_normal((4,) + shape[1:]).astype(np.float32)
    results = []
    for m in (torch, ember):
        a = getattr(m.tensor(DENSE), f"to_{layout}")()
        x = m.tensor(w, requires_grad=True)
        out = a @ x
        out.backward(m.tensor(g))
        results.append((out, x.grad))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])
    with pytest.raises(RuntimeError):
        ember.tensor(DENSE).to_sparse_csr() @ ember.ones(3, 2)


@pytest.mark.parametrize("name", ["crow_indices", "col_indices", "ccol_indices", "row_indices"])
def test_parts_of_a_dense_tensor_refused_as_pytorch(name):
    with pytest.raises(RuntimeError) as t_err:
        getattr(torch.ones(2, 2), name)()
    with pytest.raises(RuntimeError) as e_err:
        getattr(ember.ones(2, 2), name)()
    assert str(e_err.value) == str(t_err.value)
    assert ember.ones(2).is_sparse_csr is torch.ones(2).is_sparse_csr is False


# ---------------------------------------------------------------- torch.sparse.mm / sum, torch.spmm

COO = (np.array([[0, 1, 1, 2, 1], [2, 0, 2, 1, 0]]), np.array([3.0, 4.0, 5.0, 6.0, 1.0]))  # (1, 0) twice


@pytest.mark.parametrize("kind", ["coo", "csr", "csc"])
@pytest.mark.parametrize("fn", ["sparse.mm", "spmm"])
def test_sparse_mm_and_spmm(kind, fn):
    w = np.random.default_rng(0).standard_normal((3, 2))
    results = []
    for m in (torch, ember):
        a = m.sparse_coo_tensor(m.tensor(COO[0]), m.tensor(COO[1]), (3, 3))
        a = a if kind == "coo" else getattr(a.to_dense(), f"to_sparse_{kind}")()
        x = m.tensor(w, requires_grad=True)
        out = m.sparse.mm(a, x) if fn == "sparse.mm" else m.spmm(a, x)
        out.sum().backward()
        results.append((out, x.grad))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])


PRODUCTS = {
    "@": lambda m, a, x: a @ x, "mm": lambda m, a, x: m.mm(a, x), "matmul": lambda m, a, x: m.matmul(a, x),
    ".mm": lambda m, a, x: a.mm(x), ".matmul": lambda m, a, x: a.matmul(x),
    "dense @": lambda m, a, x: x.t() @ a, "dense mm": lambda m, a, x: m.mm(x.t(), a),
}


@pytest.mark.parametrize("kind", ["coo", "csr", "csc"])
@pytest.mark.parametrize("product", list(PRODUCTS))
@pytest.mark.parametrize("width", [2, None])
def test_every_spelling_of_a_sparse_dense_product(kind, product, width):
    """``sparse @ dense``, ``torch.mm``/``torch.matmul`` and the methods, and ``dense @ sparse`` (graph
    programs write ``adj @ h`` or ``torch.mm(adj, h)``), with the dense operand's gradient, as PyTorch."""
    if width is None and "mm" in product:
        pytest.skip("mm takes matrices only")
    w = np.random.default_rng(0).standard_normal((3,) if width is None else (3, width))
    results = []
    for m in (torch, ember):
        a = m.sparse_coo_tensor(m.tensor(COO[0]), m.tensor(COO[1]), (3, 3))
        a = a if kind == "coo" else getattr(a.to_dense(), f"to_sparse_{kind}")()
        x = m.tensor(w, requires_grad=True)
        out = PRODUCTS[product](m, a, x)
        (out * m.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape)).sum().backward()
        results.append((out, x.grad))
    assert results[1][0].layout is ember.strided
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])


def test_sparse_dense_product_errors():
    a = ember.sparse_coo_tensor(ember.tensor(COO[0]), ember.tensor(COO[1]), (3, 3))
    def ones(*shape):
        return ember.ones(*shape, dtype=a.dtype)

    for bad in (lambda: a @ ones(2, 2), lambda: ones(2, 2) @ a, lambda: ember.mm(ones(3, 2), a)):
        with pytest.raises(RuntimeError, match=r"addmm: Argument #3 \(dense\): Expected dim 0 size 3, got 2"):
            bad()  # (PyTorch's COO kernel's words; CSR/CSC: "mat1 and mat2 shapes cannot be multiplied")
    with pytest.raises(NotImplementedError):
        a @ a


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
def test_sparse_sum_as_pytorch(dim):
    results = []
    for m in (torch, ember):
        a = m.sparse_coo_tensor(m.tensor(COO[0]), m.tensor(COO[1]), (3, 3))
        results.append(m.sparse.sum(a) if dim is None else m.sparse.sum(a, dim=dim))
    e, t = results
    assert e.is_sparse == t.is_sparse
    assert_close(e.to_dense() if e.is_sparse else e, t.to_dense() if t.is_sparse else t)


def test_sparse_sum_over_a_dense_dim_and_with_dtype():
    idx, vals = np.array([[0, 2, 0]]), np.arange(6.0).reshape(3, 2)
    for dim in (1, (0,), (0, 1)):
        t = torch.sparse.sum(torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (3, 2)), dim=dim)
        e = ember.sparse.sum(ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (3, 2)), dim=dim)
        assert e.is_sparse == t.is_sparse
        assert_close(e.to_dense() if e.is_sparse else e, t.to_dense() if t.is_sparse else t)
    a = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (3, 2))
    assert ember.sparse.sum(a, dtype=ember.float32).dtype == ember.float32
    with pytest.raises(NotImplementedError):
        ember.sparse.mm(a, ember.ones(2, 2), "max")


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("sparse_left", [True, False])
def test_sparse_products_refuse_mixed_dtypes_as_pytorch(layout, sparse_left):
    """A float64 sparse matrix times a float32 dense one raises PyTorch's error (it was silently float32)."""
    messages = []
    for lib in (torch, ember):
        sparse = lib.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), dtype=lib.float64)
        if layout == "csr":
            sparse = sparse.to_sparse_csr()
        dense = lib.ones(2, 2)
        with pytest.raises(RuntimeError) as caught:
            _ = sparse @ dense if sparse_left else dense @ sparse
        messages.append(str(caught.value))
    if layout == "coo":  # (PyTorch's CSR kernels name the two types in either order)
        assert messages[1] == messages[0]
    assert "Double" in messages[1] and "Float" in messages[1]


def test_batched_dense_at_sparse_as_pytorch():
    """A batch of dense matrices ``@`` one sparse matrix: values and the dense operand's gradient."""
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((5, 4, 2))
    got = []
    for lib in (torch, ember):
        s = lib.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], [1.0, 2.0, -3.0], (2, 3), dtype=lib.float64)
        a = lib.tensor(dense, requires_grad=True)
        out = a @ s
        (out * out).sum().backward()
        got.append((out.detach().numpy(), a.grad.numpy()))
    for e, t in zip(got[1], got[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12)
