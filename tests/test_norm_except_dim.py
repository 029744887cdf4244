"""``torch.norm_except_dim`` (weight_norm's helper, which public code calls directly) and ``torch._weight_norm``:
PyTorch's composition (its values, gradients and first graph node), its int ``pow``, its errors; and
``size(dim)``/``stride(dim)`` of a 0-d tensor, whose error it reaches."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("pow", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norm_except_dim_matches_pytorch(dim, pow, dtype):
    a = np.random.default_rng(dim + 10 * pow).standard_normal((3, 4, 5)).astype(dtype)
    outs = []
    for m in (ember, torch):
        v = m.tensor(a, requires_grad=True)
        out = m.norm_except_dim(v, pow, dim)
        (out * m.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        outs.append((out, v.grad))
    (got, got_grad), (want, want_grad) = outs
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype).split(".")[1]
    assert_close(got.detach(), want.detach().numpy(), atol=1e-5)
    assert_close(got_grad, want_grad.numpy(), atol=1e-5)
    if dim != -1:  # (the whole tensor's norm: the name of Tensor.norm's node)
        assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__


def test_norm_except_dim_of_a_vector_a_transposed_view_and_half():
    for make in (lambda m: m.norm_except_dim(m.arange(3.0), 2, 0),
                 lambda m: m.norm_except_dim(m.arange(12.0).reshape(4, 3).t(), 2, 0),
                 lambda m: m.norm_except_dim(m.arange(12.0).reshape(4, 3).t(), 2, 1),
                 lambda m: m.norm_except_dim(m.ones(2, 3, dtype=m.float16), 2, 0),
                 lambda m: m.norm_except_dim(m.arange(6.0).reshape(2, 3)),
                 lambda m: m._weight_norm(m.arange(6.0).reshape(2, 3), m.tensor([[2.0], [3.0]]), 0),
                 lambda m: m._weight_norm(m.arange(6.0).reshape(2, 3), m.tensor([[2.0, 3.0, 4.0]]), 1)):
        got, want = make(ember), make(torch)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype).split(".")[1]
        assert_close(got.float(), want.float().numpy(), atol=1e-3)


@pytest.mark.parametrize("call", [
    lambda m: m.norm_except_dim(m.ones(2, 3), 2.0, 0),
    lambda m: m.norm_except_dim(m.ones(2, 3), True, 0),
    lambda m: m.norm_except_dim(m.ones(2, 3), 2, -3),
    lambda m: m.norm_except_dim(m.ones(2, 3), 2, 5),
    lambda m: m.norm_except_dim(m.tensor(3.0), 2, 0),
])
def test_norm_except_dim_errors_are_pytorchs(call):
    assert_same_error(call)


@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize("dim", [0, -1, 1, -2])
def test_size_and_stride_of_a_0d_tensor_name_the_dimension(method, dim):
    assert_same_error(lambda m: getattr(m.tensor(3.0), method)(dim))
