"""The *_like factories lay their result out as PyTorch's empty_like(preserve_format): a dense input's strides kept
(transposed, permuted), a non-dense one's (expanded, sliced) made dense in its dimension order; the random ones
draw PyTorch's numbers in that layout's memory order for the same seed."""

import numpy as np
import pytest
import torch

import ember

INPUTS = {
    "expanded": lambda m: m.zeros(1, 3).expand(2, 3),
    "expanded_middle": lambda m: m.zeros(3, 1, 2).expand(3, 4, 2),
    "expanded_transposed": lambda m: m.zeros(3, 2).t()[:, None].expand(2, 4, 3),
    "transposed": lambda m: m.zeros(2, 3).t(),
    "permuted": lambda m: m.zeros(2, 3, 4).permute(2, 0, 1),
    "sliced": lambda m: m.zeros(4, 6)[:, ::2],
    "sliced_transposed": lambda m: m.zeros(4, 6)[:, ::2].t(),
    "column": lambda m: m.zeros(3, 1).expand(3, 4),
    "unit_dim_transposed": lambda m: m.zeros(3, 1).t(),
    "unit_dim_permuted": lambda m: m.zeros(2, 3, 1).permute(2, 0, 1),
}
LIKE = {
    "empty_like": lambda m, x: m.empty_like(x),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.5),
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 10),
    "rand_like_float64": lambda m, x: m.rand_like(x, dtype=m.float64),
}


@pytest.mark.parametrize("like", sorted(LIKE))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_layout_and_draws_match_pytorch(name, like):
    torch.manual_seed(3)
    ember.manual_seed(3)
    t, e = LIKE[like](torch, INPUTS[name](torch)), LIKE[like](ember, INPUTS[name](ember))
    assert e.stride() == t.stride() and e.dtype == getattr(ember, str(t.dtype).split(".")[1])
    if like != "empty_like":
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    # the stream after: as many numbers drawn
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())


def test_other_memory_formats_stay_row_major():
    x = ember.zeros(2, 3).t()
    assert ember.empty_like(x, memory_format=ember.contiguous_format).stride() == (2, 1)
    assert ember.zeros_like(x, memory_format=ember.contiguous_format).is_contiguous()


EMPTY_INPUTS = {
    "transposed": lambda m: m.empty(0, 3).t(), "permuted": lambda m: m.empty(2, 0, 3).permute(2, 0, 1),
    "sliced": lambda m: m.empty(0, 4)[:, ::2], "expanded": lambda m: m.empty(0, 1).expand(0, 3),
    "unit_dims_permuted": lambda m: m.empty(1, 0, 3).permute(2, 1, 0), "narrowed_transposed": lambda m: m.empty(5, 4)[3:3].t(),
}


@pytest.mark.parametrize("like", sorted(LIKE))
@pytest.mark.parametrize("name", sorted(EMPTY_INPUTS))
def test_an_input_without_elements_keeps_its_strides_as_pytorchs(name, like):
    """PyTorch counts a tensor of no elements as dense: its *_like keeps the input's strides, whatever they are."""
    t, e = LIKE[like](torch, EMPTY_INPUTS[name](torch)), LIKE[like](ember, EMPTY_INPUTS[name](ember))
    assert (e.shape, e.stride()) == (t.shape, t.stride())
