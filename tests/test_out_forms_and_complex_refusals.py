"""out= of any/all (a bool or uint8 out), the bit shifts, copysign and float_power (its out exactly the result's
dtype), and the refusals of complex input by erf/erfc (their kernels' NotImplementedError) and deg2rad/rad2deg
(PyTorch's RuntimeError), addr's out=, against PyTorch: ember took no out= for these, or raised another error type."""

import pytest
import torch

import ember

X = [[1.0, 0.0], [0.0, 0.0]]

CALLS = [
    lambda m: m.any(m.tensor(X), 1, out=m.empty(0, dtype=m.bool)),
    lambda m: m.all(m.tensor(X), dim=0, out=m.empty(0)),
    lambda m: m.any(m.tensor(X).to(m.uint8), 1, out=m.empty(0, dtype=m.bool)),
    lambda m: m.all(m.tensor(X), 1, out=m.empty(0, dtype=m.uint8)),
    lambda m: m.all(m.tensor(X), 1, out=m.empty(0, dtype=m.int8)),
    lambda m: m.any(m.tensor(X), out=m.empty(0, dtype=m.bool)),
    lambda m: m.bitwise_left_shift(m.tensor([1, 2]), 1, out=m.empty(0, dtype=m.int64)),
    lambda m: m.bitwise_right_shift(m.tensor([8, 2]), m.tensor([1, 1]), out=m.empty(0, dtype=m.int8)),
    lambda m: m.bitwise_right_shift(m.tensor([1.0]), m.tensor([1]), out=m.empty(0)),
    lambda m: m.copysign(m.ones(2, dtype=m.int16), m.ones(2, dtype=m.int64), out=m.empty(0, dtype=m.int16)),
    lambda m: m.copysign(m.ones(2), -1, out=m.empty(0)),
    lambda m: m.copysign(m.ones(2, dtype=m.complex64), -1, out=m.empty(0, dtype=m.complex64)),
    lambda m: m.float_power(m.ones(2, dtype=m.int64), 2.0, out=m.empty(0, dtype=m.int64)),
    lambda m: m.float_power(m.ones(2), 2, out=m.empty(0, dtype=m.float64)),
    lambda m: m.float_power(m.ones(2, dtype=m.complex64), 2, out=m.empty(0, dtype=m.complex64)),
    lambda m: m.erf(m.ones(3, dtype=m.complex64)), lambda m: m.erfc(m.ones(3, dtype=m.complex128)),
    lambda m: m.ones(3, dtype=m.complex64).erf_(), lambda m: m.deg2rad(m.ones(3, dtype=m.complex64)),
    lambda m: m.ones(3, dtype=m.complex64).rad2deg_(),
    lambda m: m.rad2deg(m.ones(3, dtype=m.complex64), out=m.empty(0, dtype=m.complex64)),
    # addr's out=: resized, cast into a wider float, refused for an integer out, a partial overlap or a gradient
    lambda m: m.addr(m.arange(6.0).reshape(2, 3), m.tensor([1.0, 2.0]), m.ones(3), beta=2, alpha=3, out=m.empty(0)),
    lambda m: m.addr(m.tensor(1.0), m.tensor([1.0, 2.0]), m.ones(3), out=m.empty(0, dtype=m.float64)),
    lambda m: m.addr(m.ones(2, 3), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64), out=m.empty(0)),
    lambda m: m.addr(m.ones(2, 3), m.ones(2), m.ones(3), out=m.empty(0, dtype=m.int64)),
    lambda m: m.addr((z := m.zeros(3, 3))[:2], m.ones(2), m.ones(3), out=z[1:]),
    lambda m: m.addr((z := m.ones(2, 3)), m.ones(2), m.ones(3), out=z),
    lambda m: m.addr(m.ones(2, 3), m.ones(2, requires_grad=True), m.ones(3), out=m.empty(0)),
    # a function without out=: Python's TypeError naming it as PyTorch's does
    lambda m: m.relu(m.ones(2), out=m.empty(2)),
]


@pytest.mark.parametrize("call", CALLS)
def test_as_pytorch(call):
    outcomes = []
    for m in (torch, ember):
        try:
            r = call(m)
            outcomes.append((str(r.dtype).rsplit(".", 1)[-1], r.tolist()))
        except Exception as e:  # noqa: BLE001 -- the error is what is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] == outcomes[0]
