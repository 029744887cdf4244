"""einsum against torch.einsum: values and gradients for the equations programs use, ellipses, implicit output,
diagonals, broadcasting, errors."""

import numpy as np
import pytest
from oracle import check
from test_data_samplers import raises_like_torch


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij->...ji", [(2, 2, 3, 4)]),
    ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("ij,ij->ij", [(2, 1), (2, 5)]),
    ("ij,jk", [(2, 1), (3, 5)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear
    ("ij->i", [(0, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
])
def test_einsum(eq, shapes):
    check(lambda m, *xs: m.einsum(eq, *xs), shapes)


def test_einsum_operands_as_a_list_and_integer_dtype():
    check(lambda m, a, b: m.einsum("ij,jk->ik", [a, b]), [(2, 3), (3, 4)])
    a = np.arange(6).reshape(2, 3)
    check(lambda m, x: m.einsum("ij->j", x), [a])


@pytest.mark.parametrize("make", [
    lambda m: m.einsum("i,i->", m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.einsum("ij,jk", m.ones(2, 3), m.ones(4, 5)),
    lambda m: m.einsum("ij", m.ones(2, 1, 3)),
    lambda m: m.einsum("i1", m.ones(2, 1)),
    lambda m: m.einsum("ij->k", m.ones(2, 1)),
    lambda m: m.einsum("ij,j", m.ones(2, 1)),
    lambda m: m.einsum("ii", m.ones(2, 3)),
    lambda m: m.einsum("ij->ii", m.ones(2, 2)),
])
def test_einsum_errors_like_torch(make):
    raises_like_torch(make)


def test_einsum_matches_matmul_gradients_in_float64():
    check(lambda m, a, b: m.einsum("bij,bkj->bik", a, b), [(3, 4, 5), (3, 2, 5)], dtype=np.float64, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2]),  # explicit output
    lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2]),  # implicit output
    lambda m, a, b: m.einsum(a, [30, 1], b, [1, 2], [2, 30]),  # 26-51 are the lower-case letters
    # any integer type: subscripts computed with NumPy (PyTorch compares and adds them as numbers)
    lambda m, a, b: m.einsum(a, [np.int64(0), 1], b, list(np.arange(1, 3)), [0, 2]),
])
def test_einsum_sublist_form(make):
    check(make, [(2, 3), (3, 4)])


def test_einsum_sublist_form_with_ellipsis():
    check(lambda m, a, b: m.einsum(a, [..., 0, 1], b, [..., 1, 2], [..., 0, 2]), [(2, 3, 4), (2, 4, 5)])


@pytest.mark.parametrize("make", [
    lambda m: m.einsum(m.ones(2), [52]),
    lambda m: m.einsum(m.ones(2)),
    lambda m: m.einsum("i"),
])
def test_einsum_sublist_errors_like_torch(make):
    raises_like_torch(make)
