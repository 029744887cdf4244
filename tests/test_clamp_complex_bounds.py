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
