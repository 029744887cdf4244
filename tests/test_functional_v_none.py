"""``torch.autograd.functional``'s vjp, jvp, vhp and hvp with ``v`` left out, for each kind of input and output,
against PyTorch: the result, or its error word for word.

``v`` may be left out only where the vector it stands for has one element: one output tensor of one element (vjp),
one input tensor of one element (jvp, vhp, hvp). The check reads both the count of tensors and their size, so the
table puts one off at a time: one tensor of three elements, two tensors of one element, a tuple of one."""

import numpy as np
import pytest
import torch

import ember

INPUTS = {
    "one element": lambda m: m.tensor([0.5], dtype=m.float64),
    "0-d": lambda m: m.tensor(0.5, dtype=m.float64),
    "three elements": lambda m: m.tensor([0.5, -1.0, 2.0], dtype=m.float64),
    "tuple of one element": lambda m: (m.tensor([0.5], dtype=m.float64),),
    "two of one element": lambda m: (m.tensor([0.5], dtype=m.float64), m.tensor([2.0], dtype=m.float64)),
}


def _scalar_of(m, inputs):
    """A function of every input whose output is one element (vhp and hvp need a scalar)."""
    def f(*xs):
        return sum((x ** 3).sum() for x in xs)
    return f


def _elementwise(m, inputs):
    """A function whose output has the first input's shape (and a tuple for a tuple of inputs)."""
    def f(*xs):
        outs = tuple(x.sin() * 2 for x in xs)
        return outs if isinstance(inputs, tuple) else outs[0]
    return f


def _run(m, api, case, fn):
    inputs = INPUTS[case](m)
    f = (_scalar_of if fn == "scalar" else _elementwise)(m, inputs)
    try:
        out = getattr(m.autograd.functional, api)(f, inputs)
    except Exception as err:  # noqa: BLE001 -- the error is what is compared
        return type(err).__name__, str(err)
    flat = []
    for part in out:
        flat += list(part) if isinstance(part, tuple) else [part]
    return "ok", [p.detach().numpy() for p in flat]


@pytest.mark.parametrize("fn", ["scalar", "elementwise"])
@pytest.mark.parametrize("case", sorted(INPUTS))
@pytest.mark.parametrize("api", ["vjp", "jvp", "vhp", "hvp"])
def test_v_left_out_as_torch(api, case, fn):
    got, want = _run(ember, api, case, fn), _run(torch, api, case, fn)
    assert got[0] == want[0], (got, want)
    if got[0] != "ok":
        assert got[1] == want[1]
        return
    assert len(got[1]) == len(want[1])
    for e, t in zip(got[1], want[1]):
        np.testing.assert_allclose(e, t, rtol=1e-12)
