"""Ops that order their elements (max/min in each overload, amax/amin, argmax/argmin, aminmax, clamp in each form,
hardtanh and relu6, the rounding functions, sign, fmax/fmin, maximum/minimum, cummax/cummin) refuse a complex tensor
with PyTorch's exception type and message: NumPy would order complex numbers lexicographically (hardtanh returned the
real part, fmax and cummax a value), and each PyTorch overload words its refusal differently (max(x) names its kernel,
max(x, dim) is a RuntimeError)."""

import pytest
from oracle import assert_same_error, assert_same_outcome


def _complex(m, dtype="complex64"):
    return m.tensor([[1 + 2j, -1j], [3, 0.5 - 1j]], dtype=getattr(m, dtype))


CALLS = {
    "max()": lambda m, x: x.max(),
    "torch.min()": lambda m, x: m.min(x),
    "max(dim)": lambda m, x: x.max(0),
    "min(dim, keepdim)": lambda m, x: x.min(1, keepdim=True),
    "max(dim) of 0-d": lambda m, x: x[0, 0].max(0),
    "torch.max(x, dim=)": lambda m, x: m.max(x, dim=-1),
    "amax()": lambda m, x: x.amax(),
    "amin(dim)": lambda m, x: m.amin(x, 0),
    "aminmax": lambda m, x: m.aminmax(x),
    "argmax()": lambda m, x: x.argmax(),
    "argmin(dim)": lambda m, x: x.argmin(0),
    "argmax(dim, keepdim)": lambda m, x: m.argmax(x, 1, keepdim=True),
    "sign": lambda m, x: x.sign(),
    "sign_": lambda m, x: x.sign_(),
    "clamp": lambda m, x: x.clamp(0, 1),
    "clamp(min)": lambda m, x: m.clamp(x, min=0),
    "clamp_min": lambda m, x: m.clamp_min(x, 0),
    "clamp_max": lambda m, x: x.clamp_max(1),
    "clamp_": lambda m, x: x.clamp_(0, 1),
    "clip": lambda m, x: x.clip(max=1),
    "clamp(tensor bounds)": lambda m, x: x.clamp(m.tensor(0.0), m.tensor(1.0)),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "hardtanh_": lambda m, x: m.nn.functional.hardtanh_(x),
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "Hardtanh module": lambda m, x: m.nn.Hardtanh(0, 2)(x),
    "round": lambda m, x: x.round(),
    "round(decimals=0)": lambda m, x: x.round(decimals=0),
    "round(decimals=2)": lambda m, x: m.round(x, decimals=2),
    "round_": lambda m, x: x.round_(),
    "floor": lambda m, x: x.floor(),
    "ceil": lambda m, x: m.ceil(x),
    "trunc": lambda m, x: x.trunc(),
    "floor_": lambda m, x: x.floor_(),
    "fix": lambda m, x: m.fix(x),
    "fmax": lambda m, x: m.fmax(x, x),
    "fmin(real, complex)": lambda m, x: m.fmin(x.real, x),
    "fmax(complex, real)": lambda m, x: m.fmax(x, x.real),
    "cummax": lambda m, x: m.cummax(x, 0),
    "cummin": lambda m, x: x.cummin(1),
}

# maximum/minimum (and max/min of two tensors): a complex operand, either one, PyTorch's RuntimeError
# ("maximum not implemented for complex tensors."), as fmax's
BINARY = {
    "maximum": lambda m, x: m.maximum(x, x),
    "minimum": lambda m, x: m.minimum(x, x),
    "max(x, other)": lambda m, x: m.max(x, x),
    "min(x, other)": lambda m, x: m.min(x, x),
    "maximum(real, complex)": lambda m, x: m.maximum(x.real, x),
    "minimum(complex, real)": lambda m, x: x.minimum(x.real),
    "maximum(complex, 0-d real)": lambda m, x: m.maximum(x, m.tensor(1.0)),
    "fmin(real, complex)": lambda m, x: m.fmin(x.real, x),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", list(BINARY))
def test_maximum_minimum_refuse_complex_as_pytorch(call, dtype):
    assert_same_error(lambda m: BINARY[call](m, _complex(m, dtype)))


REAL = {name: CALLS[name] for name in ("max(dim)", "max()", "amax()", "argmin(dim)", "clamp", "hardtanh", "round",
                                       "round(decimals=2)", "floor", "ceil", "trunc", "fix", "floor_", "sign", "fmax",
                                       "cummax")}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("call", list(REAL))
def test_the_same_calls_on_real_and_bool_tensors_as_pytorch(call, dtype):
    """Beside the refusals, each call on a real, integer or bool tensor: PyTorch's value or error (floor, ceil and
    trunc of bool kept the bools; PyTorch's kernels have no bool version)."""
    assert_same_outcome(lambda m: REAL[call](m, m.tensor([[1.5, -2.0], [3.0, 0.0]]).to(getattr(m, dtype))))


IN_PLACE_COMPARISONS = {
    "complex lt_ number": lambda m: _complex(m).lt_(1),
    "complex le_ real tensor": lambda m: _complex(m).le_(m.ones(2)),
    "complex128 gt_ complex": lambda m: _complex(m, "complex128").gt_(1j),
    "real ge_ complex number": lambda m: m.ones(2, 2).ge_(1j),
    "real lt_ complex tensor": lambda m: m.ones(2, 2).lt_(_complex(m)),
    "float64 gt_ complex number": lambda m: m.ones(2, dtype=m.float64).gt_(2 + 1j),
    "complex requiring grad le_": lambda m: (_complex(m).requires_grad_() * 1).le_(1),
}


@pytest.mark.parametrize("call", list(IN_PLACE_COMPARISONS))
def test_in_place_ordering_comparisons_refuse_complex_as_pytorch(call):
    """lt_, le_, gt_, ge_ with a complex tensor or number on either side: PyTorch's NotImplementedError naming the
    promoted dtype, as the out-of-place comparison (NumPy would compare lexicographically)."""
    assert_same_error(IN_PLACE_COMPARISONS[call])


@pytest.mark.parametrize("name", ["eq_", "ne_"])
def test_in_place_equality_of_complex_tensors_as_pytorch(name):
    assert_same_outcome(lambda m: getattr(_complex(m), name)(m.tensor([1 + 2j, 1j])))
