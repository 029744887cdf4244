"""``Tensor.sparse_resize_`` / ``sparse_resize_and_clear_`` of a sparse COO tensor against PyTorch's: sizes, numbers
of sparse and dense dimensions, the values kept (and grown as resize_ grows them), the version bump and errors."""

import pytest
import torch
from oracle import assert_same_error

import ember


def _coo(m, dense=False):
    if dense:
        return m.sparse_coo_tensor([[0, 1], [1, 2]], [[1.0, 2.0], [3.0, 4.0]], (2, 3, 2))
    return m.sparse_coo_tensor([[0, 1], [1, 2]], [1.0, 2.0], (2, 3))


def _empty(m):
    return m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (2, 3))


CASES = {
    "grow": (_coo, ((3, 4), 2, 0)),
    "same": (_coo, ((2, 3), 2, 0)),
    "list size": (_coo, ([5, 6], 2, 0)),
    "grow a dense dimension": (lambda m: _coo(m, True), ((3, 4, 3), 2, 1)),
    "empty to 1-d": (_empty, ((5,), 1, 0)),
    "empty to dense dimensions": (_empty, ((5, 2, 3), 1, 2)),
    "shrink a sparse size": (_coo, ((1, 3), 2, 0)),
    "shrink a dense size": (lambda m: _coo(m, True), ((3, 4, 1), 2, 1)),
    "another number of sparse dims": (_coo, ((3,), 1, 0)),
    "another number of dense dims": (lambda m: _coo(m, True), ((3, 4), 2, 0)),
    "sizes and dims disagree": (_coo, ((3, 4, 2), 2, 0)),
    "a float dim": (_coo, ((3, 4), 2.0, 0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_sparse_resize_as_pytorchs(case):
    make, args = CASES[case]

    def run(m):
        t = make(m)
        kept = t._values().numel()
        r = t.sparse_resize_(*args)
        assert r is t
        # (values past the old ones are uninitialised in PyTorch: compared up to there)
        return (tuple(t.shape), t.sparse_dim(), t.dense_dim(), t._version, t._indices().tolist(),
                tuple(t._values().shape), t._values().reshape(-1)[:kept].tolist())

    try:
        want = run(torch)
    except (RuntimeError, TypeError):
        assert_same_error(run)
        return
    got = run(ember)
    assert got == want


def test_sparse_resize_and_clear_as_pytorchs():
    got = []
    for m in (ember, torch):
        t = _coo(m, True)
        assert t.sparse_resize_and_clear_((4,), 1, 0) is t
        got.append((tuple(t.shape), t._nnz(), t.sparse_dim(), t.dense_dim()))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", ["sparse_resize_", "sparse_resize_and_clear_"])
def test_a_dense_tensor_refuses_as_pytorchs(name):
    for m in (ember, torch):
        with pytest.raises(NotImplementedError, match=f"Could not run 'aten::{name}' with arguments from the 'CPU'"):
            getattr(m.zeros(2, 3), name)((3, 4), 2, 0)
