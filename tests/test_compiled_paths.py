"""Every compiled kernel of the activations and normalisations (ReLU's and hardtanh's gradients, LeakyReLU, GELU,
SiLU, BatchNorm's channel kernels, LayerNorm's and RMSNorm's row kernels) against the NumPy path it replaces and
against PyTorch, on the shapes where a kernel's loops or a dispatch's conditions are at their edges: empty, one
element, one row, one feature or channel, size-1 dims, a 0-d tensor, a transposed (non-contiguous) input; float32
and float64; and every subset of the inputs requiring a gradient (the kernels skip what is not needed).

Each case also runs with the kernels' loops interpreted (``kernel.py``: the same code, run by Python on the NumPy
arrays): numba's compiled code does not check indices, so a kernel that reads or writes past an array (an output
not needed, passed as an empty placeholder, written all the same) corrupts memory silently there and raises
IndexError here.

The size thresholds are lowered (``policy.override``) so that these small arrays reach the compiled kernels and are
split over the threads, and each case checks which path ran: the kernel is called on the compiled run exactly
where its dispatch takes it, never on the NumPy run. The focused tests beside each kernel (``tests/test_kernels.py``)
compare bits on large arrays; these compare values over the edges, where a slip in a condition or an index (a
kernel taken where it should not be, a gradient skipped, a row too many) shows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import ember
from ember._kernels import activation as k_act
from ember._kernels import batch_norm as k_bn
from ember._kernels import norm as k_norm
from ember._kernels import policy

pytestmark = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")

# small arrays reach the kernels (and thread splits): min_compiled_elements gates ReLU's gradient kernel
_LOW = {"min_compiled_elements": 0, "min_parallel_elements": 4, "min_elementwise_elements": 4}

_KERNELS = [(k_act, "relu_grad"), (k_act, "hardtanh_grad"), (k_act, "leaky_relu"), (k_act, "gelu_erf"), (k_act, "gelu_erf64"), (k_act, "silu"),
            (k_bn, "forward"), (k_bn, "backward"), (k_norm, "layer_norm"), (k_norm, "layer_norm_grad")]


def _tol(dtype):
    return {"rtol": 2e-5, "atol": 2e-6} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


def _run(m, op, arrays, needs, fortran=False):
    """op's outputs and the gradients of the inputs in ``needs`` (a backward of a fixed random gradient);
    ``fortran``: the first input reaches op as a column-major view of its leaf (the same values and shape)."""
    ts = [None if a is None else m.tensor(a, requires_grad=bool(n)) for a, n in zip(arrays, needs)]
    first = ts[0].mT.contiguous().mT if fortran else ts[0]
    assert fortran == (first.ndim == 2 and not first.is_contiguous())
    out = op(m, first, *ts[1:])
    outs = [out.detach().numpy().copy()]
    if any(needs):
        g = np.random.default_rng(1).standard_normal(out.shape).astype(arrays[0].dtype)
        out.backward(m.tensor(g))
        outs += [t.grad.numpy().copy() for t, n in zip(ts, needs) if n]
    return outs


def _both_paths(monkeypatch, op, arrays, needs, fortran=False, interpreted=False):
    """(compiled outputs, NumPy outputs, the kernels the compiled run called); the NumPy run must call none.
    ``interpreted``: the compiled run calls each kernel's Python loop instead (every index checked)."""
    calls: list[str] = []
    for module, name in _KERNELS:
        fn = getattr(module, name)
        fn = fn.py if interpreted else fn
        monkeypatch.setattr(module, name, lambda *a, _fn=fn, _name=name: calls.append(_name) or _fn(*a))
    with policy.override(compiled=True, **_LOW):
        fast = _run(ember, op, arrays, needs, fortran)
    compiled_calls = set(calls)
    calls.clear()
    with policy.override(compiled=False, **_LOW):
        ref = _run(ember, op, arrays, needs, fortran)
    assert not calls, f"the NumPy run called {calls}"
    return fast, ref, compiled_calls


def _compare(fast, ref, expected, dtype, torch_tol=None):
    assert len(fast) == len(ref) == len(expected)
    for a, r, e in zip(fast, ref, expected):
        assert a.shape == r.shape == e.shape and a.dtype == r.dtype == e.dtype
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_allclose(a, r, **_tol(dtype))
        np.testing.assert_allclose(a, e, **(torch_tol or _tol(dtype)))


# ------------------------------------------------------------------------------------------------ pointwise
_F = lambda m: m.nn.functional  # noqa: E731

POINTWISE = {
    # name -> (op, the kernels its compiled path runs, the dtypes they take)
    "relu": (lambda m, x: _F(m).relu(x), {"relu_grad"}, (np.float32, np.float64)),
    "hardtanh": (lambda m, x: _F(m).hardtanh(x, -1.0, 1.5), {"hardtanh_grad"}, (np.float32, np.float64)),
    "leaky_relu": (lambda m, x: _F(m).leaky_relu(x, 0.1), {"leaky_relu"}, (np.float32, np.float64)),
    "leaky_relu_steep": (lambda m, x: _F(m).leaky_relu(x, 1.5), {"leaky_relu"}, (np.float32, np.float64)),
    "gelu": (lambda m, x: _F(m).gelu(x), {"gelu_erf", "gelu_erf64"}, (np.float32, np.float64)),
    "gelu_tanh": (lambda m, x: _F(m).gelu(x, approximate="tanh"), set(), ()),
    "silu": (lambda m, x: _F(m).silu(x), {"silu"}, (np.float32,)),
}
SHAPES = {"empty": (0,), "empty_2d": (3, 0), "one": (1,), "scalar": (), "column": (5, 1), "row": (1, 6),
          "size1_dims": (1, 7, 1), "wide": (4, 33), "transposed": (4, 9)}
# GELU in float32: the NumPy path computes erfc by Abramowitz & Stegun 7.1.26 (absolute error 1.5e-7), the compiled
# kernel exp by a polynomial: both within 1e-6 of PyTorch's (float64: the C library's erfc on both paths)
_GELU_TOL = {"rtol": 2e-5, "atol": 1e-6}


def _values(shape, dtype, seed=0):
    """Normal values with zeros, ties at the kernels' branch points and both signs of zero where there is room."""
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    flat = x.reshape(-1)
    flat[:4] = [0.0, -0.0, 1e-30, -2.5][:flat.size]
    return x.astype(dtype)


@pytest.mark.parametrize("interpreted", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("need", [True, False])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("name", list(POINTWISE))
def test_pointwise_compiled_and_numpy_paths_match_torch(monkeypatch, name, shape, need, dtype, interpreted):
    op, kernels, dtypes = POINTWISE[name]
    x = _values(SHAPES[shape], dtype)
    fortran = shape == "transposed"  # the kernels that take C-contiguous arrays only leave it to NumPy
    fast, ref, called = _both_paths(monkeypatch, op, [x], [need], fortran, interpreted)
    _compare(fast, ref, _run(torch, op, [x], [need], fortran), dtype,
             _GELU_TOL if name == "gelu" and dtype == np.float32 else None)
    if x.size == 0:  # (an empty array may take either path: there is nothing to compute)
        return
    if name == "relu":  # ReLU's forward is one NumPy call; its backward takes the kernel on 1-d pieces of
        # arrays that share a memory order (the incoming gradient is C-contiguous)
        expected = need and dtype in dtypes and x.ndim > 0 and not fortran
    elif name == "hardtanh":  # its backward takes the kernel from the saved input, as ReLU's from its result
        expected = need and dtype in dtypes and not fortran
    elif name.startswith("leaky_relu"):
        expected = dtype in dtypes and not fortran
    else:  # GELU (exact): float32 and float64, SiLU: float32, in any layout
        expected = dtype in dtypes
    assert bool(called & kernels) == expected, (called, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_relu_takes_its_compiled_passes_from_min_compiled_elements_on(monkeypatch, offset, dtype):
    """ReLU's forward and its gradient take their compiled passes (NumPy's bits) on a row-major float32 or float64
    input of ``policy.min_compiled_elements`` elements or more, the bound of every kernel (``policy.compiles``), and
    NumPy's below it: one element under the bound, at it and over it, the values and gradient PyTorch's."""
    least = 64
    calls = []
    for name in ("relu", "relu_grad"):
        fn = getattr(k_act, name)
        monkeypatch.setattr(k_act, name, lambda *a, _fn=fn, _name=name: calls.append(_name) or _fn(*a))
    x = _values((least + offset,), dtype)
    op = POINTWISE["relu"][0]
    with policy.override(compiled=True, min_compiled_elements=least):
        got = _run(ember, op, [x], [True])
    for a, e in zip(got, _run(torch, op, [x], [True])):
        np.testing.assert_array_equal(a, e)
        assert a.dtype == e.dtype
    assert set(calls) == ({"relu", "relu_grad"} if offset >= 0 else set()), calls


# ------------------------------------------------------------------------------------------------ BatchNorm
BN_SHAPES = {"2d": (4, 3), "one_channel": (5, 1), "length_one": (3, 2, 1), "3d": (2, 3, 5), "4d": (2, 2, 3, 2),
             "one_sample": (1, 3, 4), "transposed": (6, 3)}
_NEEDS = list(itertools.product([True, False], repeat=3))


def _bn(training, momentum=0.1):
    def op(m, x, w, b):
        if training == "stats":  # training that updates running statistics (compared on their own below)
            rm, rv = m.zeros(x.shape[1], dtype=x.dtype), m.ones(x.shape[1], dtype=x.dtype)
            return _F(m).batch_norm(x, rm, rv, w, b, training=True, momentum=momentum)
        if training:
            return _F(m).batch_norm(x, None, None, w, b, training=True)
        rm = m.linspace(-0.5, 0.5, x.shape[1], dtype=x.dtype)
        rv = m.linspace(0.5, 2.0, x.shape[1], dtype=x.dtype)
        return _F(m).batch_norm(x, rm, rv, w, b, training=False)
    return op


@pytest.mark.parametrize("interpreted", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine, needs", [(True, n) for n in _NEEDS] + [(False, (True, False, False)),
                                                                          (False, (False, False, False))])
@pytest.mark.parametrize("shape", list(BN_SHAPES))
def test_batch_norm_compiled_and_numpy_paths_match_torch(monkeypatch, shape, affine, needs, dtype, interpreted):
    """Training mode (the channel kernels), every subset of x, weight and bias needing a gradient: the input's
    gradient not needed while the weight's is runs the backward kernel without its dx loop (given an empty
    placeholder for dx, which it must not write: the interpreted run checks)."""
    x = _values(BN_SHAPES[shape], dtype)
    fortran = shape == "transposed"  # (6, 3) column-major: each channel one contiguous row
    c = x.shape[1]
    w, b = (np.linspace(0.5, 1.5, c).astype(dtype), np.linspace(-1, 1, c).astype(dtype)) if affine else (None, None)
    op = _bn(True)
    fast, ref, called = _both_paths(monkeypatch, op, [x, w, b], needs, fortran, interpreted)
    _compare(fast, ref, _run(torch, op, [x, w, b], needs, fortran), dtype)
    # the kernels take each channel's values as contiguous planes: (N, C, *) with spatial dims, or channels
    # apart in memory (one channel, one sample, or batch-last)
    planes = fortran or x.ndim > 2 or c == 1 or x.shape[0] == 1
    assert ("forward" in called) == planes
    assert ("backward" in called) == (planes and any(needs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [False, "stats"])
@pytest.mark.parametrize("shape", ["2d", "length_one", "4d", "one_sample"])
def test_batch_norm_eval_and_running_stats_paths_match_torch(monkeypatch, shape, training, dtype):
    x = _values(BN_SHAPES[shape], dtype)
    c = x.shape[1]
    w, b = np.linspace(0.5, 1.5, c).astype(dtype), np.linspace(-1, 1, c).astype(dtype)
    op = _bn(training)
    fast, ref, _ = _both_paths(monkeypatch, op, [x, w, b], (True, True, True))
    _compare(fast, ref, _run(torch, op, [x, w, b], (True, True, True)), dtype)

    def stats(m):
        rm, rv = m.zeros(c, dtype=getattr(m, np.dtype(dtype).name)), m.ones(c, dtype=getattr(m, np.dtype(dtype).name))
        _F(m).batch_norm(m.tensor(x), rm, rv, m.tensor(w), m.tensor(b), training=True, momentum=0.3)
        return [rm.numpy(), rv.numpy()]

    with policy.override(compiled=True, **_LOW):
        fast_stats = stats(ember)
    with policy.override(compiled=False, **_LOW):
        ref_stats = stats(ember)
    _compare(fast_stats, ref_stats, stats(torch), dtype)


# ------------------------------------------------------------------------------------------- LayerNorm, RMSNorm
LN_SHAPES = {  # name -> (input shape, normalized shape)
    "rows": ((5, 7), (7,)), "one_row": ((1, 6), (6,)), "one_feature": ((4, 1), (1,)), "one": ((1,), (1,)),
    "two_dims": ((2, 3, 4), (3, 4)), "all_dims": ((3, 4), (3, 4)), "no_rows": ((0, 5), (5,)),
    "no_features": ((3, 0), (0,)), "transposed": ((5, 6), (6,)),
}
# (kind, params, which of x, weight, bias need a gradient): RMSNorm has no bias
ROW_NORM_CASES = [(k, p, n) for k in ("layer_norm", "rms_norm") for p in ("weight_bias", "weight", "none")
                  for n in _NEEDS if not (k == "rms_norm" and p == "weight_bias")
                  and not (p == "none" and (n[1] or n[2])) and not (p != "weight_bias" and n[2])]


def _ln(m, x, w, b, norm):
    return _F(m).layer_norm(x, norm, w, b)


def _rms(m, x, w, b, norm):
    return _F(m).rms_norm(x, norm, w)


@pytest.mark.parametrize("interpreted", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", list(LN_SHAPES))
@pytest.mark.parametrize("kind, params, needs", ROW_NORM_CASES)
def test_row_norms_compiled_and_numpy_paths_match_torch(monkeypatch, kind, shape, params, needs, dtype, interpreted):
    """LayerNorm and RMSNorm (the row kernels, forward and backward), every subset of the inputs needing a
    gradient; rows of no features take the NumPy path on either run."""
    xshape, norm = LN_SHAPES[shape]
    x = _values(xshape, dtype)
    fortran = shape == "transposed"
    w = np.linspace(0.5, 1.5, int(np.prod(norm))).reshape(norm).astype(dtype) if params != "none" else None
    b = np.linspace(-1, 1, int(np.prod(norm))).reshape(norm).astype(dtype) if params == "weight_bias" else None
    fn = _ln if kind == "layer_norm" else _rms

    def op(m, x, w, b):
        return fn(m, x, w, b, norm)

    fast, ref, called = _both_paths(monkeypatch, op, [x, w, b], needs, fortran, interpreted)
    _compare(fast, ref, _run(torch, op, [x, w, b], needs, fortran), dtype)
    if x.size == 0:  # (an empty array may take either path: there is nothing to compute)
        return
    rows_kernel = not fortran
    assert ("layer_norm" in called) == rows_kernel
    assert ("layer_norm_grad" in called) == (rows_kernel and needs[0])
