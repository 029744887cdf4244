"""Two cases that used to give a silently wrong answer, against torch: a torch.uint8 index is a boolean mask
(with PyTorch's deprecation warning), not a list of 0/1 positions; matrix products of two dtypes raise
RuntimeError (PyTorch does not promote there) instead of computing in the wider dtype."""

import warnings

import numpy as np
import pytest
import torch
from oracle import outcomes

import ember

U8_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."


def both(fn):
    """``outcomes`` with tensors as NumPy arrays."""
    return [(r.detach().numpy() if hasattr(r, "detach") else r, w) for r, w in outcomes(fn)]


def mask(m, values):
    return m.tensor(values, dtype=m.uint8)


GETS = {
    "1-d": lambda m: m.arange(6.0)[mask(m, [1, 0, 1, 0, 1, 0])],
    "values above 1": lambda m: m.arange(6.0)[mask(m, [2, 0, 1, 0, 7, 0])],
    "2-d": lambda m: m.arange(6.0).view(2, 3)[mask(m, [[1, 0, 1], [0, 0, 1]])],
    "after an int": lambda m: m.arange(6.0).view(2, 3)[0, mask(m, [1, 0, 1])],
    "after a slice": lambda m: m.arange(6.0).view(2, 3)[:, mask(m, [1, 0, 1])],
    "in a tuple": lambda m: m.arange(6.0)[(mask(m, [1, 0, 1, 0, 1, 0]),)],
    "0-d true": lambda m: m.arange(6.0)[mask(m, 1)],
    "0-d false": lambda m: m.arange(6.0)[mask(m, 0)],
    "wrong length": lambda m: m.arange(6.0)[mask(m, [1, 0, 1])],
}


@pytest.mark.parametrize("case", GETS)
def test_byte_index_is_a_mask_like_torch(case):
    (e, ew), (t, tw) = both(GETS[case])
    assert ew == tw
    if isinstance(t, Exception):
        assert type(e) is type(t)
    else:
        np.testing.assert_array_equal(e, t)
        assert e.shape == t.shape
    if case.startswith("0-d"):
        assert ew == []
    else:
        assert ew == [(UserWarning, U8_WARNING)]


def _set(idx, value):
    def fn(m):
        x = m.arange(6.0).view(2, 3).clone()
        x[idx(m)] = value(m) if callable(value) else value
        return x
    return fn


SETS = {
    "rows from a tensor": _set(lambda m: mask(m, [1, 0]), lambda m: m.tensor([7.0, 8.0, 9.0])),
    "scalar": _set(lambda m: mask(m, [[1, 0, 1], [0, 1, 0]]), 9.0),
    "0-d tensor": _set(lambda m: mask(m, [[1, 0, 1], [0, 1, 0]]), lambda m: m.tensor(9.0)),
    "scalar after an int": _set(lambda m: (0, mask(m, [1, 0, 1])), 9.0),
    "scalar with an index tensor": _set(lambda m: (m.tensor([0, 1]), mask(m, [1, 0, 1])), 9.0),
    "0-d mask": _set(lambda m: mask(m, 1), 9.0),
    "index_put accumulate": lambda m: m.arange(6.0).index_put((mask(m, [1, 0, 1, 0, 1, 0]),), m.tensor(5.0),
                                                              accumulate=True),
    "index_put_ of a vector": lambda m: m.arange(6.0).index_put_((mask(m, [1, 0, 1, 0, 1, 0]),),
                                                                m.tensor([5.0, 6.0, 7.0])),
}


@pytest.mark.parametrize("case", SETS)
def test_byte_index_writes_like_torch(case):
    """A scalar written through a single byte mask fails as in PyTorch (its masked_fill_ refuses byte masks)."""
    (e, ew), (t, tw) = both(SETS[case])
    assert ew == tw
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t)
    else:
        np.testing.assert_array_equal(e, t)


def test_byte_index_gradient_like_torch():
    a = np.random.default_rng(0).standard_normal((3, 4))
    grads = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x[mask(m, [1, 0, 1])] * 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_int8_index_is_refused_like_torch():
    for m in (ember, torch):
        with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
            m.arange(3.0)[m.tensor([1, 0, 1], dtype=m.int8)]


def _ones(m, shape, dtype):
    return m.ones(shape, dtype=getattr(m, dtype))


PRODUCTS = {
    "@": lambda m, d1, d2: _ones(m, (2, 3), d1) @ _ones(m, (3, 2), d2),
    "mm": lambda m, d1, d2: m.mm(_ones(m, (2, 3), d1), _ones(m, (3, 2), d2)),
    "matmul 1-d 1-d": lambda m, d1, d2: m.matmul(_ones(m, (3,), d1), _ones(m, (3,), d2)),
    "matmul 1-d 2-d": lambda m, d1, d2: m.matmul(_ones(m, (3,), d1), _ones(m, (3, 2), d2)),
    "matmul 2-d 1-d": lambda m, d1, d2: m.matmul(_ones(m, (2, 3), d1), _ones(m, (3,), d2)),
    "matmul 3-d 2-d": lambda m, d1, d2: m.matmul(_ones(m, (4, 2, 3), d1), _ones(m, (3, 2), d2)),
    "matmul 4-d 4-d": lambda m, d1, d2: m.matmul(_ones(m, (2, 4, 2, 3), d1), _ones(m, (2, 4, 3, 2), d2)),
    "bmm": lambda m, d1, d2: m.bmm(_ones(m, (4, 2, 3), d1), _ones(m, (4, 3, 2), d2)),
    "mv": lambda m, d1, d2: m.mv(_ones(m, (2, 3), d1), _ones(m, (3,), d2)),
    "dot": lambda m, d1, d2: m.dot(_ones(m, (3,), d1), _ones(m, (3,), d2)),
    "vdot": lambda m, d1, d2: m.vdot(_ones(m, (3,), d1), _ones(m, (3,), d2)),
    "inner": lambda m, d1, d2: m.inner(_ones(m, (2, 3), d1), _ones(m, (4, 3), d2)),
    "tensordot": lambda m, d1, d2: m.tensordot(_ones(m, (2, 3), d1), _ones(m, (3, 2), d2), 1),
    "addmm mats": lambda m, d1, d2: m.addmm(_ones(m, (2, 2), d1), _ones(m, (2, 3), d1), _ones(m, (3, 2), d2)),
    "addmm input": lambda m, d1, d2: m.addmm(_ones(m, (2, 2), d2), _ones(m, (2, 3), d1), _ones(m, (3, 2), d1)),
    "baddbmm input": lambda m, d1, d2: m.baddbmm(_ones(m, (4, 2, 2), d2), _ones(m, (4, 2, 3), d1),
                                                 _ones(m, (4, 3, 2), d1)),
    "addbmm mats": lambda m, d1, d2: m.addbmm(_ones(m, (2, 2), d1), _ones(m, (4, 2, 3), d1), _ones(m, (4, 3, 2), d2)),
    "addmv input": lambda m, d1, d2: m.addmv(_ones(m, (2,), d2), _ones(m, (2, 3), d1), _ones(m, (3,), d1)),
    "linear weight": lambda m, d1, d2: m.nn.functional.linear(_ones(m, (2, 3), d1), _ones(m, (4, 3), d2)),
    "linear bias": lambda m, d1, d2: m.nn.functional.linear(_ones(m, (2, 3), d1), _ones(m, (4, 3), d1),
                                                            _ones(m, (4,), d2)),
    "multi_dot": lambda m, d1, d2: m.linalg.multi_dot([_ones(m, (2, 3), d1), _ones(m, (3, 2), d2)]),
    "linalg.vecdot": lambda m, d1, d2: m.linalg.vecdot(_ones(m, (2, 3), d1), _ones(m, (2, 3), d2)),
    "einsum": lambda m, d1, d2: m.einsum("ij,jk->ik", _ones(m, (2, 3), d1), _ones(m, (3, 2), d2)),
}
SAME_MESSAGE = {"@", "mm", "matmul 1-d 1-d", "matmul 1-d 2-d", "matmul 3-d 2-d", "matmul 4-d 4-d", "bmm", "dot", "einsum",
                "vdot", "linalg.vecdot"}


@pytest.mark.parametrize("case", PRODUCTS)
@pytest.mark.parametrize("d1, d2", [("float32", "float64"), ("float64", "float32"), ("int64", "float32"),
                                    ("complex64", "complex128"), ("float16", "float32"), ("int32", "int64")])
def test_mixed_dtype_products_raise_like_torch(case, d1, d2):
    (e, _), (t, _) = both(lambda m: PRODUCTS[case](m, d1, d2))
    assert isinstance(t, RuntimeError), t
    assert isinstance(e, RuntimeError), e
    if case in SAME_MESSAGE:
        assert str(e) == str(t)
    else:
        assert "dtype" in str(e) or "scalar type" in str(e)


@pytest.mark.parametrize("case", ["addr", "outer", "kron"])
def test_products_that_promote_still_promote_like_torch(case):
    fns = {"addr": lambda m: m.addr(_ones(m, (2, 3), "float32"), _ones(m, (2,), "float32"), _ones(m, (3,), "float64")),
           "outer": lambda m: m.outer(_ones(m, (2,), "float32"), _ones(m, (3,), "float64")),
           "kron": lambda m: m.kron(_ones(m, (2, 2), "float32"), _ones(m, (2,), "float64"))}
    (e, _), (t, _) = both(fns[case])
    np.testing.assert_array_equal(e, t)
    assert e.dtype == t.dtype == np.float64


def test_vecdot_conjugates_its_first_operand_like_torch():
    x, y = [[1 + 2j, 3 - 1j]], [[2 - 1j, 1 + 1j]]
    (e, _), (t, _) = both(lambda m: m.linalg.vecdot(m.tensor(x), m.tensor(y)))
    np.testing.assert_allclose(e, t)



@pytest.mark.parametrize("d1, d2", [("float32", "int64"), ("int64", "float32"), ("float64", "float32")])
def test_einsum_of_batched_operands_names_both_dtypes_like_torch(d1, d2):
    # Conv-TasNet's PIT loss: einsum('bij,pij->bp', [float scores, int64 one-hot permutations])
    (e, _), (t, _) = both(lambda m: m.einsum("bij,pij->bp", [_ones(m, (2, 3, 3), d1), _ones(m, (4, 3, 3), d2)]))
    assert isinstance(e, RuntimeError) and isinstance(t, RuntimeError)
    assert str(e) == str(t)
