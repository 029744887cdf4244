"""``pickle`` and ``copy.deepcopy`` of tensors against PyTorch: values, dtype (bfloat16 too), shape, strides,
storage offset and size, class, requires_grad, what happens to .grad and to non-leaf tensors."""

import copy
import pickle

import numpy as np
import pytest
import torch
from autodiff_oracle import same_error

import ember
import ember.nn as nn


def both(make):
    """``make(lib)`` built with ember and with torch."""
    return make(ember), make(torch)


def layout(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes(), str(t.dtype).split(".")[1],
            type(t).__name__, t.requires_grad, t.is_leaf, t.grad is None)


def values(t):
    return t.detach().float().numpy() if str(t.dtype).endswith("bfloat16") else t.detach().numpy()


VIEWS = {
    "whole": lambda lib, x: x,
    "row": lambda lib, x: x[1],
    "column": lambda lib, x: x[:, 2],
    "transpose": lambda lib, x: x.t(),
    "transposed row": lambda lib, x: x.t()[1],
    "strided": lambda lib, x: x[::2, 1::2],
    "block": lambda lib, x: x[1:, 1:3],
    "empty": lambda lib, x: x[:0],
}
DTYPES = ["float32", "float64", "int64", "bool", "bfloat16", "float16", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip_keeps_layout_and_values(dtype, view, protocol):
    def make(lib):
        x = lib.tensor(np.arange(12).reshape(3, 4) - 5).to(getattr(lib, dtype))
        return VIEWS[view](lib, x)

    e, t = both(make)
    e2, t2 = pickle.loads(pickle.dumps(e, protocol)), pickle.loads(pickle.dumps(t, protocol))
    assert layout(e2) == layout(t2) == layout(t)
    np.testing.assert_array_equal(values(e2), values(t2))
    e2.zero_()  # a copy of its own: writable, and the original keeps its values
    np.testing.assert_array_equal(values(e), values(t))


def test_pickle_copies_the_data_and_views_in_one_pickle_do_not_share():
    # PyTorch pickles each tensor's storage on its own: views loaded together are separate copies.
    for lib in (ember, torch):
        x = lib.arange(6.0)
        a, b = pickle.loads(pickle.dumps([x, x[2:]]))
        a[2] = 100.0
        assert b[0].item() == 2.0 and x[2].item() == 2.0, lib.__name__


def test_pickle_requires_grad_parameters_buffers_and_grads():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        x.grad = lib.ones(3)
        p = lib.nn.Parameter(lib.ones(2))
        frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
        y = x * 2  # a non-leaf: plain pickle gives a leaf that requires grad
        got = [pickle.loads(pickle.dumps(v)) for v in (x, p, frozen, y)]
        assert [layout(g) for g in got] == [
            ((3,), (1,), 0, 12, "float32", "Tensor", True, True, True),
            ((2,), (1,), 0, 8, "float32", "Parameter", True, True, True),
            ((2,), (1,), 0, 8, "float32", "Parameter", False, True, True),
            ((3,), (1,), 0, 12, "float32", "Tensor", True, True, True),
        ], lib.__name__
        np.testing.assert_array_equal(got[3].detach().numpy(), [2.0, 2.0, 2.0])


def test_pickle_keeps_an_nn_buffer_and_a_subclass_attributes():
    b = pickle.loads(pickle.dumps(nn.Buffer(ember.ones(2), persistent=False)))
    assert type(b) is nn.Buffer and b.persistent is False

    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    m2 = pickle.loads(pickle.dumps(m))
    for (n1, t1), (n2, t2) in zip(m.state_dict(keep_vars=True).items(), m2.state_dict(keep_vars=True).items()):
        assert n1 == n2 and type(t1) is type(t2) and t1.requires_grad == t2.requires_grad
        np.testing.assert_array_equal(t1.detach().numpy(), t2.detach().numpy())
        assert t1.data_ptr() != t2.data_ptr()


def test_pickle_sparse_tensor():
    s = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,))
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.is_sparse and s2.shape == s.shape
    np.testing.assert_array_equal(s2.to_dense().numpy(), [1.0, 0.0, 2.0, 0.0])


def test_deepcopy_keeps_views_shared_strides_and_grad():
    for lib in (ember, torch):
        x = lib.arange(12.0).reshape(3, 4)
        a, v = copy.deepcopy([x, x.t()[1]])
        assert (v.stride(), v.storage_offset()) == ((4,), 1), lib.__name__
        a[0, 1] = 100.0  # views copied together share the copy, as in PyTorch
        assert v[0].item() == 100.0 and x[0, 1].item() == 1.0, lib.__name__
        w = lib.ones(2, requires_grad=True)
        w.grad = lib.full((2,), 3.0)
        w2 = copy.deepcopy(w)
        assert w2.requires_grad and w2.is_leaf and w2.grad is not None and w2.grad is not w.grad
        assert w2.grad.tolist() == [3.0, 3.0]


def test_deepcopy_refuses_a_non_leaf_as_torch():
    same_error(lambda lib: copy.deepcopy(lib.ones(2, requires_grad=True) * 2))
    copy.deepcopy(ember.ones(2) * 2)  # not requiring grad: a leaf in both


def test_deepcopy_of_a_bfloat16_parameter():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.tensor([1.5, -2.25]).bfloat16())
        q = copy.deepcopy(p)
        assert type(q).__name__ == "Parameter" and q.dtype == lib.bfloat16 and q.requires_grad
        assert q.float().tolist() == [1.5, -2.25]
