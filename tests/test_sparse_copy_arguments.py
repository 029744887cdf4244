"""``copy_`` of a sparse COO tensor (and of a dense one) as PyTorch's: its parser's TypeError for a source that is
no tensor nor number (a list, None, a NumPy array) and for a ``non_blocking`` that is no bool; a number wrapped as
a 0-d tensor (bool, int64, float64, complex128: the dense/sparse error names its type); the in-place check on a
leaf that requires grad before the dense/sparse one; the type names of PyTorch's message for dtypes without a
legacy tensor type (``CPUBoolType``, ``SparseCPUComplexFloatType``)."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _sparse(m, requires_grad=False, dtype=None):
    s = m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1.0, 2.0]), (2, 2))
    if dtype is not None:
        s = s.to(dtype)
    return s.requires_grad_() if requires_grad else s


CASES = {
    "leaf_requiring_grad": lambda m: _sparse(m, True).copy_(_sparse(m)),
    "leaf_requiring_grad_dense_source": lambda m: _sparse(m, True).copy_(m.zeros(2, 2)),
    "leaf_requiring_grad_list_source": lambda m: _sparse(m, True).copy_([1]),
    "list": lambda m: _sparse(m).copy_([1, 2]),
    "none": lambda m: _sparse(m).copy_(None),
    "numpy_array": lambda m: _sparse(m).copy_(np.zeros((2, 2))),
    "float": lambda m: _sparse(m).copy_(3.0),
    "int": lambda m: _sparse(m).copy_(2),
    "bool": lambda m: _sparse(m).copy_(True),
    "complex": lambda m: _sparse(m).copy_(1j),
    "numpy_int": lambda m: _sparse(m).copy_(np.int32(1)),
    "dense": lambda m: _sparse(m).copy_(m.zeros(2, 2)),
    "dense_bool": lambda m: _sparse(m).copy_(m.zeros(2, 2, dtype=m.bool)),
    "dense_bfloat16": lambda m: _sparse(m).copy_(m.zeros(2, 2, dtype=m.bfloat16)),
    "sparse_bool_self": lambda m: _sparse(m, dtype=m.bool).copy_(m.zeros(2, 2)),
    "into_dense_from_sparse_complex": lambda m: m.zeros(2, 2).copy_(_sparse(m, dtype=m.complex64)),
    "non_blocking_str": lambda m: _sparse(m).copy_(_sparse(m), non_blocking="x"),
    "non_blocking_int": lambda m: _sparse(m).copy_(_sparse(m), non_blocking=1),
    "sparse": lambda m: _sparse(m).copy_(_sparse(m, dtype=m.float64)),
    # the dense tensor's copy_: the same parser
    "dense_list": lambda m: m.zeros(2).copy_([1, 2]),
    "dense_none": lambda m: m.zeros(2).copy_(None),
    "dense_number": lambda m: m.zeros(2).copy_(3),
    "dense_numpy_scalar": lambda m: m.zeros(2).copy_(np.float64(2.5)),
    "dense_non_blocking_none": lambda m: m.zeros(2).copy_(m.ones(2), non_blocking=None),
    "dense_non_blocking_true": lambda m: m.zeros(2).copy_(m.ones(2), non_blocking=True),
    # the source by keyword: PyTorch's one name, ``other`` (``src=`` is its TypeError)
    "dense_other_keyword": lambda m: m.zeros(2).copy_(other=m.ones(2), non_blocking=False),
    "dense_src_keyword": lambda m: m.zeros(2).copy_(src=m.ones(2)),
    "dense_input_keyword": lambda m: m.zeros(2).copy_(input=m.ones(2)),
    "dense_unknown_keyword_besides": lambda m: m.zeros(2).copy_(m.ones(2), blocking=True),
    "dense_nothing": lambda m: m.zeros(2).copy_(),
    "dense_non_blocking_by_position": lambda m: m.zeros(2).copy_(m.ones(2), True),
    "sparse_other_keyword": lambda m: _sparse(m).copy_(other=_sparse(m, dtype=m.float64)),
    "sparse_src_keyword": lambda m: _sparse(m).copy_(src=_sparse(m)),
}


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 (type and message compared)
        return type(e), str(e)
    return out.requires_grad, out.is_sparse, out.to_dense().tolist() if out.is_sparse else out.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_as_pytorchs(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (PyTorch's sparse invariant checks notice)
        assert _outcome(lambda: CASES[case](ember)) == _outcome(lambda: CASES[case](torch))


def test_leaf_requiring_grad_under_no_grad_copies():
    for m in (ember, torch):
        s = _sparse(m, True)
        with m.no_grad():
            s.copy_(_sparse(m) * 2)
        assert s.requires_grad and s.to_dense().tolist() == [[0.0, 2.0], [4.0, 0.0]]


def test_source_requiring_grad_is_refused():
    """A difference from PyTorch (whose copy records CopyBackwards): ember's sparse tensors never join a graph, so
    a source that requires grad is refused rather than silently cut from its gradient."""
    with pytest.raises(NotImplementedError, match="never part of a recorded graph"):
        _sparse(ember).copy_(_sparse(ember, True))
    with ember.no_grad():
        assert _sparse(ember).copy_(_sparse(ember, True) * 1).to_dense().tolist() == [[0.0, 1.0], [2.0, 0.0]]
