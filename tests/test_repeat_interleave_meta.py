"""``repeat_interleave`` with meta repeats (no values to count): a meta result of ``output_size`` entries along
the dim, PyTorch's error without ``output_size``; the repeats' shape checks and their messages as PyTorch's."""

import pytest
from oracle import outcomes

import ember

CASES = {
    "dim0": lambda m: m.repeat_interleave(m.empty(2, 3, device="meta"), m.tensor([1, 2], device="meta"), dim=0,
                                          output_size=3),
    "dim1": lambda m: m.repeat_interleave(m.empty(2, 3, device="meta"), m.tensor([1, 2, 3], device="meta"), dim=1,
                                          output_size=7),
    "one_count": lambda m: m.repeat_interleave(m.empty(2, 3, device="meta"), m.tensor([2], device="meta"), dim=1,
                                               output_size=6),
    "flattened": lambda m: m.repeat_interleave(m.empty(2, 3, device="meta"), m.tensor([2], device="meta"),
                                               output_size=12),
    "counts_only": lambda m: m.repeat_interleave(m.tensor([1, 2], device="meta"), output_size=3),
    "no_output_size": lambda m: m.repeat_interleave(m.empty(3, device="meta"), m.tensor([1, 2, 3], device="meta")),
    "counts_only_no_output_size": lambda m: m.repeat_interleave(m.tensor([1, 2], device="meta")),
    "wrong_count": lambda m: m.repeat_interleave(m.empty(2, 3, device="meta"), m.tensor([1, 2, 3], device="meta"),
                                                 dim=0, output_size=7),
    "wrong_count_cpu": lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([1, 2, 3]), dim=0),
    "two_dim_repeats": lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([[1, 2]]), dim=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name):
    def run(m):
        r = CASES[name](m)
        return tuple(r.shape), str(r.device), str(r.dtype).split(".")[-1], tuple(r.stride())

    (got, _), (want, _) = outcomes(run)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want)
    else:
        assert got == want


def test_meta_result_is_recorded():
    x = ember.empty(2, 3, device="meta", requires_grad=True)
    r = ember.repeat_interleave(x, ember.tensor([1, 2], device="meta"), dim=0, output_size=3)
    assert r.requires_grad and r.is_meta
