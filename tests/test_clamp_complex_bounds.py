"""clamp with a complex tensor bound of a real input, against PyTorch: its kernels have no complex clamp
(NotImplementedError naming clamp_cpu, maximum_cpu for a lower bound alone, minimum_cpu for an upper one), and in
place the result type's cast into the input is refused first (RuntimeError); ember computed a complex result."""

import pytest
import torch

import ember


def _complex(m):
    return m.ones(1, dtype=m.complex128)


@pytest.mark.parametrize("call", [
    lambda m, x: x.clamp(_complex(m), m.ones(1, dtype=m.bool)), lambda m, x: x.clamp(_complex(m)),
    lambda m, x: x.clamp(None, _complex(m)), lambda m, x: m.clamp(x, _complex(m), m.ones(1)),
    lambda m, x: m.clip(x, max=_complex(m)), lambda m, x: x.clamp_min(_complex(m)),
    lambda m, x: x.clone().clamp_(_complex(m)), lambda m, x: x.clone().clamp_(max=_complex(m)),
])
def test_a_complex_tensor_bound_is_refused_as_pytorch(call):
    errors = []
    for m in (torch, ember):
        with pytest.raises((NotImplementedError, RuntimeError)) as info:
            call(m, m.ones(4))
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


def test_real_tensor_bounds_still_clamp():
    for m in (torch, ember):
        x = m.tensor([-2.0, 0.5, 3.0])
        assert x.clamp(m.zeros(1, dtype=m.float64), m.ones(1)).tolist() == [0.0, 0.5, 1.0]
        assert x.clone().clamp_(m.zeros(1, dtype=m.float64)).tolist() == [0.0, 0.5, 3.0]


# complex number bounds: clamp of a floating input reads each as a double (its real part; an imaginary part is
# PyTorch's conversion error), clamp_min/clamp_max and clamp of an integer input promote to a complex result, which
# no clamp kernel takes
_NUMBER_BOUNDS = [(1 + 2j, None), (None, 1 + 2j), (1 + 0j, None), (None, 2 + 0j), (-1 + 0j, 1 + 0j), (-1 + 1j, 1 + 0j),
                  (-1, 1 + 0j), (-1, 2j), (0.5, -1j), (-0j, None)]
_NUMBER_CALLS = {
    "clamp": lambda m, x, lo, hi: m.clamp(x, lo, hi),
    "clip": lambda m, x, lo, hi: m.clip(x, lo, hi),
    "Tensor.clamp": lambda m, x, lo, hi: x.clamp(lo, hi),
    "Tensor.clamp_": lambda m, x, lo, hi: x.clone().clamp_(lo, hi),
    "Tensor.clip_": lambda m, x, lo, hi: x.clone().clip_(lo, hi),
    "clamp_min": lambda m, x, lo, hi: m.clamp_min(x, _complex_of(lo, hi)),
    "Tensor.clamp_max_": lambda m, x, lo, hi: x.clone().clamp_max_(_complex_of(lo, hi)),
}


def _complex_of(lo, hi):
    return lo if isinstance(lo, complex) else hi


def _outcome(m, call, dtype, lo, hi):
    x = m.tensor([0.5, -2.0, 3.0, 0.0]).to(getattr(m, dtype))
    try:
        out = call(m, x, lo, hi)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        return type(e).__name__, str(e)
    return str(out.dtype).rpartition(".")[2], out.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("lo, hi", _NUMBER_BOUNDS)
@pytest.mark.parametrize("name", list(_NUMBER_CALLS))
def test_a_complex_number_bound_as_pytorch(name, lo, hi, dtype):
    call = _NUMBER_CALLS[name]
    assert _outcome(ember, call, dtype, lo, hi) == _outcome(torch, call, dtype, lo, hi)
