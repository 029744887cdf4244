"""Ops PyTorch has no complex kernel for (xlogy, xlog1py, fmod, remainder, floor_divide, atan2, copysign) and
logcumsumexp of integer and bool tensors: its NotImplementedError, and its cast error for an in-place op whose
real ``self`` cannot hold the complex result, instead of a value or NumPy's errors."""

import pytest
from oracle import assert_same_error


def _operands(m):
    return (m.tensor([1.0, 2.0]), m.tensor([0, 2]), m.tensor([1 + 1j, 2j]),
            m.tensor([1 + 1j, 2j], dtype=m.complex128))


CALLS = {
    "xlogy": lambda m, f, i, c, cd: m.xlogy(c, c),
    "xlogy_real_complex": lambda m, f, i, c, cd: m.xlogy(f, c),
    "xlogy_number": lambda m, f, i, c, cd: m.xlogy(2.0, c),
    "xlogy_complex_number": lambda m, f, i, c, cd: m.xlogy(f, 1j),
    "xlogy_method": lambda m, f, i, c, cd: cd.xlogy(cd),
    "xlogy_": lambda m, f, i, c, cd: c.clone().xlogy_(c),
    "special_xlogy": lambda m, f, i, c, cd: m.special.xlogy(c, f),
    "special_xlog1py": lambda m, f, i, c, cd: m.special.xlog1py(c, c),
    "fmod_integer_zero": lambda m, f, i, c, cd: m.fmod(c, i),
    "fmod_zero": lambda m, f, i, c, cd: m.fmod(c, 0),
    "fmod": lambda m, f, i, c, cd: m.fmod(cd, cd),
    "fmod_real_complex": lambda m, f, i, c, cd: m.fmod(f, c),
    "fmod_complex_number": lambda m, f, i, c, cd: m.fmod(f, 1j),
    "fmod_": lambda m, f, i, c, cd: c.clone().fmod_(2),
    "remainder": lambda m, f, i, c, cd: m.remainder(c, c),
    "remainder_operator": lambda m, f, i, c, cd: c % 2,
    "floor_divide": lambda m, f, i, c, cd: m.floor_divide(c, c),
    "floor_divide_operator": lambda m, f, i, c, cd: f // c,
    "atan2": lambda m, f, i, c, cd: m.atan2(c, c),
    "atan2_integer_complex": lambda m, f, i, c, cd: m.atan2(i, cd),
    "arctan2": lambda m, f, i, c, cd: m.arctan2(c, f),
    "atan2_": lambda m, f, i, c, cd: c.clone().atan2_(c),
    "arctan2_method": lambda m, f, i, c, cd: f.arctan2(c),
    "copysign": lambda m, f, i, c, cd: m.copysign(c, c),
    "copysign_real_complex": lambda m, f, i, c, cd: m.copysign(f, cd),
    "copysign_number": lambda m, f, i, c, cd: m.copysign(c, 1.0),
    "copysign_complex_number": lambda m, f, i, c, cd: m.copysign(f, 1j),
    "copysign_": lambda m, f, i, c, cd: c.clone().copysign_(c),
    # a real self that cannot hold the complex result: the cast's error comes first
    "atan2_into_real": lambda m, f, i, c, cd: f.clone().atan2_(c),
    "arctan2_into_real": lambda m, f, i, c, cd: f.clone().arctan2_(c),
    "copysign_into_real": lambda m, f, i, c, cd: f.clone().copysign_(c),
    "copysign_into_integer": lambda m, f, i, c, cd: i.clone().copysign_(c),
    "fmod_into_real": lambda m, f, i, c, cd: f.clone().fmod_(c),
    "fmod_into_integer": lambda m, f, i, c, cd: i.clone().fmod_(c),
    "fmod_number_into_real": lambda m, f, i, c, cd: f.clone().fmod_(1j),
    "xlogy_into_real": lambda m, f, i, c, cd: f.clone().xlogy_(c),
    "logcumsumexp_int": lambda m, f, i, c, cd: m.logcumsumexp(i, 0),
    "logcumsumexp_method": lambda m, f, i, c, cd: i.logcumsumexp(-1),
    "logcumsumexp_bool": lambda m, f, i, c, cd: m.logcumsumexp(i > 0, 0),
    "logcumsumexp_uint8": lambda m, f, i, c, cd: m.logcumsumexp(i.to(m.uint8), 0),
    "logcumsumexp_int8": lambda m, f, i, c, cd: m.logcumsumexp(i.to(m.int8), 0),
    "logcumsumexp_0d": lambda m, f, i, c, cd: m.logcumsumexp(m.tensor(3), 0),
    "logcumsumexp_empty": lambda m, f, i, c, cd: m.logcumsumexp(m.tensor([], dtype=m.int64), 0),
    "logcumsumexp_dim_first": lambda m, f, i, c, cd: m.logcumsumexp(i, 5),  # (IndexError before the dtype)
}


@pytest.mark.parametrize("call", list(CALLS))
def test_refused_as_pytorch(call):
    assert_same_error(lambda m: CALLS[call](m, *_operands(m)))
