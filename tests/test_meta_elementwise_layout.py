"""An elementwise op on meta tensors lays its result out as PyTorch's TensorIterator does on the meta device: from
its inputs' layouts (``x.t() + 1`` transposed, a channels-last input's result channels-last, the first input whose
strides tell two dimensions apart deciding), where other ops give a new tensor's contiguous strides."""

import pytest
import torch

import ember


def _m(m, *shape):
    return m.empty(*shape, device="meta")


CASES = {
    "transposed_plus_number": lambda m: _m(m, 3, 4).t() + 1,
    "two_transposed": lambda m: _m(m, 3, 4).t() * _m(m, 3, 4).t(),
    "transposed_first": lambda m: _m(m, 3, 4).t() + _m(m, 4, 3),
    "contiguous_first": lambda m: _m(m, 4, 3) + _m(m, 3, 4).t(),
    "channels_last_plus_number": lambda m: _m(m, 2, 3, 4, 5).to(memory_format=m.channels_last) + 1,
    "channels_last_first": lambda m: _m(m, 2, 3, 4, 5).to(memory_format=m.channels_last) + _m(m, 2, 3, 4, 5),
    "contiguous_then_channels_last": lambda m: _m(m, 2, 3, 4, 5) + _m(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last),
    "channels_last_exp": lambda m: _m(m, 2, 3, 4, 5).to(memory_format=m.channels_last).exp(),
    "channels_last_bias": lambda m: _m(m, 2, 3, 4, 5).to(memory_format=m.channels_last) + _m(m, 3, 1, 1),
    "broadcast_bias": lambda m: _m(m, 3, 4).t() + _m(m, 3),
    "expanded": lambda m: _m(m, 4, 1).expand(4, 3).t() + _m(m, 3, 4),
    "permuted": lambda m: _m(m, 2, 3, 4).permute(2, 0, 1) * 2,
    "permuted_sigmoid": lambda m: _m(m, 2, 3, 4).permute(1, 2, 0).sigmoid(),
    "two_permutations": lambda m: _m(m, 2, 3, 4).permute(2, 0, 1) + _m(m, 2, 3, 4).permute(2, 1, 0).transpose(1, 2),
    "size_one_dims": lambda m: _m(m, 2, 1, 3).transpose(0, 2) + 1,
    "negated": lambda m: -_m(m, 5, 1, 3).permute(2, 1, 0),
    "strided_slice": lambda m: _m(m, 4, 6)[:, ::2] + 1,
    "comparison": lambda m: _m(m, 3, 4).t() > 0,
    "isnan": lambda m: _m(m, 3, 4).t().isnan(),
    "isposinf": lambda m: m.isposinf(_m(m, 3, 4).t()),
    "isinf": lambda m: _m(m, 3, 4).t().isinf(),
    "isfinite": lambda m: m.isfinite(_m(m, 2, 3, 4).permute(2, 0, 1)),
    "signbit": lambda m: _m(m, 3, 4).t().signbit(),
    "isneginf": lambda m: _m(m, 2, 3, 4).permute(0, 2, 1).isneginf(),
    "logical_not": lambda m: m.logical_not(_m(m, 3, 4).t()),
    "bitwise_and": lambda m: (_m(m, 3, 4).t() > 0) & (_m(m, 3, 4) > 0).t(),
    "where": lambda m: m.where(_m(m, 3, 4).t() > 0, _m(m, 3, 4).t(), 0.0),
    "relu": lambda m: m.relu(_m(m, 3, 4).t()),
    "clamp": lambda m: _m(m, 3, 4).t().clamp(0, 1),
    "double": lambda m: _m(m, 3, 4).t().double(),
    "pow": lambda m: _m(m, 3, 4).t() ** 2,
    "with_0d_cpu_tensor": lambda m: _m(m, 3, 4).t() + m.tensor(2.0),
    "masked_fill_row_major": lambda m: _m(m, 2, 3).t().masked_fill(m.ones(3, 2, dtype=m.bool, device="meta"), 1.0),
    "masked_fill_tensor_value_row_major": lambda m: _m(m, 2, 1, 3).transpose(0, 2).masked_fill(
        m.ones(1, dtype=m.bool, device="meta"), m.tensor(1.0, device="meta")),
    "matmul_stays_contiguous": lambda m: _m(m, 3, 3).t() @ _m(m, 3, 3),
    "sum_stays_contiguous": lambda m: _m(m, 3, 4, 2).permute(2, 1, 0).sum(0),
}


@pytest.mark.parametrize("name", CASES)
def test_meta_result_strides_are_pytorchs(name):
    got, want = CASES[name](ember), CASES[name](torch)
    assert got.device.type == want.device.type == "meta"
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert got.is_contiguous() == want.is_contiguous()
    if got.dim() == 4:
        assert got.is_contiguous(memory_format=ember.channels_last) == want.is_contiguous(
            memory_format=torch.channels_last)
