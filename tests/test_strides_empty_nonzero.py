"""Strides as PyTorch reports them where NumPy's differ: tensors with no elements (NumPy makes every stride 0,
PyTorch computes contiguous ones, a size-0 dimension counted as 1) and views of them, and nonzero's column-major
result."""

import numpy as np
import pytest
import torch

import ember

CASES = {
    "empty": lambda m: m.empty(0, 3),
    "zeros_3d": lambda m: m.zeros(2, 0, 3),
    "tensor_1d": lambda m: m.tensor([]),
    "ones_trailing_zero": lambda m: m.ones(4, 0),
    "transpose": lambda m: m.zeros(0, 3).t(),
    "transpose_contiguous": lambda m: m.zeros(0, 3).t().contiguous(),
    "permute": lambda m: m.empty(2, 0, 3).permute(2, 0, 1),
    "op_result": lambda m: m.zeros(0, 3) + 1,
    "cat": lambda m: m.cat([m.zeros(0, 3), m.zeros(0, 3)]),
    "slice_rows": lambda m: m.zeros(4, 3)[2:2],
    "reshape": lambda m: m.zeros(0, 6).reshape(0, 2, 3),
    "expand": lambda m: m.zeros(1, 3).expand(0, 3),
    "nonzero": lambda m: m.nonzero(m.tensor([[1, 0], [1, 1]])),
    "nonzero_none": lambda m: m.nonzero(m.zeros(2, 3)),
    "nonzero_1d": lambda m: m.nonzero(m.tensor([1, 0, 1])),
    "nonzero_0d": lambda m: m.nonzero(m.tensor(1)),
    "argwhere": lambda m: m.argwhere(m.tensor([[0, 2, 0], [1, 1, 0]])),
    "nonzero_method": lambda m: m.tensor([[0.0, 2.0], [3.0, 0.0]]).nonzero(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_strides_match_pytorch(name):
    t, e = CASES[name](torch), CASES[name](ember)
    assert e.shape == t.shape
    assert e.stride() == t.stride()
    assert e.is_contiguous() == t.is_contiguous()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_nonzero_result_is_usable_as_indices():
    x = np.arange(12.0).reshape(3, 4) % 3
    t, e = torch.tensor(x), ember.tensor(x)
    ti, ei = torch.nonzero(t), ember.nonzero(e)
    np.testing.assert_array_equal(e[ei[:, 0], ei[:, 1]].numpy(), t[ti[:, 0], ti[:, 1]].numpy())
    np.testing.assert_array_equal((ei * 2).numpy(), (ti * 2).numpy())
    ei[0, 0] = 7  # writable, as PyTorch's
    assert ei[0, 0].item() == 7


LAYOUTS = {
    "contiguous": lambda m: m.arange(60.0).reshape(6, 10),
    "transposed": lambda m: m.arange(60.0).reshape(6, 10).t(),
    "permuted_3d": lambda m: m.arange(120.0).reshape(4, 5, 6).permute(2, 0, 1),
    "stepped": lambda m: m.arange(120.0).reshape(12, 10)[::2, 1::3],
}
EMPTY_VIEWS = {
    "step_2": lambda x: x[5:5:2], "then_empty": lambda x: x[::2][0:0], "columns": lambda x: x[:, 3:3:3],
    "plain": lambda x: x[3:3], "backwards": lambda x: x[4:2:3], "past_the_end": lambda x: x[10:20:2],
    "negative": lambda x: x[-1:-1:2], "both": lambda x: x[1:, 2:2:4], "rows_then_columns": lambda x: x[2:2:3, 1:],
    "first_dim_then_step": lambda x: x[0:0:5, ::2], "ellipsis": lambda x: x[..., 2:2:2],
    "select_then_slice": lambda x: x[1][3:3:2], "empty_then_step": lambda x: x[3:3][::2],
    "empty_column_then_step": lambda x: x[:, 3:3][:, ::2], "none": lambda x: x[None, 2:2:2, None],
    "narrow": lambda x: x.narrow(0, 2, 0), "narrow_columns": lambda x: x.narrow(1, 1, 0),
    "split": lambda x: x.split([2, 0, x.shape[0] - 2])[1], "tensor_split": lambda x: x.tensor_split([3, 3])[1],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("view", sorted(EMPTY_VIEWS))
def test_empty_views_have_pytorchs_strides_and_offset(view, layout):
    """A slice that selects nothing is still PyTorch's view: its stride multiplied by the step and its offset at
    the slice's start (NumPy restarts an empty slice at offset 0 with step 1), for contiguous, transposed and
    stepped inputs, through indexing, narrow and split; offsets inside the storage."""
    seen = []
    for m in (ember, torch):
        base = LAYOUTS[layout](m)
        v = EMPTY_VIEWS[view](base)
        seen.append((tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous(),
                     v.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()))
    if seen[1][2] > base.untyped_storage().nbytes() // 4:  # (float32 elements)
        pytest.skip("PyTorch's view starts past the end of its storage, where ember keeps NumPy's offset")
    assert seen[0] == seen[1]


NEW_DIM_VIEWS = {
    "none_first": lambda x: x[None], "none_middle": lambda x: x[:, None], "none_last": lambda x: x[..., None],
    "none_twice": lambda x: x[None, None], "none_around": lambda x: x[None, :, None], "select_none": lambda x: x[2][None],
    "slice_none": lambda x: x[1::2, None], "unsqueeze_0": lambda x: x.unsqueeze(0), "unsqueeze_1": lambda x: x.unsqueeze(1),
    "unsqueeze_last": lambda x: x.unsqueeze(-1), "expanded_none": lambda x: x.expand(2, *x.shape)[:, None],
    "expanded_unsqueeze": lambda x: x.expand(2, *x.shape).unsqueeze(1),
}


@pytest.mark.parametrize("empty", [False, True], ids=["full", "empty"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("view", sorted(NEW_DIM_VIEWS))
def test_new_dimensions_have_pytorchs_strides(view, layout, empty):
    """A new dimension (``x[None]``, ``unsqueeze``) has PyTorch's stride: the size times the stride of the
    dimension it goes before, 1 at the end (NumPy's None gives 0; its reshape of an empty array lays every
    dimension out anew); the view shares the storage, and its values and gradient are x's."""
    seen = []
    for m in (ember, torch):
        base = LAYOUTS[layout](m)
        base = base[:, 2:2] if empty else base
        v = NEW_DIM_VIEWS[view](base)
        seen.append((tuple(v.shape), v.stride(), v.is_contiguous(), v.tolist(), v.storage_offset(),
                     v.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()))
    if empty and view.startswith("expanded"):  # (ember's expand of an empty view is a new array, offset 0)
        seen = [s[:4] for s in seen]
    assert seen[0] == seen[1]


def test_new_dimension_views_write_through_and_take_gradients():
    seen = []
    for m in (ember, torch):
        x = m.arange(12.0).reshape(3, 4).t().contiguous().t().requires_grad_()
        y = x * 1
        v, u = y[:, None], y.unsqueeze(-1)
        (v * m.arange(12.0).reshape(3, 1, 4)).sum().backward(retain_graph=True)
        (u.squeeze(-1) ** 2).sum().backward()
        w = m.zeros(3, 4)
        w[None][0, 1] = 5
        w.t().unsqueeze(2)[3, 2, 0] = 7
        seen.append((v.stride(), u.stride(), x.grad.tolist(), w.tolist()))
    assert seen[0] == seen[1]


def test_empty_view_of_a_view_requiring_grad_is_pytorchs():
    seen = []
    for m in (ember, torch):
        x = m.arange(12.0).reshape(3, 4).requires_grad_()
        v = x[:, 3:3:2]
        v.sum().backward()
        seen.append((v.stride(), v.storage_offset(), v.grad_fn.name(), x.grad.tolist()))
    assert seen[0] == seen[1]



EXPANDED_OR_STRIDED = {  # (m, leaf): the base, built from the leaf of n elements that ``leaf(m, n)`` gives
    "expanded": lambda m, leaf: leaf(m, 4).reshape(1, 4).expand(3, 4)[:, None].expand(3, 2, 4),
    "expanded_to_empty": lambda m, leaf: leaf(m, 4).reshape(1, 4, 1).expand(0, 4, 3),
    "expanded_scalar": lambda m, leaf: leaf(m, 1).reshape(1, 1, 1).expand(2, 3, 4),
    "transposed": lambda m, leaf: leaf(m, 60).reshape(3, 5, 4).transpose(0, 2),
    "stepped": lambda m, leaf: leaf(m, 120).reshape(6, 5, 4)[::2],
}
EMPTY_OF_THEM = {
    "rows": lambda x: x[:0], "middle": lambda x: x[:, :0], "last": lambda x: x[..., :0],
    "squeeze": lambda x: x[:0, :1].squeeze(1), "squeeze_all": lambda x: x[:0, :1, :1].squeeze(),
    "squeeze_dims": lambda x: x[:1, :0, :1].squeeze((0, 2)), "select": lambda x: x[:, :0][0],
    "select_column": lambda x: x[:0][:, 1], "narrow": lambda x: x.narrow(1, 1, 0),
    "unsqueeze": lambda x: x[:0].unsqueeze(1), "transpose": lambda x: x[:0].transpose(0, 2),
    "permute": lambda x: x[:0].permute(2, 0, 1), "diagonal": lambda x: x[:0].diagonal(0, 1, 2),
    "unbind": lambda x: x[:, :0].unbind(0)[0], "expand_again": lambda x: x[:, :0, :1].expand(-1, -1, 3),
    "none": lambda x: x[None, :0],
}


@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires_grad"])
@pytest.mark.parametrize("base", sorted(EXPANDED_OR_STRIDED))
@pytest.mark.parametrize("view", sorted(EMPTY_OF_THEM))
def test_empty_views_of_expanded_and_strided_tensors_keep_pytorchs_strides(view, base, grad):
    """An empty view keeps the strides view arithmetic gives it, 0 where its base is expanded (NumPy's empty arrays
    have all strides 0, which ember lays out contiguously only for an array that views no elements), and squeeze
    drops the squeezed dimensions' strides alone (NumPy's reshape would lay an empty array out anew)."""
    seen = []
    for m in (torch, ember):
        x = EXPANDED_OR_STRIDED[base](m, lambda m, n: m.arange(float(n), requires_grad=grad))
        try:
            v = EMPTY_OF_THEM[view](x)
        except IndexError:  # (an index into a dimension of size 0: both refuse it)
            seen.append("IndexError")
            continue
        seen.append((tuple(v.shape), v.stride(), v.is_contiguous()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("write", [
    lambda m, x: x.add_(1), lambda m, x: m.nn.functional.selu(x, inplace=True), lambda m, x: x.zero_(),
    lambda m, x: m.add(m.ones(0, 1, 3), 1, out=x), lambda m, x: x.frac_(), lambda m, x: x.__setitem__(..., 2),
    lambda m, x: m.nn.functional.hardswish(x, inplace=True),
])
def test_an_empty_expanded_tensor_is_written_in_place_as_pytorch(write):
    """An empty view of an expanded tensor shares no element's memory (it has none): PyTorch writes it in place
    (ember refused it as an expanded tensor's internal overlap)."""
    seen = []
    for m in (torch, ember):
        x = m.ones(1, 1, 1).expand(0, 1, 3)
        write(m, x)
        seen.append((tuple(x.shape), x.stride()))
    assert seen[1] == seen[0]
