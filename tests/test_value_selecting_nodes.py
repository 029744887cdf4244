"""mode, cummax and cummin record one node each, as PyTorch's (ModeBackward0, CummaxBackward0, CumminBackward0),
with PyTorch's formula: the gradient added back at the indices (a scatter under create_graph); cummax and cummin
save their input (changing it in place before backward is PyTorch's error), mode does not."""

import numpy as np
import pytest
import torch

import ember

CASES = {
    "mode": lambda m, x: m.mode(x, 1)[0], "mode keepdim": lambda m, x: m.mode(x, 0, keepdim=True)[0],
    "mode 0-d": lambda m, x: m.mode(x.sum())[0], "mode 1-d": lambda m, x: x.sum(0).mode()[0],
    "cummax": lambda m, x: m.cummax(x, 1)[0], "cummin": lambda m, x: m.cummin(x, 0)[0],
    "cummax -1": lambda m, x: x.cummax(-1)[0], "cummin 0-d": lambda m, x: m.cummin(x.sum(), -1)[0],
    "cummax 0-d": lambda m, x: m.cummax(x.sum(), 0)[0],
}
VALUES = [[1.0, 2.0, 2.0, 0.5], [3.0, 3.0, 1.0, 1.0], [0.5, 4.0, 4.0, 4.0]]  # (ties: the indices PyTorch picks)


def _graph(fn) -> list:
    return [fn.name()] + [None if f is None else f.name().split("::")[-1] for f, _ in fn.next_functions]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_node_with_pytorchs_gradients(case, dtype):
    seen = []
    for m in (torch, ember):
        x = m.tensor(VALUES, dtype=getattr(m, dtype), requires_grad=True)
        out = CASES[case](m, x)
        g = m.autograd.grad((out * out).sum(), x, create_graph=True)[0]
        g2 = m.autograd.grad((g * g).sum(), x)[0]
        seen.append((_graph(out.grad_fn), out.detach().double().numpy(), g.detach().double().numpy(),
                     g2.double().numpy(), g.grad_fn.name()))
    (tg, to, t1, t2, tn), (eg, eo, e1, e2, en) = seen
    assert eg == tg
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(e1, t1)
    np.testing.assert_array_equal(e2, t2)
    if "0-d" not in case and case.startswith("cum"):  # (mode's: ember's scatter records as IndexPutBackward0)
        assert en == tn == "ScatterAddBackward0"


@pytest.mark.parametrize("op", ["cummax", "cummin", "mode"])
def test_the_input_changed_in_place_before_backward_is_pytorchs_error_for_cummax_and_cummin_only(op):
    raised = []
    for m in (torch, ember):
        x = m.tensor(VALUES, requires_grad=True)
        a = x * 1
        out = getattr(m, op)(a, 1)[0]
        a.mul_(2)
        try:
            out.sum().backward()
            raised.append(None)
        except RuntimeError as err:
            raised.append("modified by an inplace operation" in str(err))
    assert raised[1] == raised[0] == (None if op == "mode" else True)


@pytest.mark.parametrize("op", ["cummax", "cummin", "mode"])
def test_forward_mode_tangent_is_pytorchs(op):
    got = []
    for m in (torch, ember):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(m.tensor(VALUES, dtype=m.float64), m.arange(12, dtype=m.float64).reshape(3, 4))
            got.append(fwad.unpack_dual(getattr(m, op)(x, 1)[0]).tangent.numpy())
    np.testing.assert_array_equal(got[1], got[0])
