"""out=: which error comes first when out's dtype is wrong and the call has another fault, against PyTorch (its
ops that check out's dtype before computing, and those whose own checks come first)."""

import pytest

from tests.oracle import assert_same_error


def _longs(m):
    return m.empty(0, dtype=m.int64)


# out of int64 with a float (or other) input, and a second fault: PyTorch names out's dtype first
DTYPE_FIRST = {
    "amax_dim_out_of_range": lambda m: m.amax(m.ones(2, 3), dim=5, out=_longs(m)),
    "amin_dim_out_of_range": lambda m: m.amin(m.ones(2, 3), dim=-3, out=_longs(m)),
    "amax_empty_reduced_dim": lambda m: m.amax(m.empty(0, 3), dim=0, out=_longs(m)),
    "amax_repeated_dim": lambda m: m.amax(m.ones(2, 3), dim=(0, 0), out=_longs(m)),
    "amax_complex": lambda m: m.amax(m.ones(2, 3, dtype=m.complex64), dim=0, out=m.empty(0)),
    "any_dim_out_of_range": lambda m: m.any(m.ones(2, 3), dim=5, out=_longs(m)),
    "all_dim_out_of_range": lambda m: m.all(m.ones(2, 3), dim=5, out=m.empty(0)),
    "logsumexp_dim_out_of_range": lambda m: m.logsumexp(m.ones(2, 3), dim=5, out=_longs(m)),
    "dot_sizes": lambda m: m.dot(m.ones(3), m.ones(4), out=_longs(m)),
    "dot_dtypes": lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64), out=_longs(m)),
    "vdot_2d": lambda m: m.vdot(m.ones(3, 1), m.ones(3), out=_longs(m)),
    "ceil_bool": lambda m: m.ceil(m.ones(3, dtype=m.bool), out=_longs(m)),
    "frac_long": lambda m: m.frac(m.ones(3, dtype=m.int64), out=m.empty(0)),
    "abs_bool": lambda m: m.abs(m.ones(3, dtype=m.bool), out=_longs(m)),
    "bitwise_not_float": lambda m: m.bitwise_not(m.ones(3), out=_longs(m)),
    "round_complex": lambda m: m.round(m.ones(3, dtype=m.complex64), out=_longs(m)),
    "max_of_all_complex": lambda m: m.max(m.ones(3, dtype=m.complex64), out=m.empty(0)),
    "gather_index_out_of_bounds": lambda m: m.gather(m.ones(2, 3), 1, m.tensor([[5]]), out=_longs(m)),
    "gather_float_index": lambda m: m.gather(m.ones(2, 3), 1, m.tensor([[1.0]]), out=_longs(m)),
    "gather_index_of_other_rank": lambda m: m.gather(m.ones(2, 3), 1, m.tensor([1]), out=_longs(m)),
    "index_select_out_of_bounds": lambda m: m.index_select(m.ones(2, 3), 1, m.tensor([5]), out=_longs(m)),
    "take_out_of_bounds": lambda m: m.take(m.ones(2, 3), m.tensor([50]), out=_longs(m)),
    "masked_select_shapes": lambda m: m.masked_select(m.ones(2, 3), m.ones(3, 3, dtype=m.bool), out=_longs(m)),
    "where_shapes": lambda m: m.where(m.ones(2, 3, dtype=m.bool), m.ones(2, 3), m.ones(4, 3), out=_longs(m)),
    "where_float_condition": lambda m: m.where(m.ones(2, 3), m.ones(2, 3), m.ones(2, 3), out=_longs(m)),
    "heaviside_shapes": lambda m: m.heaviside(m.ones(3), m.ones(4), out=_longs(m)),
    "float_power_shapes": lambda m: m.float_power(m.ones(3), m.ones(4), out=_longs(m)),
    "ldexp_shapes": lambda m: m.ldexp(m.ones(3), m.ones(4), out=_longs(m)),
    "cat_sizes": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)], out=_longs(m)),
    "cat_sizes_dim_1": lambda m: m.cat([m.ones(2, 3), m.ones(3, 4)], 1, out=_longs(m)),
    "cat_ranks": lambda m: m.cat([m.ones(2, 3), m.ones(2)], out=_longs(m)),
    "cat_skipped_empty_first": lambda m: m.cat([m.ones(0), m.ones(2, 3), m.ones(2, 4)], dim=1, out=_longs(m)),
    "cat_promoted_ints": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4, dtype=m.int32)], out=m.empty(0, dtype=m.int32)),
    "concat_sizes": lambda m: m.concat([m.ones(2, 3), m.ones(2, 4)], out=_longs(m)),
    "hstack_sizes": lambda m: m.hstack([m.ones(2, 3), m.ones(3, 4)], out=_longs(m)),
    "vstack_sizes": lambda m: m.vstack([m.ones(2, 3), m.ones(3, 4)], out=_longs(m)),
}

# the same out, and a fault PyTorch checks before out's dtype: its own error first
OTHER_FIRST = {
    "argmax_dim_out_of_range": lambda m: m.argmax(m.ones(2, 3), dim=5, out=m.empty(0)),
    "sort_dim_out_of_range": lambda m: m.sort(m.ones(2, 3), dim=5, out=(m.empty(0), m.empty(0))),
    "gather_dim_out_of_range": lambda m: m.gather(m.ones(2, 3), 5, m.tensor([[1]]), out=_longs(m)),
    "index_select_float_index": lambda m: m.index_select(m.ones(2, 3), 1, m.tensor([1.0]), out=_longs(m)),
    "take_float_index": lambda m: m.take(m.ones(2, 3), m.tensor([1.0]), out=_longs(m)),
    "tril_of_a_vector": lambda m: m.tril(m.ones(3), out=_longs(m)),
    "sign_complex": lambda m: m.sign(m.ones(3, dtype=m.complex64), out=_longs(m)),
    "trunc_complex": lambda m: m.trunc(m.ones(3, dtype=m.complex64), out=_longs(m)),
    "neg_bool": lambda m: m.neg(m.ones(3, dtype=m.bool), out=_longs(m)),
    "heaviside_dtypes": lambda m: m.heaviside(m.ones(3), m.ones(3, dtype=m.float64), out=m.empty(0)),
    "heaviside_complex": lambda m: m.heaviside(m.ones(3, dtype=m.complex64), m.ones(3, dtype=m.complex64),
                                               out=_longs(m)),
    "mv_sizes": lambda m: m.mv(m.ones(2, 3), m.ones(4), out=_longs(m)),
    "sum_dim_out_of_range": lambda m: m.sum(m.ones(2, 3), dim=5, out=_longs(m)),
    "norm_dim_out_of_range": lambda m: m.norm(m.ones(2, 3), dim=5, out=_longs(m)),
    "topk_k_too_large": lambda m: m.topk(m.ones(3), 9, out=(m.empty(0), m.empty(0))),
    "cat_dim_out_of_range": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)], dim=5, out=_longs(m)),
    "cat_zero_dim_second": lambda m: m.cat([m.ones(2, 3), m.tensor(1.0), m.ones(2)], out=_longs(m)),
    "cat_zero_dim_no_out": lambda m: m.cat([m.ones(2, 3), m.tensor(1.0)]),
    "stack_sizes": lambda m: m.stack([m.ones(2, 3), m.ones(2, 4)], out=_longs(m)),
}


@pytest.mark.parametrize("call", sorted(DTYPE_FIRST))
def test_outs_dtype_is_refused_before_the_other_fault_as_pytorch(call):
    assert_same_error(DTYPE_FIRST[call])


@pytest.mark.parametrize("call", sorted(OTHER_FIRST))
def test_the_ops_own_checks_come_before_outs_dtype_as_pytorch(call):
    assert_same_error(OTHER_FIRST[call])
