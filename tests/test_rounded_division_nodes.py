"""Rounded division and ops without a derivative record PyTorch's nodes: ``div(rounding_mode=...)`` a DivBackward2
(zeros as each operand's gradient), ``//``/``floor_divide``/``heaviside`` a ``NotImplemented`` node with an edge for
each operand that requires grad, whose backward raises PyTorch's error (``floor_divide_`` in place)."""

import pytest
import torch

import ember


def structure(t):
    """The node's name and its edges' names (None for an edge to nothing)."""
    fn = t.grad_fn
    if fn is None:
        return None
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


def both(fn):
    """``fn(lib, x, y)`` under PyTorch and ember, on x requiring grad and y (a tensor that does not)."""
    out = []
    for lib in (torch, ember):
        x = lib.tensor([1.5, -2.5, 3.0, -7.0], requires_grad=True)
        y = lib.tensor([2.0, 2.0, -1.0, 4.0])
        out.append((x, y, fn(lib, x, y)))
    return out


ROUNDED = {
    "div_floor": lambda lib, x, y: x.div(y, rounding_mode="floor"),
    "div_trunc": lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
    "div_number": lambda lib, x, y: x.div(2, rounding_mode="floor"),
    "div_other_requires": lambda lib, x, y: y.div(x, rounding_mode="trunc"),
    "div_both_require": lambda lib, x, y: x.div(y.requires_grad_(), rounding_mode="floor"),
    "div_broadcast": lambda lib, x, y: x.div(y[:, None].requires_grad_(), rounding_mode="floor"),
    "div_inplace": lambda lib, x, y: (x * 1).div_(y, rounding_mode="trunc"),
    "div_inplace_number": lambda lib, x, y: (x * 1).div_(3, rounding_mode="floor"),
}


@pytest.mark.parametrize("case", ROUNDED)
def test_rounded_div_records_div_backward2_with_zero_gradients(case):
    (tx, ty, t), (ex, ey, e) = both(ROUNDED[case])
    assert structure(e) == structure(t) and e.requires_grad and structure(t)[0] == "DivBackward2"
    assert e.tolist() == t.tolist()
    t.sum().backward()
    e.sum().backward()
    for a, b in ((tx, ex), (ty, ey)):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert b.grad.tolist() == a.grad.tolist() and b.grad.shape == a.grad.shape


def test_rounded_div_create_graph_gradient_does_not_require_grad():
    for lib in (torch, ember):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        (g,) = lib.autograd.grad(x.div(2.0, rounding_mode="floor").sum(), x, create_graph=True)
        assert g.tolist() == [0.0, 0.0] and not g.requires_grad


NO_DERIVATIVE = {
    "floordiv": (lambda lib, x, y: x // y, "floor_divide"),
    "floor_divide": (lambda lib, x, y: lib.floor_divide(x, y), "floor_divide"),
    "floordiv_number": (lambda lib, x, y: x // 2, "floor_divide"),
    "floordiv_other_requires": (lambda lib, x, y: y // x, "floor_divide"),
    "floordiv_both_require": (lambda lib, x, y: x // y.requires_grad_(), "floor_divide"),
    "floor_divide_inplace": (lambda lib, x, y: (x * 1).floor_divide_(y), "floor_divide_"),
    "ifloordiv": (lambda lib, x, y: _ifloordiv(x * 1, y), "floor_divide_"),
    "heaviside": (lambda lib, x, y: lib.heaviside(x, y), "heaviside"),
    "heaviside_values_require": (lambda lib, x, y: lib.heaviside(y, x), "heaviside"),
}


def _ifloordiv(z, y):
    z //= y
    return z


@pytest.mark.parametrize("case", NO_DERIVATIVE)
def test_no_derivative_ops_record_not_implemented(case):
    fn, op = NO_DERIVATIVE[case]
    (_, _, t), (_, _, e) = both(fn)
    assert structure(e) == structure(t) and structure(t)[0] == "NotImplemented"
    assert e.grad_fn.name() == t.grad_fn.name() == "torch::autograd::NotImplemented"
    assert repr(e).endswith("grad_fn=<NotImplemented>)") and repr(t).endswith("grad_fn=<NotImplemented>)")
    assert e.tolist() == t.tolist()
    with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not implemented"):
        t.sum().backward()
    with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not implemented"):
        e.sum().backward()


def test_no_derivative_ops_record_nothing_without_grad():
    for lib in (torch, ember):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        with lib.no_grad():
            assert not (x // 2).requires_grad and not x.div(2, rounding_mode="floor").requires_grad
        assert (lib.tensor([3, 4]) // 2).grad_fn is None


FORWARD = {
    "div_floor": lambda lib, a: a.div(2, rounding_mode="floor"),
    "div_trunc": lambda lib, a: lib.tensor([3.0, 4.0]).div(a, rounding_mode="trunc"),
    "floordiv": lambda lib, a: a // 2,
    "floor_divide_": lambda lib, a: (a * 1).floor_divide_(2),
    "heaviside": lambda lib, a: lib.heaviside(a, lib.tensor([0.5])),
}


@pytest.mark.parametrize("case", FORWARD)
def test_forward_ad(case):
    out = []
    for lib in (torch, ember):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            a = fwd.make_dual(lib.tensor([1.5, -2.5]), lib.tensor([1.0, 2.0]))
            try:
                tangent = fwd.unpack_dual(FORWARD[case](lib, a)).tangent
                out.append(None if tangent is None else tangent.tolist())
            except NotImplementedError as err:
                out.append(str(err))
    assert out[1] == out[0]
