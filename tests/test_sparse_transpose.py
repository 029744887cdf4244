"""A sparse COO tensor's transposes (``t``, ``transpose``, ``T``, ``mT``, ``torch.t``) and a sparse tensor kept by
``ctx.save_for_backward`` in a custom autograd Function (graph attention layers keep their sparse adjacency
matrix so), against PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close

INDICES = [[0, 1, 2, 2], [1, 0, 2, 0]]


def _coo(m, coalesce=False):
    with warnings.catch_warnings():  # PyTorch: "Sparse invariant checks are implicitly disabled"
        warnings.simplefilter("ignore")
        a = m.sparse_coo_tensor(m.tensor(INDICES), m.arange(4.0), (3, 4))
    return a.coalesce() if coalesce else a


TRANSPOSES = {
    "t": lambda m, a: a.t(), "transpose": lambda m, a: a.transpose(0, 1), "transpose(-1, 0)": lambda m, a: a.transpose(-1, 0),
    "T": lambda m, a: a.T, "mT": lambda m, a: a.mT, "torch.t": lambda m, a: m.t(a),
    "torch.transpose": lambda m, a: m.transpose(a, 1, 0), "same dim": lambda m, a: a.transpose(1, 1),
}


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("op", list(TRANSPOSES))
def test_sparse_transpose_is_pytorchs(op, coalesce):
    out = [TRANSPOSES[op](m, _coo(m, coalesce)) for m in (torch, ember)]
    assert out[1].is_sparse and tuple(out[1].shape) == tuple(out[0].shape)
    assert out[1].is_coalesced() == out[0].is_coalesced()  # PyTorch: False after any transpose
    assert np.array_equal(out[1]._indices().numpy(), out[0]._indices().numpy())
    assert_close(out[1].to_dense(), out[0].to_dense())
    assert_close(out[1].coalesce().values(), out[0].coalesce().values())


def test_sparse_transpose_errors_are_pytorchs():
    for m in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0], [0, 1]]), m.ones(2, 2), (2, 2, 2, 2))
        with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 sparse and 0 dense dimensions, "
                                               r"but got 3 sparse and 1 dense dimensions"):
            b.t()
        with pytest.raises(RuntimeError, match="sparse transpose: transposed dimensions must be sparse"):
            b.transpose(0, 3)
        assert tuple(b.transpose(1, 2).shape) == (2, 2, 2, 2)


def _spmm_function(m):
    class SparseMatmul(m.autograd.Function):
        @staticmethod
        def forward(ctx, indices, values, shape, b):
            a = m.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            ctx.n = shape[0]
            return m.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            assert a.is_sparse and a.layout == m.sparse_coo
            edge = a._indices()[0, :] * ctx.n + a._indices()[1, :]
            grad_values = grad_output.matmul(b.t()).view(-1)[edge]
            return None, grad_values, None, a.t().matmul(grad_output)

    return SparseMatmul


def test_sparse_tensor_saved_for_backward_comes_back_sparse():
    res = []
    for m in (torch, ember):
        values = m.tensor([0.5, -1.0, 2.0, 0.25], dtype=m.float64, requires_grad=True)
        b = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _spmm_function(m).apply(m.tensor([[0, 1, 2, 2], [1, 0, 2, 0]]), values, m.Size([3, 3]), b)
        (out * m.tensor([[1.0, -2.0]], dtype=m.float64)).sum().backward()
        res.append((out, values.grad, b.grad))
    for e, t in zip(res[1], res[0]):
        assert_close(e, t)



def _sparse_input_function(m):
    class SparseTimesDense(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):  # the sparse matrix an input, saved as it came
            ctx.save_for_backward(a, b)
            return m.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            assert a.is_sparse
            return None, a.t().matmul(grad_output)

    return SparseTimesDense


def test_sparse_input_saved_for_backward_comes_back_sparse_under_create_graph():
    """A double-backward pass reads saved inputs as graph tensors: a sparse one still comes back sparse (a
    constant: sparse tensors take no part in ember's graph), and the gradient can be differentiated again."""
    res = []
    for m in (torch, ember):
        b = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0], [2.0, 1.0]], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = m.sparse_coo_tensor(m.tensor(INDICES), m.arange(4.0, dtype=m.float64), (3, 4))
        out = _sparse_input_function(m).apply(a, b)
        g_b, = m.autograd.grad((out * out).sum(), b, create_graph=True)
        g_b.pow(2).sum().backward()
        res.append((out, g_b, b.grad))
    for e, t in zip(res[1], res[0]):
        assert_close(e, t)


def test_in_place_t_errors_name_t_underscore_as_pytorch():
    """t_() of a tensor with too many (sparse or dense) dimensions: PyTorch's message names t_(), not t()."""
    for make in (lambda m: m.ones(2, 3, 4), lambda m: m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.ones(2, 3),
                                                                             (2, 2, 3))):
        messages = []
        for m in (torch, ember):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = make(m)
            with pytest.raises(RuntimeError) as err:
                x.t_()
            messages.append(str(err.value))
        assert messages[1] == messages[0]
