"""Meta tensors report PyTorch's strides for the ops that keep or set a layout without a view: ``clone``,
``to``, ``contiguous`` (any format), ``empty_like`` & co., and factories with ``memory_format=``."""

import pytest
from oracle import outcomes

CASES = {
    "clone_t": lambda m, x: x.t().clone(),
    "clone_cl": lambda m, x: x.view(1, 2, 3, 1).clone(memory_format=m.channels_last),
    "contiguous_t": lambda m, x: x.t().contiguous(),
    "contiguous_cl": lambda m, x: x.view(1, 2, 3, 1).expand(2, 2, 3, 4).contiguous(memory_format=m.channels_last),
    "to_dtype_t": lambda m, x: x.t().to(m.float64),
    "to_cl": lambda m, x: x.view(2, 3, 1, 1).expand(2, 3, 4, 5).to(memory_format=m.channels_last),
    "empty_like_t": lambda m, x: m.empty_like(x.t()),
    "zeros_like_t": lambda m, x: m.zeros_like(x.t()),
    "empty_like_cl": lambda m, x: m.empty_like(x.view(1, 2, 3, 1), memory_format=m.channels_last),
    "empty_cl": lambda m, x: m.empty(2, 3, 4, 5, device="meta", memory_format=m.channels_last),
    "empty_plain": lambda m, x: m.empty(2, 3, device="meta"),
    "clone_permuted": lambda m, x: x.view(1, 2, 3).permute(2, 0, 1).clone(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_meta_strides_as_pytorch(case):
    def run(m):
        r = CASES[case](m, m.empty(2, 3, device="meta"))
        return tuple(r.shape), tuple(r.stride()), r.storage_offset(), str(r.device)

    (got, _), (want, _) = outcomes(run)
    assert got == want
