"""``Tensor.set_(storage, offset, size, stride)`` and ``torch._utils._rebuild_tensor_v2`` / ``_rebuild_parameter``
(what custom ``__reduce__`` methods return) against torch: the values and layout, memory shared with the
storage's tensor, requires_grad, a Parameter, PyTorch's errors."""

import warnings

import pytest
import torch
import torch._utils

import ember
import ember._utils


def _storage(m, typed: bool):
    x = m.arange(6.0)
    with warnings.catch_warnings():  # (PyTorch's TypedStorage deprecation)
        warnings.simplefilter("ignore")
        return x, (x.storage() if typed else x.untyped_storage())


@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize("layout", [(), (1, (2, 2)), (1, (2, 2), (1, 2)), (0, (0,)), (5, ())])
def test_set_storage_as_torch(typed, layout):
    results = []
    for m in (torch, ember):
        x, storage = _storage(m, typed)
        t = m.empty(0).set_(storage, *layout)
        seen = (t.tolist(), tuple(t.shape), t.stride(), t._version)
        if t.numel():
            t[(0,) * t.dim()] = 50.0
        results.append((seen, x.tolist()))  # (a write through t shows in the storage's tensor)
    assert results[0] == results[1]


@pytest.mark.parametrize("call", [lambda m, s: m.empty(0, dtype=m.float64).set_(s), lambda m, s: m.empty(0).set_(s, -1, (2,)),
                                  lambda m, s: m.ones(2, requires_grad=True).set_(s)])
def test_set_storage_errors_as_torch(call):
    errors = []
    for m in (torch, ember):
        _, storage = _storage(m, True)
        with pytest.raises(RuntimeError) as info:
            call(m, storage)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_set_storage_past_its_end_is_refused():
    """(PyTorch grows the storage; ember's memory is NumPy's, which cannot grow in place.)"""
    _, storage = _storage(ember, False)
    with pytest.raises(RuntimeError, match="out of bounds"):
        ember.empty(0).set_(storage, 4, (2, 2))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_rebuild_tensor_v2_and_parameter_as_torch(requires_grad):
    results = []
    for m, utils in ((torch, torch._utils), (ember, ember._utils)):
        x, storage = _storage(m, True)
        t = utils._rebuild_tensor_v2(storage, 1, (2, 2), (2, 1), requires_grad, {})
        p = utils._rebuild_parameter(t.detach(), requires_grad, {})
        t.detach()[0, 0] = 7.0
        results.append((t.tolist(), t.requires_grad, t.is_leaf, x.tolist(), type(p).__name__, p.requires_grad,
                        p.tolist()))
    assert results[0] == results[1]
