"""``asarray``: dtypes, memory sharing, ``copy``, ``requires_grad`` and its errors, against PyTorch."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


@pytest.mark.parametrize("data", [
    3.0, 3, True, [1, 2.5], [[1, 2], [3, 4]], np.float64(2.0), np.int32(3), np.array(3),
    np.ones(2, dtype=np.float16), np.arange(3.0), [np.float64(1.5)],
], ids=repr)
@pytest.mark.parametrize("dtype", [None, "float64", "int32"])
def test_asarray_values_and_dtypes(data, dtype):
    e = ember.asarray(data, dtype=None if dtype is None else getattr(ember, dtype))
    t = torch.asarray(data, dtype=None if dtype is None else getattr(torch, dtype))
    assert_close(e, t)
    assert not e.requires_grad


@pytest.mark.parametrize("copy", [None, True])
@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_asarray_of_an_array_shares_its_memory_unless_copied_or_converted(copy, dtype):
    results = []
    for m in (ember, torch):
        a = np.arange(3.0)
        x = m.asarray(a, dtype=None if dtype is None else getattr(m, dtype), copy=copy)
        x[0] = 9
        results.append((a.copy(), x.dtype.is_floating_point))
    assert (results[0][0] == results[1][0]).all()


def test_asarray_of_a_tensor_is_the_tensor_a_copy_or_a_conversion_with_gradients():
    out = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        same = m.asarray(x, requires_grad=True)
        copied = m.asarray(x, copy=True, requires_grad=True)
        converted = m.asarray(x, dtype=m.float64, requires_grad=True)
        (copied * 2 + converted.float() * 3).sum().backward()
        copied_detached = m.asarray(x, copy=True, requires_grad=False)
        out.append((same is x, copied is x, converted.dtype is m.float64, x.grad, copied_detached.requires_grad,
                    copied_detached.grad_fn is None))
    (es, ec, ed, eg, ecd, ecn), (ts, tc, td, tg, tcd, tcn) = out
    assert (es, ec, ed, ecd, ecn) == (ts, tc, td, tcd, tcn) == (True, False, True, False, True)
    assert_close(eg, tg)


def test_asarray_requires_grad_is_set_on_the_leaf_returned_and_detaches_a_non_leaf():
    out = []
    for m in (ember, torch):
        leaf = m.ones(2, requires_grad=True)
        off = m.asarray(leaf, requires_grad=False)  # the same leaf, switched off
        plain = m.ones(2)
        on = m.asarray(plain, requires_grad=True)
        non_leaf = m.ones(2, requires_grad=True) * 2
        detached = m.asarray(non_leaf, requires_grad=False)
        from_list = m.asarray([1.0, 2.0], requires_grad=True)
        out.append((off is leaf, leaf.requires_grad, on is plain, plain.requires_grad, detached is non_leaf,
                    detached.requires_grad, non_leaf.requires_grad, from_list.requires_grad, from_list.is_leaf))
    assert out[0] == out[1]


@pytest.mark.parametrize("case", ["tensor to another dtype", "array to another dtype", "numpy scalar", "list"])
def test_asarray_copy_false_where_a_copy_is_needed_is_pytorchs_error(case):
    def call(m):
        if case == "tensor to another dtype":
            return m.asarray(m.ones(2), dtype=m.float64, copy=False)
        if case == "array to another dtype":
            return m.asarray(np.ones(2), dtype=m.float32, copy=False)
        if case == "numpy scalar":
            return m.asarray(np.float64(1.0), copy=False)
        return m.asarray([1, 2], copy=False)

    with pytest.raises(Exception) as t_err:
        call(torch)
    with pytest.raises(t_err.type) as e_err:
        call(ember)
    assert str(e_err.value) == str(t_err.value).replace("torch", "ember")


def test_asarray_copy_false_aliases_an_array_of_the_same_dtype():
    a = np.ones(3)
    x = ember.asarray(a, copy=False)
    x[1] = 5
    assert a[1] == 5 and x.dtype is ember.float64


def test_asarray_of_a_tensor_that_requires_grad_warns_once_when_requires_grad_is_unspecified(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # as in a fresh process
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning) as record:
        ember.asarray(x)
    tx = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as t_record:
        warnings.simplefilter("always")
        torch.asarray(tx)
    if t_record:  # (PyTorch warns once a process: an earlier test may have used it up)
        assert str(record[0].message) in str(t_record[0].message)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.asarray(x)  # once only
        ember.asarray(x, requires_grad=True)
