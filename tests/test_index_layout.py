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


# Numbers among index tensors: PyTorch selects first, then indexes what is left, so a number parted from the index
# tensors by a slice does not move their dimensions to the front (NumPy counts it among the advanced indices).
_SELECTS = {
    "t[1, :, i]": lambda m, t, i: t[1, :, i],
    "t[1, :, i, 2]": lambda m, t, i: t[1, :, i, 2],
    "t[:, 0, :, j]": lambda m, t, i: t[:, 0, :, i % 5],
    "t[0, :, :, j]": lambda m, t, i: t[0, :, :, i % 5],
    "t[-1, :, i, j]": lambda m, t, i: t[-1, :, i, i % 5],
    "t[tensor(1), :, i]": lambda m, t, i: t[m.tensor(1), :, i],
    "t[1, None, :, i]": lambda m, t, i: t[1, None, :, i],
    "t[1, ..., i, :]": lambda m, t, i: t[1, ..., i, :],
    "t[1, :, mask]": lambda m, t, i: t[1, :, m.tensor([True, False, True, True])],
    "t[0, :, mask2d]": lambda m, t, i: t[0, :, m.arange(20).reshape(4, 5) % 3 == 0],
    "t[i, 1, :, j] (apart either way)": lambda m, t, i: t[i % 2, 1, :, i % 5],
    "t[0, i] (together either way)": lambda m, t, i: t[0, i % 3],
}


@pytest.mark.parametrize("case", list(_SELECTS))
def test_numbers_among_index_tensors_select_first_as_pytorch(case):
    results = {}
    for m in (ember, torch):
        t = m.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5).requires_grad_()
        i = m.tensor([2, 0, 3])
        y = _SELECTS[case](m, t, i)
        (g,) = m.autograd.grad((y * m.arange(float(y.numel())).reshape(y.shape)).sum(), t)
        results[m] = (tuple(y.shape), y.detach().numpy(), g.numpy())
        t2 = t.detach().clone()
        target = _SELECTS[case](m, t2, i)
        _SELECTS_SET[case](m, t2, i, -m.arange(float(target.numel())).reshape(target.shape))
        results[m] += (t2.numpy(),)
    ours, theirs = results[ember], results[torch]
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_array_equal(a, b)


def _setter(get):
    def put(m, t, i, v):
        class Rec:  # gives back the index expression ``get`` builds, to assign through it
            def __getitem__(self, key):
                return key
        t[get(m, Rec(), i)] = v
    return put


_SELECTS_SET = {case: _setter(get) for case, get in _SELECTS.items()}


def test_numbers_among_index_tensors_keep_pytorchs_graph():
    """``x[1, :, i]``: the index node's input is the select's view (SelectBackward0), as PyTorch's; a leaf that
    requires grad is refused, as a view of it written in place."""
    for m in (ember, torch):
        x = m.zeros(2, 3, 4, requires_grad=True)
        assert x[1, :, m.tensor([0, 2])].grad_fn.next_functions[0][0].name() == "SelectBackward0"
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[1, :, m.tensor([0, 2])] = 1.0
