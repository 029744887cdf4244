"""The result of advanced indexing is laid out as PyTorch's: ``x[:, idx, :]`` of a contiguous ``x`` is contiguous
(NumPy's is a transposed copy), so ``.view(...)`` of it works as in PyTorch (neural-processes indexes
``x[:, locations, :]`` and views the result); a non-contiguous ``x`` or index tensor gives PyTorch's stride order."""

import numpy as np
import pytest
import torch

import ember

LOC = [3, 1, 7, 0]


def _cases(fw):
    x = fw.arange(2 * 10 * 3.0).reshape(2, 10, 3)
    y = fw.arange(2 * 3 * 10 * 4.0).reshape(2, 3, 10, 4)
    i = fw.tensor(LOC)
    i2 = fw.tensor([[0, 2], [1, 0]])
    loc = np.array(LOC)
    return {
        "x[:, i, :]": lambda: x[:, i, :],
        "x[:, ndarray, :]": lambda: x[:, loc, :],
        "x[:, list]": lambda: x[:, LOC],
        "x[i % 2]": lambda: x[i[:2] % 2],
        "x[..., i]": lambda: x[..., i[:2] % 3],
        "x.mT[:, i]": lambda: x.mT[:, i[:2] % 3],
        "x.permute(2, 1, 0)[:, i]": lambda: x.permute(2, 1, 0)[:, i],
        "x.permute(1, 0, 2)[i]": lambda: x.permute(1, 0, 2)[i],
        "x[:, i, j]": lambda: x[:, i, i % 3],
        "x[i, :, j]": lambda: x[i[:2] % 2, :, i[:2] % 3],
        "x[:, i2d]": lambda: x[:, i2],
        "x[:, i2d.T]": lambda: x[:, i2.T],
        "x.permute(2, 1, 0)[:, i2d]": lambda: x.permute(2, 1, 0)[:, i2],
        "x[:, mask]": lambda: x[:, fw.arange(10) % 2 == 0],
        "x[mask2d]": lambda: x[fw.ones(2, 10, dtype=fw.bool)],
        "x[None, :, i]": lambda: x[None, :, i],
        "x[:, i, 1:]": lambda: x[:, i, 1:],
        "x[0, i]": lambda: x[0, i],
        "x[:, ::2][:, i % 5]": lambda: x[:, ::2][:, i % 5],
        "y[:, :, i]": lambda: y[:, :, i],
        "y[:, i % 3, :, i2d]": lambda: y[:, fw.tensor([0, 2]), :, fw.tensor([1, 3])],
        "y.transpose(1, 3)[:, i % 4, 1]": lambda: y.transpose(1, 3)[:, i % 4, 1],
        "y[..., i % 4][:, 0]": lambda: y[..., i % 4][:, 0],
        "y.permute(3, 2, 1, 0)[i % 4, :, :, i2d % 2]": lambda: y.permute(3, 2, 1, 0)[i % 4, :, :, i % 2],
    }


@pytest.mark.parametrize("case", list(_cases(torch)))
def test_advanced_indexing_result_has_pytorchs_strides(case):
    expected, got = _cases(torch)[case](), _cases(ember)[case]()
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert got.is_contiguous() == expected.is_contiguous()
    assert got.tolist() == expected.tolist()


def test_a_view_of_an_indexed_batch_works_as_in_pytorch_and_its_gradient_is_unchanged():
    out = {}
    for fw in (torch, ember):
        x = fw.arange(2 * 10 * 3.0).reshape(2, 10, 3).requires_grad_()
        flat = x[:, np.array(LOC), :].view(8, 3)  # neural-processes' xy_to_mu_sigma
        (flat * fw.arange(3.0)).sum().backward()
        out[fw.__name__] = (flat.tolist(), x.grad.tolist())
    assert out["ember"] == out["torch"]
