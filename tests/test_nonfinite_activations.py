"""Activations and the elementwise ops whose gradients are comparisons, at infinities, NaN, signed zeros, huge
values and kinks, against PyTorch: forward values and gradients (NaN where PyTorch gives NaN), float32 and
float64, on the NumPy reference and on the compiled kernels, first order and under create_graph.

The oracle is PyTorch on a one-element tensor, which its CPU kernels compute with their scalar code on every
x86-64 machine. (At NaN a few of PyTorch's vectorised kernels answer otherwise, e.g. hardtanh's gradient 0 instead
of 1, so an element's answer there depends on its position in a tensor and on the CPU; ember gives the scalar
code's answer at every position, which the whole-vector evaluation here checks.)
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember._kernels.policy import policy

SPECIAL = [-math.inf, -1e30, -1.0, -0.0, 0.0, 1.0, 1e30, math.inf, math.nan]
KINKS = [-3.0, -2.0, -0.5, 0.5, 2.0, 3.0, 6.0, 1e-30, -1e-30]  # where pieces meet (hardswish, shrinks, bounds)


def _cases(F, m):
    return {
        "relu": lambda x: F.relu(x),
        "relu6": lambda x: F.relu6(x),
        "hardtanh": lambda x: F.hardtanh(x, -2.0, 3.0),
        "elu": lambda x: F.elu(x, 0.5),
        "selu": lambda x: F.selu(x),
        "celu": lambda x: F.celu(x, 2.0),
        "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
        "leaky_relu_steep": lambda x: F.leaky_relu(x, 2.0),
        "rrelu": lambda x: F.rrelu(x),
        "prelu": lambda x: F.prelu(x, m.tensor([0.25], dtype=x.dtype)),
        "gelu": lambda x: F.gelu(x),
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "logsigmoid": lambda x: F.logsigmoid(x),
        "hardshrink": lambda x: F.hardshrink(x),
        "softshrink": lambda x: F.softshrink(x),
        "tanhshrink": lambda x: F.tanhshrink(x),
        "softsign": lambda x: F.softsign(x),
        "softplus": lambda x: F.softplus(x),
        "softplus_beta": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
        "softplus_negative_beta": lambda x: F.softplus(x, beta=-1.0),
        "tanh": lambda x: F.tanh(x),
        "sigmoid": lambda x: F.sigmoid(x),
        "hardsigmoid": lambda x: F.hardsigmoid(x),
        "silu": lambda x: F.silu(x),
        "mish": lambda x: F.mish(x),
        "hardswish": lambda x: F.hardswish(x),
        "threshold": lambda x: F.threshold(x, 0.5, -3.0),
        "logit": lambda x: m.logit(x),
        "logit_eps": lambda x: m.logit(x, eps=1e-6),
        "logit_wide_eps": lambda x: m.special.logit(x, eps=0.3),
        "logit_shifted": lambda x: m.logit(x * 1e-30 + 0.5),
        "softmax": lambda x: F.softmax(x.reshape(-1, 1), dim=1).reshape(-1),
        "log_softmax": lambda x: F.log_softmax(x.reshape(-1, 1), dim=1).reshape(-1),
        "glu": lambda x: F.glu(m.stack([x, -x], -1), -1).reshape(-1),
        # in place, on a non-leaf (PyTorch's in-place kernels read the result for elu's family)
        "relu_": lambda x: F.relu(x * 1, inplace=True),
        "relu6_": lambda x: F.relu6(x * 1, inplace=True),
        "elu_": lambda x: F.elu(x * 1, inplace=True),
        "selu_": lambda x: F.selu(x * 1, inplace=True),
        "celu_": lambda x: F.celu(x * 1, 2.0, inplace=True),
        "hardtanh_": lambda x: F.hardtanh(x * 1, inplace=True),
        "threshold_": lambda x: F.threshold(x * 1, 0.5, -3.0, inplace=True),
        "hardswish_": lambda x: F.hardswish(x * 1, inplace=True),
        "hardsigmoid_": lambda x: F.hardsigmoid(x * 1, inplace=True),
        "silu_": lambda x: F.silu(x * 1, inplace=True),
        "mish_": lambda x: F.mish(x * 1, inplace=True),
        "logit_": lambda x: (x * 1).logit_(),
        # elementwise ops whose gradients are comparisons or sign functions
        "abs": lambda x: x.abs(),
        "sign": lambda x: x.sign() + x,
        "maximum": lambda x: m.maximum(x, m.full_like(x, 0.5)),
        "maximum_other": lambda x: m.maximum(m.full_like(x, 0.5), x),
        "minimum": lambda x: m.minimum(x, m.full_like(x, 0.5)),
        "minimum_other": lambda x: m.minimum(m.full_like(x, 0.5), x),
        "clamp": lambda x: m.clamp(x, -1.0, 1.0),
        "sqrt_pow": lambda x: x ** 0.5,
        "l1_norm": lambda x: m.linalg.vector_norm(x.reshape(-1, 1), 1, dim=1),
    }


TORCH, EMBER = _cases(TF, torch), _cases(EF, ember)
VALUES = SPECIAL + KINKS


def _torch_each(name, dtype):
    """PyTorch's value and gradient at each input, each on its own one-element tensor (its scalar kernel code)."""
    ys, gs = [], []
    for v in VALUES:
        x = torch.tensor([v], dtype=dtype, requires_grad=True)
        y = TORCH[name](x)
        y.backward(torch.ones_like(y))
        ys.append(y.item())
        gs.append(x.grad.item())
    return np.array(ys), np.array(gs)


def _ember(name, dtype, repeat, create_graph=False):
    """ember's values and gradients for all the inputs at once: ``repeat`` copies of each (long arrays take the
    compiled kernels' blocks and the intra-op threads), the first copy's returned."""
    x = ember.tensor(np.repeat(np.array(VALUES), repeat), dtype=dtype, requires_grad=True)
    y = EMBER[name](x)
    (g,) = ember.autograd.grad(y, x, ember.ones_like(y), create_graph=create_graph)
    return y.detach().numpy().astype(np.float64)[::repeat], g.detach().numpy().astype(np.float64)[::repeat]


def _assert_same(name, what, got, want, rtol, atol=0.0):
    for v, a, b in zip(VALUES, got, want):
        ok = (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= atol + rtol * abs(b)
        assert ok, f"{name} {what} at x={v!r}: ember {a!r}, PyTorch {b!r}"


_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}
# NaN and infinities exactly; finite results to a few ulps, plus the absolute tolerance of the activation tests
# (test_nn_activations_more.py): ember's float32 GELU is a polynomial good to 1.5e-7 absolute (0.004 at x = -3
# is then 4e-5 relative) and PyTorch's own float32 GELU and tanh round differently
_RTOL = {"float32": 4e-7 * 8, "float64": 2e-16 * 8}
_ATOL = {"float32": 2e-6, "float64": 1e-12}
_PATHS = [pytest.param(False, id="numpy"),
          pytest.param(True, id="compiled", marks=pytest.mark.skipif(
              not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)"))]


# ELU's family at a NaN: PyTorch's scalar loop (the one-element tensors here) gives the gradient ``scale``, its
# vectorised loop (every tensor's elements but the last few) NaN, which ember gives (test_exp_linear_signed_zeros.py)
_NAN_GRADIENT_AT_NAN = {"elu", "selu", "celu", "elu_", "selu_", "celu_"}


@pytest.mark.parametrize("compiled", _PATHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(TORCH))
def test_nonfinite_and_kinks_match_pytorch(name, dtype, compiled):
    want_y, want_g = _torch_each(name, _TORCH_DTYPES[dtype])
    if name in _NAN_GRADIENT_AT_NAN:
        want_g = np.where(np.isnan(np.array(VALUES, np.float64)), np.nan, want_g)
    with policy.override(compiled=compiled):
        for repeat in (1, 300):
            got_y, got_g = _ember(name, getattr(ember, dtype), repeat)
            _assert_same(name, "value", got_y, want_y, _RTOL[dtype], _ATOL[dtype])
            _assert_same(name, "gradient", got_g, want_g, _RTOL[dtype], _ATOL[dtype])


@pytest.mark.parametrize("name", [n for n in TORCH if not n.endswith("_")])
def test_create_graph_gradient_matches_first_order(name):
    """Under create_graph the smooth activations compute their derivative again from the recorded input (their
    own formula written for recorded arrays): the same values as the first-order pass, infinities and NaN
    included."""
    _, first = _ember(name, ember.float64, 1)
    _, recorded = _ember(name, ember.float64, 1, create_graph=True)
    _assert_same(name, "create_graph gradient", recorded, first, 1e-15)


def test_small_negative_inputs_keep_their_precision():
    """SELU/CELU/ELU use expm1 (exp(x) - 1 rounds -1e-8 to 0 in float32); the logistic function behind softplus's,
    logsigmoid's and mish's derivatives keeps its precision far below 0 (the tanh form gave 0 at -20)."""
    x = np.array([-1e-8, -1e-20, -20.0, -30.0], np.float32)
    for name in ("selu", "celu", "elu", "softplus", "logsigmoid", "mish", "silu"):
        tx = torch.tensor(x, requires_grad=True)
        ty = TORCH[name](tx)
        ty.sum().backward()
        ex = ember.tensor(x, requires_grad=True)
        ey = EMBER[name](ex)
        ey.sum().backward()
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=0, err_msg=name)
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=0, err_msg=name)


_SECOND_ORDER = {
    "softplus": lambda F, m, x: F.softplus(x),
    "softplus_beta": lambda F, m, x: F.softplus(x, beta=2.0, threshold=5.0),
    "logsigmoid": lambda F, m, x: F.logsigmoid(x),
    "silu": lambda F, m, x: F.silu(x),
    "mish": lambda F, m, x: F.mish(x),
    "elu": lambda F, m, x: F.elu(x, 0.5),
    "selu": lambda F, m, x: F.selu(x),
    "celu": lambda F, m, x: F.celu(x, 2.0),
    "bce_with_logits": lambda F, m, x: F.binary_cross_entropy_with_logits(x, m.full_like(x, 0.3), reduction="none"),
}
_SMOOTH_POINTS = [-3.0, -0.5, -1e-30, -0.0, 0.0, 1e-30, 0.5, 3.0]  # the kinks of the formulas' pieces at 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_SECOND_ORDER))
def test_second_derivatives_at_zero_match_pytorch(name, dtype):
    # differentiating the recorded derivative: the logistic function behind softplus, logsigmoid, silu, mish and
    # BCE-with-logits has s' = 1/4 at 0 (its overflow-free form's max and |x| have kinks there), ELU's family
    # takes x < 0 for its second derivative as PyTorch's (0 at x = 0, not half of alpha)
    fn = _SECOND_ORDER[name]
    want = []
    for v in _SMOOTH_POINTS:  # PyTorch element by element (its scalar kernels)
        tx = torch.tensor([v], dtype=_TORCH_DTYPES[dtype], requires_grad=True)
        (tg,) = torch.autograd.grad(fn(TF, torch, tx).sum(), tx, create_graph=True)
        (th,) = torch.autograd.grad(tg.sum(), tx)
        want.append(th.item())
    ex = ember.tensor(_SMOOTH_POINTS, dtype=getattr(ember, dtype), requires_grad=True)
    (eg,) = ember.autograd.grad(fn(EF, ember, ex).sum(), ex, create_graph=True)
    (eh,) = ember.autograd.grad(eg.sum(), ex)
    _assert_same(name, "second derivative", eh.numpy().astype(np.float64), want, _RTOL[dtype], _ATOL[dtype])
