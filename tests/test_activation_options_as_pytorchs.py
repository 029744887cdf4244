"""The activations of ``ember/nn/_ops/activation.py`` (leaky_relu, gelu, silu, elu, softplus, hardtanh, relu6,
logsigmoid) with every keyword left to its default and set at its edges, against PyTorch: leaky_relu's slope 0, 1,
above 1 and negative (its no-gradient path takes ``max(x, slope x)`` only for 0 < slope <= 1), softplus exactly at
``beta x == threshold`` and with a negative beta or threshold, hardtanh exactly at its limits, equal and infinite
limits, ELU's alpha 0 and negative, GELU's two formulas.

Each case is evaluated on points that sit on its switches (the limits, the threshold, 0 and -0.0, values either side)
and beyond them, in float64, float32, float16 and bfloat16, on the compiled kernels and on the NumPy path, with the
input requiring grad and not (the forward differs: a kernel that skips f'(x), a shortcut without it), and against
PyTorch element by element (its scalar kernel code: a vectorised kernel may answer otherwise at a switch); then the
second derivative in float64 under create_graph; and each node, out of place and in place: the result is the input
(in place), the input's version counter moves by one, the node's name, the ``_saved_*`` attributes PyTorch exposes
(``_saved_result``, not ``_saved_self``, for the in-place forms that read their result) and the gradient.

(The special values -inf, inf and NaN of each activation: ``tests/test_nonfinite_activations.py``; PyTorch's error
when an in-place form's result is changed again before backward: ``tests/test_saved_versions.py``.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember._kernels.policy import policy

_INF = math.inf

# name -> (fn(F, x), points): the points sit on the case's switches and either side, all exact in bfloat16
CASES = {
    "leaky_relu default": (lambda F, x: F.leaky_relu(x), [-2.0, -0.5, -0.0, 0.0, 0.5, 2.0]),
    "leaky_relu slope 0": (lambda F, x: F.leaky_relu(x, 0.0), [-2.0, -0.0, 0.0, 0.5, 4.0]),
    "leaky_relu slope 1": (lambda F, x: F.leaky_relu(x, 1.0), [-2.0, -0.0, 0.0, 0.5]),
    "leaky_relu slope 1.5": (lambda F, x: F.leaky_relu(x, 1.5), [-2.0, -0.0, 0.0, 0.5]),
    "leaky_relu slope 0.5": (lambda F, x: F.leaky_relu(x, 0.5), [-2.0, -0.0, 0.0, 0.5]),
    "leaky_relu negative slope": (lambda F, x: F.leaky_relu(x, -0.25), [-2.0, -0.0, 0.0, 0.5]),
    "leaky_relu integer slope": (lambda F, x: F.leaky_relu(x, 2), [-2.0, -0.0, 0.0, 0.5]),
    "gelu default": (lambda F, x: F.gelu(x), [-4.0, -3.0, -1.0, -0.25, -0.0, 0.0, 0.25, 1.0, 3.0, 8.0]),
    "gelu tanh": (lambda F, x: F.gelu(x, approximate="tanh"), [-8.0, -3.0, -1.0, -0.25, -0.0, 0.0, 0.25, 1.0,
                                                                3.0, 8.0]),
    "silu": (lambda F, x: F.silu(x), [-20.0, -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, 20.0]),
    "elu default": (lambda F, x: F.elu(x), [-20.0, -1.0, -0.25, -0.0, 0.0, 0.25, 1.0]),
    "elu alpha 2": (lambda F, x: F.elu(x, 2.0), [-20.0, -1.0, -0.0, 0.0, 1.0]),
    "elu alpha 0": (lambda F, x: F.elu(x, 0.0), [-1.0, -0.0, 0.0, 1.0]),
    "elu negative alpha": (lambda F, x: F.elu(x, -0.5), [-1.0, -0.0, 0.0, 1.0]),
    "softplus default": (lambda F, x: F.softplus(x), [-30.0, -1.0, -0.0, 0.0, 1.0, 19.5, 20.0, 20.5, 30.0]),
    "softplus beta 2": (lambda F, x: F.softplus(x, beta=2.0), [-20.0, -1.0, 0.0, 1.0, 9.5, 10.0, 10.5, 20.0]),
    "softplus beta 0.5": (lambda F, x: F.softplus(x, beta=0.5), [-20.0, -1.0, 0.0, 1.0, 39.0, 40.0, 41.0]),
    "softplus threshold 1": (lambda F, x: F.softplus(x, threshold=1.0), [-2.0, 0.0, 0.5, 1.0, 1.5]),
    "softplus threshold 0": (lambda F, x: F.softplus(x, beta=2.0, threshold=0.0), [-2.0, -0.0, 0.0, 0.5]),
    "softplus negative threshold": (lambda F, x: F.softplus(x, threshold=-1.0), [-2.0, -1.0, -0.5, 0.0, 1.0]),
    "softplus negative beta": (lambda F, x: F.softplus(x, beta=-2.0, threshold=3.0),
                               [-3.0, -1.5, -1.0, 0.0, 1.0, 2.0]),
    "hardtanh default": (lambda F, x: F.hardtanh(x), [-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0]),
    "hardtanh limits": (lambda F, x: F.hardtanh(x, -0.5, 2.0), [-1.0, -0.5, 0.0, 1.0, 2.0, 3.0]),
    "hardtanh integer limits": (lambda F, x: F.hardtanh(x, -2, 3), [-3.0, -2.0, 0.0, 3.0, 4.0]),
    "hardtanh equal limits": (lambda F, x: F.hardtanh(x, 0.5, 0.5), [-1.0, 0.0, 0.5, 1.0]),
    "hardtanh infinite limits": (lambda F, x: F.hardtanh(x, -_INF, _INF), [-4.0, 0.0, 4.0]),
    "hardtanh positive limits": (lambda F, x: F.hardtanh(x, 1.0, 3.0), [0.0, 1.0, 2.0, 3.0, 4.0]),
    "relu6": (lambda F, x: F.relu6(x), [-1.0, -0.0, 0.0, 3.0, 6.0, 7.0]),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), [-40.0, -20.0, -1.0, -0.0, 0.0, 1.0, 20.0, 40.0]),
}

_TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
                 "bfloat16": torch.bfloat16}
# float64 and float32 to a few ulps, and an absolute tolerance where a formula cancels (PyTorch's scalar GELU in
# 1 + erf(x / sqrt 2) far below 0, 1e-16 in float64; both tanh-GELU derivatives' two terms near x = -3, 2e-7 in
# float32; ember's float32 GELU is a polynomial good to 1.5e-7); the half types computed in float32 and rounded
# once, as PyTorch's: one ulp of the half type (GELU's points stop at -4, where float32's 1 + erf still has digits)
_TOL = {"float64": (1e-13, 1e-15), "float32": (4e-6, 5e-7), "float16": (1e-3, 1e-7), "bfloat16": (8e-3, 1e-30)}
_PATHS = [pytest.param(False, id="numpy"),
          pytest.param(True, id="compiled", marks=pytest.mark.skipif(
              not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)"))]
# the compiled kernels' size thresholds lowered, so that these few points reach them
_LOW = {"min_compiled_elements": 0, "min_parallel_elements": 4, "min_elementwise_elements": 4}


def _torch_each(name, dtype, need):
    """PyTorch's values (and gradients when ``need``), each point on its own one-element tensor."""
    fn, points = CASES[name]
    ys, gs = [], []
    for v in points:
        x = torch.tensor([v], dtype=_TORCH_DTYPES[dtype], requires_grad=need)
        y = fn(TF, x)
        ys.append(y.double().item())
        if need:
            (g,) = torch.autograd.grad(y, x, torch.ones_like(y))
            gs.append(g.double().item())
    return str(y.dtype).split(".")[-1], np.array(ys), np.array(gs)


def _ember_all(name, dtype, need, repeat):
    """ember's values (and gradients) of all the points at once, each repeated ``repeat`` times (the compiled
    kernels' blocks and thread splits), the first copy of each returned."""
    fn, points = CASES[name]
    x = ember.tensor(np.repeat(np.array(points), repeat), dtype=getattr(ember, dtype), requires_grad=need)
    y = fn(EF, x)
    g = ember.autograd.grad(y, x, ember.ones_like(y))[0].double().numpy()[::repeat] if need else None
    return str(y.dtype).split(".")[-1], y.detach().double().numpy()[::repeat], g


def _assert_same(name, what, got, want, tol):
    rtol, atol = tol
    for v, a, b in zip(CASES[name][1], got, want):
        ok = (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= atol + rtol * abs(b)
        assert ok, f"{name}: {what} at x={v!r}: ember {a!r}, PyTorch {b!r}"


@pytest.mark.parametrize("compiled", _PATHS)
@pytest.mark.parametrize("need", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("dtype", list(_TORCH_DTYPES))
@pytest.mark.parametrize("name", list(CASES))
def test_value_and_gradient_at_the_options_edges_are_pytorchs(name, dtype, need, compiled):
    want_dtype, want_y, want_g = _torch_each(name, dtype, need)
    with policy.override(compiled=compiled, **_LOW):
        for repeat in (1, 9):
            got_dtype, got_y, got_g = _ember_all(name, dtype, need, repeat)
            assert got_dtype == want_dtype
            _assert_same(name, "value", got_y, want_y, _TOL[dtype])
            if need:
                _assert_same(name, "gradient", got_g, want_g, _TOL[dtype])


@pytest.mark.parametrize("compiled", _PATHS)
@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative_at_the_options_edges_is_pytorchs(name, compiled):
    """float64 under create_graph: the recorded derivative (a smooth activation's formula run again on recorded
    arrays) and its derivative, against PyTorch's double backward at each point; a piecewise-linear activation's
    gradient differentiates to zero."""
    fn, points = CASES[name]
    want_g, want_h = [], []
    for v in points:
        tx = torch.tensor([v], dtype=torch.float64, requires_grad=True)
        (tg,) = torch.autograd.grad(fn(TF, tx).sum(), tx, create_graph=True)
        th = torch.autograd.grad(tg.sum(), tx, allow_unused=True)[0] if tg.requires_grad else None
        want_g.append(tg.item())
        want_h.append(0.0 if th is None else th.item())
    with policy.override(compiled=compiled, **_LOW):
        ex = ember.tensor(points, dtype=ember.float64, requires_grad=True)
        (eg,) = ember.autograd.grad(fn(EF, ex).sum(), ex, create_graph=True)
        assert eg.requires_grad, "the gradient depends on x under create_graph, as PyTorch's"
        eh = ember.autograd.grad(eg.sum(), ex, allow_unused=True)[0]
    _assert_same(name, "create_graph gradient", eg.detach().numpy(), want_g, _TOL["float64"])
    got_h = np.zeros(len(points)) if eh is None else eh.numpy()
    _assert_same(name, "second derivative", got_h, want_h, _TOL["float64"])


def test_defaults_are_pytorchs_keywords():
    """Each activation called without its keywords computes what it computes with PyTorch's defaults spelled out."""
    x = np.array([-25.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 19.0, 20.0, 21.0])
    spelled = {
        "leaky_relu": lambda F, t: F.leaky_relu(t, negative_slope=0.01, inplace=False),
        "gelu": lambda F, t: F.gelu(t, approximate="none"),
        "silu": lambda F, t: F.silu(t, inplace=False),
        "elu": lambda F, t: F.elu(t, alpha=1.0, inplace=False),
        "softplus": lambda F, t: F.softplus(t, beta=1.0, threshold=20.0),
        "hardtanh": lambda F, t: F.hardtanh(t, min_val=-1.0, max_val=1.0, inplace=False),
        "relu6": lambda F, t: F.relu6(t, inplace=False),
        "logsigmoid": lambda F, t: F.logsigmoid(t),
    }
    for name, full in spelled.items():
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ey, ty = getattr(EF, name)(ex), getattr(TF, name)(tx)
        np.testing.assert_allclose(ey.detach().numpy(), full(TF, tx).detach().numpy(), rtol=1e-14, atol=1e-15,
                                   err_msg=name)
        np.testing.assert_allclose(ey.detach().numpy(), full(EF, ember.tensor(x)).numpy(), rtol=0, err_msg=name)
        ey.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-14, atol=1e-15, err_msg=name)


# name -> fn(F, h) on a non-leaf h (x * 1): the out-of-place forms, with options given and not, and the in-place ones
NODES = {
    "leaky_relu": lambda F, h: F.leaky_relu(h),
    "leaky_relu slope": lambda F, h: F.leaky_relu(h, 0.2),
    "leaky_relu inplace": lambda F, h: F.leaky_relu(h, 0.2, inplace=True),
    "leaky_relu_": lambda F, h: F.leaky_relu_(h, 0.3),
    "gelu": lambda F, h: F.gelu(h),
    "gelu tanh": lambda F, h: F.gelu(h, approximate="tanh"),
    "silu": lambda F, h: F.silu(h),
    "elu": lambda F, h: F.elu(h),
    "elu alpha": lambda F, h: F.elu(h, 0.5),
    "elu inplace": lambda F, h: F.elu(h, 2.0, inplace=True),
    "elu_": lambda F, h: F.elu_(h, 0.5),
    "selu": lambda F, h: F.selu(h),
    "selu inplace": lambda F, h: F.selu(h, inplace=True),
    "celu": lambda F, h: F.celu(h, 2.0),
    "celu inplace": lambda F, h: F.celu(h, 2.0, inplace=True),
    "softplus": lambda F, h: F.softplus(h),
    "softplus options": lambda F, h: F.softplus(h, 2.0, 5.0),
    "hardtanh": lambda F, h: F.hardtanh(h),
    "hardtanh limits": lambda F, h: F.hardtanh(h, -0.5, 1.5),
    "relu6": lambda F, h: F.relu6(h),
    "logsigmoid": lambda F, h: F.logsigmoid(h),
    "threshold": lambda F, h: F.threshold(h, 0.5, -3.0),
}
# PyTorch's in-place forms that keep a copy of their input for backward (``_saved_self``: the values before the
# call; ember keeps no copy: its node reads the derivative it saved)
KEEP_INPUT = {
    "silu inplace": lambda F, h: F.silu(h, inplace=True),
    "hardtanh inplace": lambda F, h: F.hardtanh(h, -0.5, 1.5, inplace=True),
    "hardtanh_": lambda F, h: F.hardtanh_(h),
    "relu6 inplace": lambda F, h: F.relu6(h, inplace=True),
    "threshold inplace": lambda F, h: F.threshold(h, 0.5, -3.0, inplace=True),
}
# PyTorch's ``_saved_*`` that ember's nodes do not expose: log_sigmoid's kernel buffer exp(-|x|) (its CPU kernel's
# intermediate; ember's formula saves the derivative)
NOT_EXPOSED = {"_saved_buffer"}


def _node_record(m, F, fn):
    """What a program sees of the op's node: its name, whether the result is the input and by how many versions the
    input moved, each ``_saved_*`` attribute PyTorch's node has (tensors as lists), the input's gradient."""
    x = m.tensor([-1.5, -0.5, 0.0, 0.5, 2.0, 7.0], dtype=m.float64, requires_grad=True)
    h = x * 1
    before = h._version
    y = fn(F, h)
    node = y.grad_fn
    record = {"name": type(node).__name__, "is input": y is h, "versions": h._version - before}
    return x, y, node, record


def _saved(node, names):
    out = {}
    for a in names:
        v = getattr(node, a)
        out[a] = v.tolist() if hasattr(v, "tolist") else v
    return out


@pytest.mark.parametrize("case", list(NODES))
def test_node_name_versions_and_saved_attributes_are_pytorchs(case):
    tx, ty, tnode, want = _node_record(torch, TF, NODES[case])
    ex, ey, enode, got = _node_record(ember, EF, NODES[case])
    names = sorted(a for a in dir(tnode) if a.startswith("_saved_") and a not in NOT_EXPOSED)
    assert names, "PyTorch's node saves something"
    want["saved"], got["saved"] = _saved(tnode, names), _saved(enode, names)
    # the form that reads its result has no _saved_self, as PyTorch's
    want["has self"], got["has self"] = hasattr(tnode, "_saved_self"), hasattr(enode, "_saved_self")
    want["has result"], got["has result"] = hasattr(tnode, "_saved_result"), hasattr(enode, "_saved_result")
    ty.backward(torch.linspace(0.5, 1.5, 6, dtype=torch.float64))
    ey.backward(ember.tensor(np.linspace(0.5, 1.5, 6)))
    want["grad"], got["grad"] = tx.grad.tolist(), ex.grad.tolist()
    for key in want:
        if key == "saved":
            for a in names:
                if isinstance(want["saved"][a], str):  # (gelu's approximate)
                    assert got["saved"][a] == want["saved"][a], f"{case}: {a}"
                else:
                    np.testing.assert_allclose(got["saved"][a], want["saved"][a], rtol=1e-12, err_msg=f"{case}: {a}")
        elif key == "grad":
            np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-12, err_msg=case)
        else:
            assert got[key] == want[key], f"{case}: {key}"


@pytest.mark.parametrize("case", list(KEEP_INPUT))
def test_inplace_forms_that_keep_their_input(case):
    """The node's name, the version and the gradient as PyTorch's; its ``_saved_self`` is PyTorch's copy of the
    input before the call, which ember does not keep (it reads as the input now)."""
    tx, ty, tnode, want = _node_record(torch, TF, KEEP_INPUT[case])
    ex, ey, enode, got = _node_record(ember, EF, KEEP_INPUT[case])
    assert got == want
    ty.backward(torch.linspace(0.5, 1.5, 6, dtype=torch.float64))
    ey.backward(ember.tensor(np.linspace(0.5, 1.5, 6)))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
