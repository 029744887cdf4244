"""``Tensor.uniform_(from, to)`` and ``nn.init.uniform_``'s bound checks against PyTorch's: an integer tensor, a
bound outside the dtype's finite range (NaN and the infinities too), bounds out of order, and a range ``to - from``
past the dtype's largest value each raise PyTorch's error, in its order; bounds that pass draw PyTorch's numbers."""

import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")
F32_MAX, F64_MAX = torch.finfo(torch.float32).max, torch.finfo(torch.float64).max

CASES = [
    ("float32", 1.0, 0.0),  # out of order
    ("float64", 1.0, 0.0),
    ("float16", 1.0, 0.5),
    ("float32", 0.0, INF),  # not finite
    ("float32", -INF, 0.0),
    ("float32", INF, -INF),
    ("float32", NAN, 1.0),
    ("float32", 0.0, NAN),
    ("float64", INF, INF),
    ("float64", 1e308, INF),
    ("float32", 0.0, 1e39),  # past the dtype's range
    ("float32", -1e39, 0.0),
    ("float16", 0.0, 70000.0),
    ("float16", -70000.0, 0.0),
    ("bfloat16", 0.0, 3.4e38),
    ("complex64", 0.0, 1e39),
    ("float32", -3e38, 3e38),  # to - from past the largest value
    ("float64", -F64_MAX, F64_MAX),
    ("float16", -60000.0, 60000.0),
    ("bfloat16", -3e38, 3e38),
    ("complex128", -1e308, 1e308),
    ("int64", 1, 0),  # an integer tensor: refused before its bounds are looked at
    ("float32", F32_MAX, F32_MAX),  # bounds that pass
    ("float32", -1.7e38, 1.7e38),
    ("float16", -30000.0, 30000.0),
    ("float64", 2.0, 2.0),
]


def _outcome(lib, dtype, low, high, fill):
    t = lib.zeros(5, dtype=getattr(lib, dtype))
    lib.manual_seed(0)
    try:
        out = fill(lib, t, low, high)
    except Exception as e:  # noqa: BLE001 - the type and the words are compared
        return type(e).__name__, str(e)
    return "ok", [repr(v) for v in out.tolist()], out is t


@pytest.mark.parametrize("dtype,low,high", CASES)
def test_tensor_uniform_bounds_as_pytorch(dtype, low, high):
    def fill(lib, t, a, b):
        return t.uniform_(a, b)

    assert _outcome(ember, dtype, low, high, fill) == _outcome(torch, dtype, low, high, fill)


@pytest.mark.parametrize("dtype,low,high", [case for case in CASES if case[0] != "int64"][::3])
def test_init_uniform_bounds_as_pytorch(dtype, low, high):
    def fill(lib, t, a, b):
        return lib.nn.init.uniform_(t, a, b)

    assert _outcome(ember, dtype, low, high, fill) == _outcome(torch, dtype, low, high, fill)
