"""NumPy ufuncs applied to a tensor (``np.exp(t)``, ``np.add(t, 1)``, ``np.sqrt(t)``) against PyTorch 2.13 with
NumPy 2: a tensor comes back through ``Tensor.__array_wrap__`` (sharing the result array's memory, a bool result
as uint8), with NumPy's DeprecationWarning about ``__array_wrap__``'s signature once per result; a tensor that
requires grad is refused as ``numpy()`` refuses it."""

import warnings

import numpy as np
import pytest
import torch

import ember

UFUNCS = {
    "exp": lambda t: np.exp(t),
    "add_number": lambda t: np.add(t, 1),
    "sqrt": lambda t: np.sqrt(t),
    "add_tensors": lambda t: np.add(t, t),
    "multiply_array_first": lambda t: np.multiply(np.array([2.0, 3.0, 4.0]), t),
    "greater": lambda t: np.greater(t, 2),
    "isnan": lambda t: np.isnan(t),
    "maximum_int": lambda t: np.maximum(t.long(), 2),
    "exp_0d": lambda t: np.exp(t[1]),
    "divmod": lambda t: np.divmod(t, 2),
    "negative_f64": lambda t: np.negative(t.double()),
}


def _outcome(lib, call):
    t = lib.tensor([1.0, 4.0, 9.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(t)
    results = result if isinstance(result, tuple) else (result,)
    described = [(type(r).__name__, str(r.dtype).split(".")[-1], r.tolist()) for r in results]
    return type(result).__name__, described, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_ufunc_on_a_tensor_as_pytorch(name):
    got, want = _outcome(ember, UFUNCS[name]), _outcome(torch, UFUNCS[name])
    assert got[0] == want[0] and got[2] == want[2]
    assert [(kind.replace("Tensor", ""), dt, v) for kind, dt, v in got[1]] == \
        [(kind.replace("Tensor", ""), dt, v) for kind, dt, v in want[1]]
    assert all(kind == "Tensor" for kind, _, _ in got[1])


def test_out_array_and_a_fresh_result_as_pytorch():
    for lib in (ember, torch):
        t = lib.tensor([0.0, 1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an out= array is returned as it is: no wrapping, no warning
            r = np.exp(t, out=np.empty(2, np.float32))
        assert type(r) is np.ndarray
        with pytest.warns(DeprecationWarning, match="__array_wrap__ must accept context"):
            r = np.add(t, 1)
        r.add_(1)  # a tensor of its own, writable: the input is unchanged
        assert r.tolist() == [2.0, 3.0] and t.tolist() == [0.0, 1.0]


def test_ufunc_on_a_tensor_that_requires_grad_refused_as_pytorch():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            np.exp(lib.tensor([1.0], requires_grad=True))
        messages.append(str(info.value).replace("ember", "torch"))
    assert messages[0] == messages[1]
