"""Second-order gradients of the pointwise ops (arithmetic, unary math, special functions, activations,
complex parts) against PyTorch: ``check_second_order`` differentiates each op's gradient again."""

from __future__ import annotations

import numpy as np
import pytest
from higher_order_oracle import check_second_order, torch

import ember


def _f(name, *args, **kwargs):
    """``m.nn.functional.<name>(x, *args, **kwargs)``."""
    return lambda m, x: getattr(m.nn.functional, name)(x, *args, **kwargs)


def _t(name, *args, **kwargs):
    """``m.<name>(x, *args, **kwargs)``."""
    return lambda m, x: getattr(m, name)(x, *args, **kwargs)


X = [(3, 4)]
XY = [(3, 4), (3, 4)]

# name: (fn, specs, check_second_order keywords)
UNARY = {
    "neg": (lambda m, x: -x, X, {}),
    "exp": (_t("exp"), X, {}),
    "log": (_t("log"), X, {"positive": True}),
    "log1p": (_t("log1p"), X, {"positive": True}),
    "log2": (_t("log2"), X, {"positive": True}),
    "log10": (_t("log10"), X, {"positive": True}),
    "expm1": (_t("expm1"), X, {}),
    "exp2": (_t("exp2"), X, {}),
    "sqrt": (_t("sqrt"), X, {"positive": True}),
    "rsqrt": (_t("rsqrt"), X, {"positive": True}),
    "sin": (_t("sin"), X, {}),
    "cos": (_t("cos"), X, {}),
    "tan": (_t("tan"), X, {}),
    "asin": (lambda m, x: m.asin(x * 0.4), X, {}),
    "acos": (lambda m, x: m.acos(x * 0.4), X, {}),
    "atan": (_t("atan"), X, {}),
    "sinh": (_t("sinh"), X, {}),
    "cosh": (_t("cosh"), X, {}),
    "tanh": (_t("tanh"), X, {}),
    "asinh": (_t("asinh"), X, {}),
    "acosh": (lambda m, x: m.acosh(x + 1), X, {"positive": True}),
    "atanh": (lambda m, x: m.atanh(x * 0.4), X, {}),
    "sigmoid": (_t("sigmoid"), X, {}),
    "abs": (lambda m, x: m.abs(x) * x, X, {}),  # (abs alone: PyTorch's second order is a ZeroTensor)
    "reciprocal": (_t("reciprocal"), X, {"positive": True}),
    "square": (_t("square"), X, {}),
    "sign": (lambda m, x: m.sign(x) * x, X, {}),
    "floor/ceil/round/trunc": (lambda m, x: (m.floor(x) + m.ceil(x) + m.round(x) + m.trunc(x)) * x, X, {}),
    "frac": (lambda m, x: m.frac(x) * x, X, {}),
    "erf": (_t("erf"), X, {}),
    "erfc": (_t("erfc"), X, {}),
    "erfinv": (lambda m, x: m.erfinv(m.tanh(x)), X, {}),
    "logit": (lambda m, x: m.logit(m.sigmoid(x)), X, {}),
    "logit eps": (lambda m, x: m.logit(m.sigmoid(3 * x), eps=0.1), X, {}),
    "lgamma": (_t("lgamma"), X, {"positive": True}),
    "lgamma negative": (lambda m, x: m.lgamma(-x - 0.25), X, {"positive": True}),
    "digamma": (_t("digamma"), X, {"positive": True}),
    "polygamma 0": (lambda m, x: m.polygamma(0, x), X, {"positive": True}),
    "polygamma 1": (lambda m, x: m.polygamma(1, x), X, {"positive": True}),
    "mvlgamma": (lambda m, x: m.mvlgamma(x + 1, 2), X, {"positive": True}),
    "clamp": (lambda m, x: m.clamp(x, -0.5, 0.7) * x, X, {}),
    "clamp min": (lambda m, x: m.clamp(x, min=-0.5) ** 2, X, {}),
    "clamp max": (lambda m, x: m.clamp(x, max=0.5) ** 2, X, {}),
    "clip": (lambda m, x: m.clip(x, -0.5, 0.7) ** 3, X, {}),
    "clamp_min": (lambda m, x: m.clamp_min(x, 0.1) ** 2, X, {}),
    "nan_to_num": (lambda m, x: m.nan_to_num(x) ** 2, X, {}),
    "pow scalar": (lambda m, x: x ** 3, X, {}),
    "pow fractional": (lambda m, x: x ** 2.5, X, {"positive": True}),
    "pow negative": (lambda m, x: m.pow(x, -1.5), X, {"positive": True}),
    "pow zero": (lambda m, x: (x ** 0) * x, X, {}),
    "rpow scalar": (lambda m, x: 2.0 ** x, X, {}),
    "angle real": (lambda m, x: m.angle(x) * x, X, {}),
    "special.expit": (lambda m, x: m.special.expit(x), X, {}),
    "special.erf": (lambda m, x: m.special.erf(x), X, {}),
    "special.logit": (lambda m, x: m.special.logit(m.sigmoid(x)), X, {}),
    "special.expm1": (lambda m, x: m.special.expm1(x), X, {}),
    "special.exp2": (lambda m, x: m.special.exp2(x), X, {}),
    "special.log1p": (lambda m, x: m.special.log1p(x), X, {"positive": True}),
    "special.erfc": (lambda m, x: m.special.erfc(x), X, {}),
    "special.erfinv": (lambda m, x: m.special.erfinv(m.tanh(x)), X, {}),
    "special.round": (lambda m, x: m.special.round(x) * x, X, {}),
    "special.ndtr": (lambda m, x: m.special.ndtr(x), X, {}),
    "special.gammaln/psi/digamma": (lambda m, x: m.special.gammaln(x) * m.special.psi(x) + m.special.digamma(x), X,
                                    {"positive": True}),
    "special.polygamma": (lambda m, x: m.special.polygamma(3, x), X, {"positive": True}),
    "special.multigammaln": (lambda m, x: m.special.multigammaln(x + 2, 3), X, {"positive": True}),
}

BINARY = {
    "add": (lambda m, x, y: (x + y) ** 2, XY, {}),
    "add alpha": (lambda m, x, y: m.add(x, y, alpha=2.5) ** 2, XY, {}),
    "add broadcast": (lambda m, x, y: (x + y) ** 2, [(2, 3, 4), (4,)], {}),
    "add scalar": (lambda m, x: (x + 2) ** 2 + (3 - x) ** 3, X, {}),
    "sub": (lambda m, x, y: (x - y) ** 2, XY, {}),
    "sub alpha": (lambda m, x, y: m.sub(x, y, alpha=0.5) ** 3, XY, {}),
    "mul": (lambda m, x, y: x * y, XY, {}),
    "mul broadcast": (lambda m, x, y: x * y * x, [(2, 1, 4), (3, 1)], {}),
    "mul scalar": (lambda m, x: (x * 3) ** 2, X, {}),
    "div": (lambda m, x, y: x / y, XY, {"positive": True}),
    "div broadcast": (lambda m, x, y: x / y, [(3, 4), (4,)], {"positive": True}),
    "rdiv scalar": (lambda m, x: 2 / x, X, {"positive": True}),
    "true_divide": (lambda m, x, y: m.true_divide(x, y), XY, {"positive": True}),
    "pow tensor": (lambda m, x, y: x ** y, XY, {"positive": True}),
    "pow broadcast": (lambda m, x, y: m.pow(x, y), [(3, 4), (4,)], {"positive": True}),
    "maximum": (lambda m, x, y: m.maximum(x, y) * x, XY, {}),
    "minimum": (lambda m, x, y: m.minimum(x, y) * y, XY, {}),
    "fmax": (lambda m, x, y: m.fmax(x, y) ** 2, XY, {}),
    "fmin": (lambda m, x, y: m.fmin(x, y) ** 2, XY, {}),
    "remainder": (lambda m, x, y: m.remainder(x, y + 1) * x, XY, {"positive": True}),
    "fmod": (lambda m, x, y: m.fmod(x, y + 1) * y, XY, {"positive": True}),
    "atan2": (lambda m, x, y: m.atan2(x, y), XY, {}),
    "hypot": (lambda m, x, y: m.hypot(x, y), XY, {}),
    "logaddexp": (lambda m, x, y: m.logaddexp(x, y), XY, {}),
    "logaddexp2": (lambda m, x, y: m.logaddexp2(x, y), XY, {}),
    "xlogy": (lambda m, x, y: m.xlogy(x, y), XY, {"positive": True}),
    "xlogy scalar": (lambda m, y: m.xlogy(2.0, y), X, {"positive": True}),
    "special.xlogy": (lambda m, x, y: m.special.xlogy(x, y), XY, {"positive": True}),
    "special.xlog1py": (lambda m, x, y: m.special.xlog1py(x, y), XY, {}),
    "special.xlog1py scalar": (lambda m, y: m.special.xlog1py(2.0, y), X, {"positive": True}),
    "where": (lambda m, x, y: m.where(x > 0, x * x, y * y * y), XY, {}),
    "where scalar": (lambda m, x: m.where(x > 0, x ** 3, 0.5), X, {}),
    "lerp scalar weight": (lambda m, x, y: m.lerp(x, y, 0.3) ** 2, XY, {}),
    "lerp tensor weight": (lambda m, x, y, w: m.lerp(x, y, w), [(3, 4), (3, 4), (3, 4)], {}),
    "clamp tensor bounds": (lambda m, x, lo: m.clamp(x, min=lo) ** 2, XY, {}),
    "addcmul": (lambda m, x, a, b: m.addcmul(x, a, b, value=0.5) ** 2, [(3, 4), (3, 4), (4,)], {}),
    "addcdiv": (lambda m, x, a, b: m.addcdiv(x, a, b, value=2), [(3, 4), (3, 4), (3, 4)], {"positive": True}),
    "0-d and empty": (lambda m, x, y: x * y ** 2, [(), (0, 3)], {}),
    "cast to float32 and back": (lambda m, x: (x.float() ** 3).double() * x, X, {"atol": 1e-5, "rtol": 1e-5}),
    "cast to complex": (lambda m, x, y: m.view_as_real(x.to(m.complex128) * m.complex(x, y)), XY, {}),
}

FOREACH = {
    "_foreach_mul": (lambda m, a, b: m._foreach_mul([a, b], [b, a]), XY, {}),
    "_foreach_mul scalar": (lambda m, a, b: m._foreach_mul(m._foreach_mul([a, b], 2.5), [a, b]), XY, {}),
    "_foreach_div": (lambda m, a, b: m._foreach_div([a, b], [b, a]), XY, {"positive": True}),
    "_foreach_add/sub": (lambda m, a, b: m._foreach_mul(m._foreach_sub(m._foreach_add([a, b], [b, b], alpha=2),
                                                                        [a, a]), [a, b]), XY, {}),
    "_foreach_pow": (lambda m, a, b: m._foreach_pow([a, b], 3), XY, {}),
    "_foreach_maximum/minimum": (lambda m, a, b: m._foreach_mul([*m._foreach_maximum([a], [b]),
                                                                 *m._foreach_minimum([a], [b])], [a, b]), XY, {}),
    "_foreach_clamp_min/max": (lambda m, a, b: m._foreach_pow(m._foreach_clamp_max(m._foreach_clamp_min([a, b], -0.5),
                                                                                    0.8), 2), XY, {}),
    "_foreach_unary": (lambda m, a, b: [f([a, b])[i] for f in (m._foreach_exp, m._foreach_sqrt, m._foreach_log,
                                                                  m._foreach_sigmoid, m._foreach_reciprocal,
                                                                  m._foreach_neg) for i in (0, 1)], XY,
                       {"positive": True}),
    "_foreach_abs/sign": (lambda m, a, b: m._foreach_mul(m._foreach_abs([a, b]), m._foreach_sign([a, b])), XY, {}),
    "_foreach_addcmul/addcdiv": (lambda m, a, b: m._foreach_addcmul(m._foreach_addcdiv([a, b], [b, a], [a, b], 0.5),
                                                                     [a, b], [b, a], 2.0), XY, {"positive": True}),
    "_foreach_lerp": (lambda m, a, b: m._foreach_mul(m._foreach_lerp([a, b], [b, a], 0.3), [a, a]), XY, {}),
}

ACTIVATIONS = {
    "relu": (lambda m, x: m.nn.functional.relu(x) * x, X, {}),
    "relu6": (lambda m, x: m.nn.functional.relu6(3 * x) * x, X, {}),
    "gelu": (_f("gelu"), X, {}),
    "gelu tanh": (_f("gelu", approximate="tanh"), X, {}),
    "silu": (_f("silu"), X, {}),
    "mish": (_f("mish"), X, {}),
    "softplus": (_f("softplus"), X, {}),
    "softplus beta threshold": (lambda m, x: m.nn.functional.softplus(3 * x, beta=2, threshold=1.5), X, {}),
    "elu": (_f("elu", alpha=0.7), X, {}),
    "selu": (_f("selu"), X, {}),
    "celu": (_f("celu", alpha=1.3), X, {}),
    "leaky_relu": (lambda m, x: m.nn.functional.leaky_relu(x, 0.2) ** 2, X, {}),
    "hardtanh": (lambda m, x: m.nn.functional.hardtanh(2 * x, -1.5, 1.2) ** 2, X, {}),
    "hardswish": (lambda m, x: m.nn.functional.hardswish(4 * x), X, {}),
    "sigmoid": (_f("sigmoid"), X, {}),
    "tanh": (_f("tanh"), X, {}),
    "logsigmoid": (_f("logsigmoid"), X, {}),
    "softsign": (_f("softsign"), X, {}),
    "tanhshrink": (_f("tanhshrink"), X, {}),
    "softshrink": (lambda m, x: m.nn.functional.softshrink(x, 0.3) ** 2, X, {}),
    "hardshrink": (lambda m, x: m.nn.functional.hardshrink(x, 0.3) ** 2, X, {}),
    "threshold": (lambda m, x: m.nn.functional.threshold(x, 0.1, -2.0) ** 2, X, {}),
    "glu": (_f("glu"), [(3, 6)], {}),
    "glu dim 0": (_f("glu", dim=0), [(4, 3)], {}),
    "prelu one slope": (lambda m, x, w: m.nn.functional.prelu(x, w) ** 2, [(2, 3, 4), (1,)], {}),
    "prelu per channel": (lambda m, x, w: m.nn.functional.prelu(x, w) * x, [(2, 3, 4), (3,)], {}),
    "rrelu eval": (lambda m, x: m.nn.functional.rrelu(x, training=False) ** 2, X, {}),
    "softmax": (_f("softmax", dim=-1), X, {}),
    "softmax dim 0": (_f("softmax", dim=0), [(3, 4, 2)], {}),
    "log_softmax": (_f("log_softmax", dim=1), X, {}),
    "log_softmax dim 0": (_f("log_softmax", dim=0), [(3, 4, 2)], {}),
    "softmin": (_f("softmin", dim=1), X, {}),
    "softmax 0-d": (_f("softmax", dim=0), [()], {}),
    "special.softmax": (lambda m, x: m.special.softmax(x, dim=0), X, {}),
    "special.log_softmax": (lambda m, x: m.special.log_softmax(x, dim=1), X, {}),
    "silu inplace": (lambda m, x: m.nn.functional.silu(x * 1, inplace=True), X, {}),
    "elu inplace": (lambda m, x: m.nn.functional.elu(x * 1, inplace=True) * x, X, {}),
    "relu6 inplace": (lambda m, x: m.nn.functional.relu6(x * 4, inplace=True) * x, X, {}),
    "nn modules": (lambda m, x: m.nn.Sequential(m.nn.GELU(), m.nn.SiLU(), m.nn.Softplus(), m.nn.Softmax(-1))(x),
                   X, {}),
    "tensor methods": (lambda m, x: x.sigmoid().exp().tanh().relu().softmax(0), X, {}),
    "relu on a large tensor": (lambda m, x: m.nn.functional.relu(x) ** 2, [(600, 1000)], {}),
    "silu on a large tensor": (_f("silu"), [(600, 1000)], {}),  # the threaded product
    "gelu on a large tensor": (_f("gelu"), [(600, 1000)], {"atol": 1e-6}),  # (ember's float64 GELU: ~2e-7)
}


def _cx(fn):
    """``fn`` of the complex tensor a + ib, as real numbers (the oracle differentiates real inputs and outputs)."""
    def run(m, a, b):
        out = fn(m, m.complex(a, b))
        return m.view_as_real(out) if out.is_complex() else out

    return run


COMPLEX = {
    "real/imag": (_cx(lambda m, z: m.real(z) ** 2 * m.imag(z)), XY, {}),
    "polar": (lambda m, a, b: m.view_as_real(m.polar(a, b)) ** 2, XY, {"positive": True}),
    "view_as_complex": (lambda m, a: m.view_as_real(m.view_as_complex(a) ** 2), [(3, 2)], {}),
    "complex abs": (_cx(lambda m, z: m.abs(z)), XY, {}),
    "complex angle": (_cx(lambda m, z: m.angle(z)), XY, {}),
    "complex sgn": (_cx(lambda m, z: m.sgn(z)), XY, {}),
    "complex conj": (_cx(lambda m, z: m.conj(z) * z * z), XY, {}),
    "complex mul/div": (lambda m, a, b: m.view_as_real(m.complex(a, b) * m.complex(b, a) / m.complex(a + 2, b)),
                        XY, {}),
    "complex pow scalar": (_cx(lambda m, z: z ** 3), XY, {}),
    "complex pow tensor": (lambda m, a, b: m.view_as_real(m.complex(a, b) ** m.complex(b, a)), XY, {"positive": True}),
    "complex square/reciprocal": (_cx(lambda m, z: m.square(z) + m.reciprocal(z)), XY, {}),
}
for _name in ("exp", "log", "log1p", "log2", "log10", "expm1", "exp2", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh",
              "cosh", "tanh", "sigmoid", "asin", "acos", "atan", "asinh", "acosh", "atanh"):
    COMPLEX[f"complex {_name}"] = (_cx(lambda m, z, _name=_name: getattr(m, _name)(z)), XY, {"positive": True})


@pytest.mark.parametrize("name", ["gelu", "gelu tanh", "silu", "mish", "softplus", "elu", "selu", "celu", "hardswish",
                                  "logsigmoid", "softsign", "softmax", "log_softmax", "relu", "leaky_relu",
                                  "prelu one slope"])
def test_second_order_in_float32_keeps_the_dtype(name):
    """The recorded formulas compute in the input's dtype (no float64 constants leak in)."""
    fn, specs, kwargs = ACTIVATIONS[name]
    arrays = [np.random.default_rng(2).standard_normal(s).astype(np.float32) for s in specs]
    check_second_order(fn, specs, arrays=arrays, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("helper", ["parallel_rows", "parallel_flat", "parallel_blocks"])
def test_threaded_helpers_give_recorded_arrays_whole_so_an_in_place_kernel_fails_loudly(helper):
    """A piece of a recorded array is a new one (writes into it would be lost): the kernel gets the whole arrays, and
    one written with ``out=`` raises HigherOrderError."""
    from ember import _parallel
    from ember.autograd.recorded import HigherOrderError, RecordedArray

    seen = []
    x = RecordedArray(ember.randn(600, 1000, requires_grad=True))  # large enough to be split among threads
    getattr(_parallel, helper)(lambda a, o: seen.append(a.shape), x, np.empty((600, 1000)))
    assert seen == [(600, 1000)]
    with pytest.raises(HigherOrderError, match=r"multiply\(\.\.\., out=\.\.\.\)"):
        getattr(_parallel, helper)(lambda a, o: np.multiply(a, 2, out=o), x, np.empty((600, 1000)))


@pytest.mark.parametrize("name", ["gelu", "gelu tanh", "silu", "mish", "selu", "softplus", "softmax", "log_softmax"])
def test_third_order_matches_pytorch(name):
    fn, specs, kwargs = ACTIVATIONS[name]
    _third_order(fn, specs)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erf", "erfinv", "tanh", "sigmoid", "logit", "atan"])
def test_third_order_of_unary_math_matches_pytorch(name):
    fn, specs, kwargs = UNARY[name]
    _third_order(fn, specs, positive=kwargs.get("positive", False))


def _third_order(fn, specs, positive=False):
    a = np.random.default_rng(3).standard_normal(specs[0])
    a = np.abs(a) + 0.5 if positive else a
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = fn(lib, x)
        w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        (g1,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        results.append([g.detach().numpy() for g in (g1, g2, g3)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7)


def test_shared_row_helpers_take_recorded_arrays():
    """row_sums, col_sums and log_softmax_array (used by other ops' formulas) record themselves under create_graph."""
    from ember.autograd.recorded import RecordedArray
    from ember.ops.activation import col_sums, log_softmax_array, row_sums

    a = np.random.default_rng(4).standard_normal((3, 5))
    for helper, expected in ((lambda r: row_sums(r, 1), a.sum(1, keepdims=True)), (col_sums, a.sum(0)),
                             (lambda r: log_softmax_array(r, 1), torch.log_softmax(torch.tensor(a), 1).numpy())):
        x = ember.tensor(a, requires_grad=True)
        out = helper(RecordedArray(x))
        assert type(out) is RecordedArray and out.t.requires_grad
        np.testing.assert_allclose(out.t.detach().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("grad_requires_grad", [False, True])
def test_hardsigmoid_second_order_refuses_as_pytorch(grad_requires_grad, inplace):
    """PyTorch's hardsigmoid_backward has no derivative: under create_graph the gradient (its value, selected) is
    recorded as a NotImplemented node with an edge for each of (grad_output, self) that requires grad, and
    differentiating it again is PyTorch's RuntimeError, with respect to either."""
    a = np.random.default_rng(0).standard_normal((3, 4)) * 4

    def first_gradient(m):
        x = m.tensor(a, requires_grad=True)
        gy = m.full((3, 4), -2.0, requires_grad=grad_requires_grad)
        (g,) = m.autograd.grad(m.nn.functional.hardsigmoid(x, inplace=False) if not inplace else
                               m.nn.functional.hardsigmoid(x * 1, inplace=True), x, gy, create_graph=True)
        return x, gy, g

    seen = []
    for m in (torch, ember):
        x, gy, g = first_gradient(m)
        node = g.grad_fn if not inplace else g.grad_fn.next_functions[0][0]  # (through x * 1's MulBackward0)
        seen.append((g.detach().numpy(), node.name(), [f.name() for f, _ in node.next_functions]))
        for wrt in ("x", "gy") if grad_requires_grad else ("x",):
            x, gy, g = first_gradient(m)
            with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
                m.autograd.grad((g * x).sum(), x if wrt == "x" else gy)
    (want, want_name, want_edges), (got, got_name, got_edges) = seen
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert got_name == want_name == "torch::autograd::NotImplemented"
    assert got_edges == want_edges


@pytest.mark.parametrize("name", list(UNARY) + list(BINARY) + list(ACTIVATIONS) + list(COMPLEX) + list(FOREACH))
def test_second_order_matches_pytorch(name):
    fn, specs, kwargs = {**UNARY, **BINARY, **ACTIVATIONS, **COMPLEX, **FOREACH}[name]
    check_second_order(fn, specs, **kwargs)


@pytest.mark.parametrize("name", ["leaky_relu", "hardtanh", "relu"])
def test_piecewise_linear_activation_keeps_only_its_derivative_not_its_input(name):
    # f' of a piecewise-linear activation is piecewise constant, so its node keeps f' alone and never runs forward
    # again under create_graph: the input, dropped by the caller, is freed before backward (a smooth activation's
    # node keeps it for the rerun). The gradients are PyTorch's all the same.
    import gc
    import weakref

    xs = np.array([[-2.0, -0.5, 0.0], [0.5, 1.5, 3.0]], dtype=np.float32)
    grads = []
    for m in (ember, torch):
        x = m.tensor(xs, requires_grad=True)
        h = x * 2
        y = getattr(m.nn.functional, name)(h)
        if m is ember:
            gone = weakref.ref(h)
            del h
            gc.collect()
            assert gone() is None
        grads.append(m.autograd.grad((y * y).sum(), x)[0].detach().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


PIECEWISE_LINEAR = {
    "relu": _f("relu"),
    "relu method": lambda m, x: x.relu(),
    "relu6": lambda m, x: m.nn.functional.relu6(4 * x),
    "leaky_relu": _f("leaky_relu", 0.2),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(2 * x, -1.5, 1.2),
    "threshold": _f("threshold", 0.1, -2.0),
    "hardshrink": _f("hardshrink", 0.3),
    "softshrink": _f("softshrink", 0.3),
    "rrelu eval": _f("rrelu", training=False),
    "relu6 inplace": lambda m, x: m.nn.functional.relu6(x * 4, inplace=True),
}


@pytest.mark.parametrize("name", list(PIECEWISE_LINEAR))
def test_piecewise_linear_activation_gradient_of_a_constant_cotangent_differentiates_again(name):
    # The gradient (through sum(): a constant cotangent) requires grad, as PyTorch's (ThresholdBackwardBackward0 and
    # kin); its gradient w.r.t. the input is zeros (f'' = 0) and w.r.t. the cotangent f'(x).
    fn = PIECEWISE_LINEAR[name]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4))
    u = rng.standard_normal((3, 4))
    results = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(fn(m, x).sum(), x, create_graph=True)
        assert g.requires_grad
        (gx,) = m.autograd.grad((g * m.tensor(u)).sum(), x)
        v = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        (gv,) = m.autograd.grad(fn(m, x), x, v, create_graph=True)
        (vv,) = m.autograd.grad((gv * m.tensor(u)).sum(), v)
        results.append([t.detach().numpy() for t in (g, gx, vv)])
    for e, t in zip(*results):
        np.testing.assert_array_equal(e, t)
    assert not results[0][1].any()
    x = ember.tensor(a, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: fn(ember, t), (x,))


def _np_of(m, t):
    """A gradient as a NumPy array (PyTorch's may be a ZeroTensor, which has none)."""
    if m is torch and t._is_zerotensor():
        return np.zeros(tuple(t.shape), dtype=np.complex128 if t.is_complex() else np.float64)
    return t.detach().resolve_conj().numpy() if m is torch else t.detach().numpy()


@pytest.mark.parametrize("name", ["abs", "complex abs", "complex sgn", "complex abs times z"])
def test_abs_and_sgn_gradients_differentiate_again_at_zero_and_elsewhere_as_pytorchs(name):
    """abs's gradient g * sgn(x) under create_graph, at 0 (and -0) and elsewhere: a real one requires grad (its
    node PyTorch's MulBackward0) and differentiates to zeros, where ember's required none; a complex one
    differentiates to PyTorch's values, 0 at z = 0 where ember's masked z / |z| gave NaN. sgn of a complex z is one
    node (SgnBackward0) whose gradient is 0 at z = 0, as PyTorch's (ember's composed z / |z| passed g there), and
    whose second derivative there is PyTorch's NaN."""
    real = np.array([0.0, -0.0, 1.5, -2.0, 0.0, 0.25])
    cplx = np.array([0j, 1 + 1j, -2 + 0.5j, 3j, 0.5, -0.0 - 0.0j])
    data, fn = {"abs": (real, lambda z: z.abs()), "complex abs": (cplx, lambda z: z.abs()),
                "complex sgn": (cplx, lambda z: z.sgn()), "complex abs times z": (cplx, lambda z: z.abs() * z)}[name]
    u = np.arange(6) * 0.3 + 0.1
    results = []
    for m in (ember, torch):
        x = m.tensor(data, requires_grad=True)
        y = fn(x)
        (g,) = m.autograd.grad(y, x, m.ones_like(y), create_graph=True)
        assert g.requires_grad and (type(g.grad_fn).__name__ == "MulBackward0" or name != "abs")
        (gg,) = m.autograd.grad((g * g.conj()).real.sum() + (g * m.tensor(u)).real.sum(), x)
        results.append((_np_of(m, g), _np_of(m, gg), y.grad_fn.name()))
    (eg, egg, ename), (tg, tgg, tname) = results
    assert ename == tname
    np.testing.assert_allclose(eg, tg, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(egg, tgg, rtol=1e-12, atol=1e-15)
    if name == "abs":  # (away from the kink, where finite differences hold; ember's gradcheck is real-only)
        assert ember.autograd.gradgradcheck(fn, (ember.tensor(data[2:4], requires_grad=True),))


def test_inplace_hardtanh_double_backward_reads_the_saved_clone():
    """hardtanh_ saves ``self.clone()``: under create_graph PyTorch's HardtanhBackwardBackward0 reads that clone, its
    edge a CloneBackward0 (not the input's previous node)."""
    seen = []
    for m in (torch, ember):
        x = m.tensor([-4.0, 0.5, 1.0, 0.2], requires_grad=True)
        y = m.nn.functional.hardtanh(x * 1, inplace=True)
        (g,) = m.autograd.grad(y, x, m.ones(4, dtype=m.float32, requires_grad=True), create_graph=True)
        node = g.grad_fn.next_functions[0][0]
        seen.append((node.name(), [f.name() for f, _ in node.next_functions]))
    assert seen[1] == seen[0] == ("HardtanhBackwardBackward0", ["torch::autograd::AccumulateGrad", "CloneBackward0"])
