"""Gradients PyTorch's backward kernels select rather than multiply (``ember/autograd/selected.py``): +0.0 where the
derivative is 0 whatever the incoming gradient (a product gives -0.0 for a negative one, NaN for an infinite or NaN
one), compared bit for bit, sign bits included, with PyTorch's, in each floating dtype, through the compiled kernels
and the NumPy reference, and under create_graph."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels.policy import policy

# each value against each incoming gradient: masked-out, kept, kink and edge inputs, NaN and the infinities
_X = [-4.0, -3.0, -2.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 2.5, 3.0, 7.0, float("nan"), float("inf"), float("-inf")]
_G = [-1.5, 1.5, -0.0, float("inf"), float("-inf"), float("nan")]
# a multiple of both lists' lengths, and past ``policy.min_compiled_elements``: the compiled kernels run on it
_N = 90 * 200

DTYPES = ["float32", "float64", "float16", "bfloat16"]
# at x = NaN PyTorch's vectorised kernels of these answer 0 and their scalar code g (ember's, as
# tests/test_nonfinite_activations.py says): those elements are left out here
_NAN_INPUT_SPLIT = {"hardshrink", "softshrink", "hardtanh", "hardtanh_inplace", "relu6", "relu6_inplace",
                    "hardswish", "hardswish_inplace"}


def _inputs():
    x = np.tile(np.repeat(np.array(_X), len(_G)), _N // (len(_X) * len(_G)))
    g = np.tile(np.array(_G), _N // len(_G))
    assert _N >= policy.min_compiled_elements
    return x, g


def _other(m, t):
    """maximum's/minimum's other operand: 0.5 everywhere (ties included), from a plain array."""
    return m.full_like(t, 0.5)


OPS = {
    "relu": lambda m, F, t: F.relu(t),
    "relu_inplace": lambda m, F, t: F.relu(t * 1, inplace=True),
    "threshold": lambda m, F, t: F.threshold(t, 0.5, -2.0),
    "threshold_inplace": lambda m, F, t: F.threshold(t * 1, 0.5, -2.0, inplace=True),
    "hardshrink": lambda m, F, t: F.hardshrink(t, 0.5),
    "softshrink": lambda m, F, t: F.softshrink(t, 0.5),
    "hardsigmoid": lambda m, F, t: F.hardsigmoid(t),
    "hardswish": lambda m, F, t: F.hardswish(t),
    "hardswish_inplace": lambda m, F, t: F.hardswish(t * 1, inplace=True),
    "hardtanh": lambda m, F, t: F.hardtanh(t, -2.0, 2.5),
    "hardtanh_inplace": lambda m, F, t: F.hardtanh(t * 1, -2.0, 2.5, inplace=True),
    "relu6": lambda m, F, t: F.relu6(t),
    "relu6_inplace": lambda m, F, t: F.relu6(t * 1, inplace=True),
    "clamp": lambda m, F, t: m.clamp(t, -2.0, 2.5),
    "clamp_min": lambda m, F, t: m.clamp_min(t, 0.5),
    "clamp_tensors": lambda m, F, t: m.clamp(t, m.full_like(t, -2.0), m.full_like(t, 2.5)),
    "clamp_max_tensor": lambda m, F, t: m.clamp_max(t, m.full_like(t, 2.5)),
    "maximum": lambda m, F, t: m.maximum(t, _other(m, t)),
    "maximum_other": lambda m, F, t: m.maximum(_other(m, t), t),
    "minimum": lambda m, F, t: m.minimum(t, _other(m, t)),
    "where": lambda m, F, t: m.where(t > 0.5, t, m.zeros_like(t)),
    "where_other": lambda m, F, t: m.where(t > 0.5, m.zeros_like(t), t),
    "masked_fill": lambda m, F, t: t.masked_fill(t > 0.5, 2.0),
    "masked_fill_tensor": lambda m, F, t: t.masked_fill(t > 0.5, m.tensor(2.0, dtype=t.dtype)),
}


def _assert_same_bits(got: np.ndarray, want: np.ndarray, what: str, compared=None) -> None:
    if compared is not None:
        got, want = got[compared], want[compared]
    np.testing.assert_array_equal(got, want, err_msg=what)
    signed = ~np.isnan(want)  # (a NaN's sign is no value's)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]), err_msg=what)


def _torch_grad(op, dtype, x, g):
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    OPS[op](torch, torch.nn.functional, tx).backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    return tx.grad.double().numpy()


def _ember_grad(op, dtype, x, g):
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    OPS[op](ember, ember.nn.functional, ex).backward(ember.tensor(g, dtype=getattr(ember, dtype)))
    return ex.grad.double().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_masked_out_gradient_is_pytorchs_positive_zero(op, dtype):
    """Each op's input gradient, compiled kernels and the NumPy reference both, is PyTorch's bit for bit: +0.0
    (not -0.0 nor NaN) where the op's derivative is 0, for a negative, infinite or NaN incoming gradient."""
    x, g = _inputs()
    want = _torch_grad(op, dtype, x, g)
    compared = ~np.isnan(x) if op in _NAN_INPUT_SPLIT else None
    for compiled in (True, False):
        with policy.override(compiled=compiled):
            _assert_same_bits(_ember_grad(op, dtype, x, g), want, f"{op} {dtype} compiled={compiled}", compared)


# (PyTorch has no derivative of hardsigmoid_backward)
@pytest.mark.parametrize("op", ["relu", "threshold", "hardshrink", "hardtanh", "maximum", "where"])
def test_masked_out_gradient_under_create_graph_is_pytorchs(op):
    """Under create_graph the first gradient is the same select (recorded): PyTorch's bits, and its gradient
    with respect to the incoming gradient too."""
    x, g = np.array(_X[:-3]), np.array([-1.5, float("inf")] * 6)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    (tgx,) = torch.autograd.grad(OPS[op](torch, torch.nn.functional, tx), tx, tg, create_graph=True)
    ex, eg = ember.tensor(x, requires_grad=True), ember.tensor(g, requires_grad=True)
    (egx,) = ember.autograd.grad(OPS[op](ember, ember.nn.functional, ex), ex, eg, create_graph=True)
    _assert_same_bits(egx.detach().numpy(), tgx.detach().numpy(), op)
    w = np.linspace(-2.0, 2.0, len(x))
    (tgg,) = torch.autograd.grad(tgx, tg, torch.tensor(-w))
    (egg,) = ember.autograd.grad(egx, eg, ember.tensor(-w))
    _assert_same_bits(egg.numpy(), tgg.numpy(), op + " second order")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardtanh_under_saved_tensor_hooks_selects_as_pytorch(dtype):
    """Under saved-tensor hooks hardtanh's node keeps no f' (made again from the unpacked input at backward): the
    gradient is still the select, PyTorch's bits, with and without the compiled pass."""
    x, g = _inputs()
    want = _torch_grad("hardtanh", dtype, x, g)
    for compiled in (True, False):
        with policy.override(compiled=compiled), ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            got = _ember_grad("hardtanh", dtype, x, g)
        _assert_same_bits(got, want, f"hardtanh {dtype} compiled={compiled}", ~np.isnan(x))


def test_clamp_bound_gradients_are_pytorchs_selects():
    """clamp's tensor bounds take the gradient where they clamp (+0.0 elsewhere, whatever g): PyTorch's bits."""
    x, g = _inputs()
    lo, hi = np.full_like(x, -2.0), np.where(np.arange(x.size) % 7 == 0, -3.0, 2.5)  # (max below min at some)
    grads = []
    for m in (torch, ember):
        tx, tlo, thi = (m.tensor(a, requires_grad=True) for a in (x, lo, hi))
        m.clamp(tx, tlo, thi).backward(m.tensor(g))
        grads.append([t.grad.numpy() for t in (tx, tlo, thi)])
    for name, want, got in zip(("x", "min", "max"), *grads):
        _assert_same_bits(got, want, "clamp's " + name)


def test_hardswish_gradient_is_pytorchs_to_the_last_bit():
    """hardswish's gradient: g (x / 3 + 1/2) between -3 and 3 (PyTorch's division, not x * (1/3), which differs in
    the last bit), g at and above 3, +0.0 at and below -3 whatever g, and g * 0 (-0.0, NaN) at x = -1.5 where the
    kernel multiplies; with saved-tensor hooks and under create_graph too."""
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        nd = getattr(np, dtype)
        edges = [-3.0, 3.0, -1.5, np.nextafter(nd(-3), nd(0)), np.nextafter(nd(3), nd(0)),
                 np.nextafter(nd(-3), nd(-4)), np.nextafter(nd(3), nd(4))]
        x = np.concatenate([rng.uniform(-3, 3, 4000).astype(nd), np.repeat(np.array(edges, nd), len(_G))])
        g = np.concatenate([rng.standard_normal(4000).astype(nd), np.tile(np.array(_G, nd), len(edges))])
        want = _torch_grad("hardswish", dtype, x, g)
        for compiled in (True, False):
            with policy.override(compiled=compiled):
                _assert_same_bits(_ember_grad("hardswish", dtype, x, g), want, f"{dtype} compiled={compiled}")
        with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            _assert_same_bits(_ember_grad("hardswish", dtype, x, g), want, f"{dtype} saved-tensor hooks")
        ex = ember.tensor(x, requires_grad=True)
        (egx,) = ember.autograd.grad(ember.nn.functional.hardswish(ex), ex, ember.tensor(g), create_graph=True)
        _assert_same_bits(egx.detach().double().numpy(), want, f"{dtype} create_graph")
