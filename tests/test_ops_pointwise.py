"""More pointwise math (trig/hyperbolic, log2/log10/expm1/exp2, erf family, logit, atan2, lerp, clamp_min/max)
against PyTorch: values, gradients, dtypes, edge shapes."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check, outcomes

import ember

UNIT = np.random.default_rng(5).uniform(-0.95, 0.95, (3, 4)).astype(np.float32)  # inside (-1, 1)
ABOVE_ONE = (np.abs(UNIT) + 1.2).astype(np.float32)
PROB = ((UNIT + 1) / 2).astype(np.float32)


@pytest.mark.parametrize("name", ["tan", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "expm1", "exp2",
                                  "erf", "erfc", "frac"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_on_the_real_line(name, dtype):
    check(lambda m, x: getattr(m, name)(x), [(3, 4)], dtype=dtype, atol=1e-5 if dtype == np.float32 else 1e-10)
    check(lambda m, x: getattr(x, name)(), [(3, 4)], dtype=dtype, atol=1e-5 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("name", ["asin", "arcsin", "acos", "arccos", "atanh", "arctanh", "erfinv"])
def test_unary_inside_minus_one_one(name):
    check(lambda m, x: getattr(m, name)(x), [UNIT], atol=1e-4)
    check(lambda m, x: getattr(x, name)(), [UNIT.astype(np.float64)], atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("name", ["log2", "log10", "acosh", "arccosh"])
def test_unary_on_positive_inputs(name):
    check(lambda m, x: getattr(m, name)(x), [ABOVE_ONE])
    check(lambda m, x: getattr(x, name)(), [ABOVE_ONE.astype(np.float64)], atol=1e-10)


def test_sgn_values():
    a = np.array([-2.0, 0.0, 3.0, -0.0], dtype=np.float32)
    assert_close(ember.sgn(ember.tensor(a)), torch.sgn(torch.tensor(a)))
    assert_close(ember.tensor([-3, 0, 2]).sgn(), torch.tensor([-3, 0, 2]).sgn())


def test_erfinv_edges_and_inverse():
    y = np.array([-1.0, -0.999999, -0.5, 0.0, 1e-8, 0.5, 0.999999, 1.0, 1.5, -2.0, np.nan])
    assert_close(ember.erfinv(ember.tensor(y)), torch.erfinv(torch.tensor(y)), atol=1e-9, rtol=1e-8)
    x = np.linspace(-3, 3, 13)
    assert_close(ember.erfinv(ember.erf(ember.tensor(x))), torch.tensor(x), atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("name", ["tan", "erf", "erfinv", "log2", "expm1", "sinh", "atan"])
@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_integer_inputs_compute_in_float(name, dtype):
    a = np.array([0, 1, 0, 1]).astype(dtype)
    e, t = getattr(ember, name)(ember.tensor(a)), getattr(torch, name)(torch.tensor(a))
    assert_close(e, t, atol=1e-6)


@pytest.mark.parametrize("shape", [(0,), (), (1,), (2, 0, 3)])
def test_edge_shapes(shape):
    for name in ("erf", "erfinv", "tan", "log10", "frac"):
        check(lambda m, x, name=name: getattr(m, name)(x.tanh() * 0.5), [shape])


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit(eps):
    check(lambda m, x: m.logit(x, eps), [PROB], atol=1e-4)
    check(lambda m, x: x.logit(eps=eps), [PROB.astype(np.float64)], atol=1e-10)


def test_logit_gradient_at_the_eps_bounds_is_the_inner_one():
    """Only inputs strictly outside [eps, 1 - eps] get a zero gradient, as PyTorch's."""
    check(lambda m, x: m.logit(x, 0.25), [np.array([0.25, 0.75, 0.1, 0.9, 0.5])], dtype=np.float64, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_logit_clamps_in_the_input_dtype_as_pytorch(dtype):
    """eps and 1 - eps are taken in the input's dtype, as PyTorch's kernel takes them: a half-precision result
    keeps its dtype (bfloat16's was float32, clamped at float32's 1 - eps)."""
    got = []
    for m in (torch, ember):
        x = m.tensor([0.05, 0.2, 0.5, 0.95, 0.99]).to(getattr(m, dtype)).requires_grad_()
        y = m.logit(x, 0.3)
        y.sum().backward()
        got.append((str(y.dtype).split(".")[1], y.float().tolist(), x.grad.float().tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, y, x: m.atan2(y, x), [(3, 4), (3, 4)]),
    (lambda m, y, x: y.atan2(x), [(3, 1), (1, 4)]),
    (lambda m, y, x: m.arctan2(y, x), [(2, 3), (3,)]),
    (lambda m, a, b: m.lerp(a, b, 0.3), [(3, 4), (3, 4)]),
    (lambda m, a, b: a.lerp(b, 0.7), [(3, 4), (4,)]),
    (lambda m, a, b: m.lerp(a, b, b.sigmoid()), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.clamp_min(a, b), [(3, 4), (4,)]),
    (lambda m, a, b: a.clamp_max(b), [(3, 4), (3, 1)]),
    (lambda m, a, b: a.clamp_min(0.1) + m.clamp_max(b, -0.2), [(3, 4), (3, 4)]),
])
def test_binary(fn, shapes):
    check(fn, shapes)


def test_atan2_promotes_integers():
    e = ember.atan2(ember.tensor([1, -1]), ember.tensor([2, 3]))
    t = torch.atan2(torch.tensor([1, -1]), torch.tensor([2, 3]))
    assert_close(e, t)


def test_in_place_lerp_and_clamp():
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for name, args in [("lerp_", (np.ones((3, 4), np.float32), 0.25)), ("clamp_min_", (0.1,)), ("clamp_max_", (0.0,))]:
        e, t = ember.tensor(a), torch.tensor(a)
        eargs = [ember.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
        targs = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
        assert getattr(e, name)(*eargs) is e
        getattr(t, name)(*targs)
        assert_close(e, t)
    # recorded: the gradient flows through the in-place lerp to both ends
    ea, eb = ember.tensor(a, requires_grad=True), ember.ones(3, 4, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.ones(3, 4, requires_grad=True)
    ey, ty = ea * 1, ta * 1
    ey.lerp_(eb, 0.25)
    ty.lerp_(tb, 0.25)
    (ey * ey).sum().backward()
    (ty * ty).sum().backward()
    assert_close(ea.grad, ta.grad)
    assert_close(eb.grad, tb.grad)


def test_lerp_dtype_mismatch_raises_like_torch():
    with pytest.raises(RuntimeError):
        torch.lerp(torch.ones(2), torch.ones(2, dtype=torch.float64), 0.5)
    with pytest.raises(RuntimeError):
        ember.lerp(ember.ones(2), ember.ones(2, dtype=ember.float64), 0.5)


@pytest.mark.parametrize("bounds", [{"min": 1.5}, {"max": 2.5}, {"min": 1.5, "max": 3}, {"min": 0, "max": 2.5}],
                         ids=str)
def test_clamp_of_an_integer_tensor_with_one_float_bound_is_floating(bounds):
    """An integer tensor clamped with a float bound, on either side or on one of two, becomes floating
    (the default dtype), as in PyTorch."""
    want = torch.clamp(torch.tensor([0, 1, 2, 3, 4]), **bounds)
    got = ember.clamp(ember.tensor([0, 1, 2, 3, 4]), **bounds)
    assert want.dtype == torch.float32 and got.dtype == ember.float32
    assert got.tolist() == want.tolist()


def test_relu_gradient_under_create_graph_matches_torch():
    """relu's backward recorded under create_graph (the gradient mask out != 0) at outputs of 0, 1 and others:
    the gradient and a gradient of it, against PyTorch."""
    values = np.array([-2.0, 0.0, 1.0, 0.5, 3.0])
    res = []
    for m in (ember, torch):
        x = m.tensor(values, requires_grad=True)
        v = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad((m.relu(x) * v).sum(), x, create_graph=True)
        (gv,) = m.autograd.grad((g * g).sum(), v)
        res.append((g.detach(), gv))
    for e, t in zip(*res):
        assert_close(e, t)


@pytest.mark.parametrize("x_dtype", ["int64", "uint8", "bool", "float16", "float32", "float64"])
@pytest.mark.parametrize("bound_dtype", ["int32", "float32", "float64"])
@pytest.mark.parametrize("bound_shape", ["1-d", "0-d", "min only", "max only"])
def test_clamp_with_tensor_bounds_takes_pytorchs_result_type(x_dtype, bound_dtype, bound_shape):
    """Tensor bounds (PyTorch's Tensor overload) promote as any operands do: the result type of the input and the
    bounds, a 0-d bound by category only (an int32 bound of a uint8 input gives int32, a float64 one of a float16
    input float64; a 0-d float64 bound of a float16 input keeps float16, of an integer input gives float64)."""
    outcomes = []
    for m in (torch, ember):
        x = m.tensor([-3, 0, 2, 7]).to(getattr(m, x_dtype))
        bd = getattr(m, bound_dtype)
        lo = m.tensor(1.5 if bound_shape == "0-d" else [1.5, -1.0, 0.5, 2.5]).to(bd)
        hi = m.tensor(5.5).to(bd) if bound_shape != "1-d" else m.tensor([5.5, 4.0, 1.0, 6.0]).to(bd)
        lo, hi = {"min only": (lo, None), "max only": (None, hi)}.get(bound_shape, (lo, hi))
        y = m.clamp(x, lo, hi)
        outcomes.append((str(y.dtype).split(".")[1], y.double().tolist()))
    assert outcomes[1] == outcomes[0]


_ROUNDS = {
    "round": lambda m, x, kw: m.round(x, **kw), "special.round": lambda m, x, kw: m.special.round(x, **kw),
    "Tensor.round": lambda m, x, kw: x.round(**kw), "Tensor.round_": lambda m, x, kw: x.clone().round_(**kw),
}


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("decimals", [None, 0, 1, -1])
@pytest.mark.parametrize("spelling", sorted(_ROUNDS))
def test_round_of_each_dtype_with_decimals_as_pytorch(dtype, decimals, spelling):
    """round keeps an integer tensor, and refuses a bool tensor, and an integer one with decimals, with PyTorch's
    NotImplementedError (NumPy would round a bool to float16 and an integer to its tens). ``decimals=0`` is the
    decimals overload too, which refuses integers, and ``special.round`` is that overload even without it."""
    outcomes = []
    for m in (torch, ember):
        x = m.tensor([15, -26, 3, 0] if dtype[0] != "f" else [1.25, -2.65, 14.0, 0.0]).to(getattr(m, dtype))
        try:
            y = _ROUNDS[spelling](m, x, {} if decimals is None else {"decimals": decimals})
            outcomes.append((str(y.dtype).split(".")[1], y.double().tolist()))
        except NotImplementedError as err:
            outcomes.append(str(err))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("decimals", [-40, -3, -1, 0, 1, 2, 3, 5, 40])
def test_round_to_decimals_is_pytorchs_bit_for_bit(dtype, decimals):
    """To places, PyTorch computes rint(x * 10**d) / 10**d in float32 for float16 and bfloat16 inputs (NumPy's round
    of float16 computes in float16: -2.65 to one place is -2.6 there, -2.7 in PyTorch), and in the input's dtype
    otherwise; past the dtype's range the scale is inf (NaN, or the input rounded to 0 for d < 0)."""
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.uniform(-100, 100, 500), rng.uniform(-3, 3, 500),
                             np.round(rng.uniform(-50, 50, 500), 1) + 0.05, np.arange(-200, 200) * 0.005,
                             [-2.65, 0.0, -0.0, np.inf, -np.inf, np.nan, 6e4, 1e30, 1e-30]])
    t = torch.round(torch.tensor(values).to(getattr(torch, dtype)), decimals=decimals)
    e = ember.round(ember.tensor(values).to(getattr(ember, dtype)), decimals=decimals)
    assert e.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(e.double().numpy(), t.double().numpy())


_POINTWISE_OF_ONE = {
    "relu": lambda m, x: m.relu(x), "sigmoid": lambda m, x: m.sigmoid(x), "exp": lambda m, x: m.exp(x),
    "tanh": lambda m, x: m.tanh(x), "abs": lambda m, x: m.abs(x), "neg": lambda m, x: m.neg(x),
    "square": lambda m, x: m.square(x), "round": lambda m, x: m.round(x), "sign": lambda m, x: m.sign(x),
    "clamp": lambda m, x: m.clamp(x, -1.0, 1.0), "F.relu": lambda m, x: m.nn.functional.relu(x),
    "F.leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1), "F.gelu": lambda m, x: m.nn.functional.gelu(x),
    "F.silu": lambda m, x: m.nn.functional.silu(x), "F.elu": lambda m, x: m.nn.functional.elu(x),
    "F.hardtanh": lambda m, x: m.nn.functional.hardtanh(x), "F.glu": lambda m, x: m.nn.functional.glu(x[..., :x.shape[-1] // 2 * 2]),
}


@pytest.mark.parametrize("name", sorted(_POINTWISE_OF_ONE))
# n * n elements: below, at and above the size from which relu splits its work over threads (65536)
@pytest.mark.parametrize("n", [255, 256, 257])
@pytest.mark.parametrize("broadcast", ["rows", "middle axis"])
def test_pointwise_of_a_broadcast_input_is_laid_out_as_pytorchs(name, n, broadcast):
    """The result of a pointwise op of an expanded input (an axis of stride 0) is stored in PyTorch's order, which
    the broadcast axis does not decide: contiguous here, so that ``view`` of it works as in PyTorch (relu from
    65536 elements and sigmoid, with glu through it, stored it column by column)."""
    op = _POINTWISE_OF_ONE[name]
    results = []
    for m in (torch, ember):
        if broadcast == "rows":
            x = m.linspace(-3, 3, n).expand(n, n)
        else:
            x = m.linspace(-3, 3, 4 * n).reshape(4, 1, n).expand(4, n, n)
        results.append(op(m, x))
    want, got = results
    assert got.stride() == want.stride() and got.is_contiguous() == want.is_contiguous()
    assert_close(got.view(-1), want.view(-1), atol=1e-6)


# ops that compute from a converted copy of their input (float64 kernels, casts, tensor(x)) or allocate their
# result themselves: each used to store an expanded input's broadcast axis innermost (NumPy's astype/empty_like)
_CONVERTING = {
    "erfinv": lambda m, x: m.erfinv(x), "i0": lambda m, x: m.i0(x), "special.i0e": lambda m, x: m.special.i0e(x),
    "special.i1": lambda m, x: m.special.i1(x), "special.i1e": lambda m, x: m.special.i1e(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x), "special.entr": lambda m, x: m.special.entr(x),
    "special.erfcx": lambda m, x: m.special.erfcx(x), "special.log_ndtr": lambda m, x: m.special.log_ndtr(x),
    "special.ndtri": lambda m, x: m.special.ndtri(x), "double": lambda m, x: x.double(),
    "long": lambda m, x: x.long(), "to_float16": lambda m, x: x.to(m.float16),
    "tensor": lambda m, x: m.tensor(x.detach().numpy()) if m is ember else m.tensor(x.numpy()),
    "ember.tensor_of_tensor": lambda m, x: x.detach().clone() if m is torch else _quiet_tensor(x),
    "xlogy_number": lambda m, x: m.xlogy(x, 2.0), "special.zeta": lambda m, x: m.special.zeta(x + 2, 2.0),
    "frexp": lambda m, x: m.frexp(x).mantissa,
}


def _quiet_tensor(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's copy-construct advice: the layout is what is tested)
        return ember.tensor(x)


@pytest.mark.parametrize("name", sorted(_CONVERTING))
@pytest.mark.parametrize("broadcast", ["rows", "middle axis"])
def test_converting_ops_of_a_broadcast_input_are_laid_out_as_pytorchs(name, broadcast):
    op = _CONVERTING[name]
    results = []
    for m in (torch, ember):
        if broadcast == "rows":
            x = m.linspace(-3, 3, 7).expand(6, 7)
        else:
            x = m.linspace(-3, 3, 28).reshape(4, 1, 7).expand(4, 6, 7)
        results.append(op(m, x))
    want, got = results
    assert got.stride() == want.stride() and got.is_contiguous() == want.is_contiguous()
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=1e-6, equal_nan=True)


_TWO_OPERANDS = {
    "xlogy": lambda m, x, y: m.xlogy(x, y), "xlogy_swapped": lambda m, x, y: m.xlogy(y, x),
    "special.xlog1py": lambda m, x, y: m.special.xlog1py(x, y), "heaviside": lambda m, x, y: m.heaviside(x, y),
    "heaviside_swapped": lambda m, x, y: m.heaviside(y, x),
}


@pytest.mark.parametrize("name", sorted(_TWO_OPERANDS))
def test_binary_ops_of_a_broadcast_and_a_transposed_operand_are_laid_out_as_pytorchs(name):
    """The broadcast operand orders nothing: the result follows the transposed one, as PyTorch's."""
    results = []
    for m in (torch, ember):
        x = m.linspace(0.0, 3, 7).expand(7, 7)
        y = (m.arange(49.0).reshape(7, 7) / 7 - 2).t()
        results.append(_TWO_OPERANDS[name](m, x, y))
    want, got = results
    assert got.stride() == want.stride()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, equal_nan=True)


def _outcome(fn):
    """(the dtype's name, the values) of ``fn()``, or (the exception's type name, its message)."""
    try:
        out = fn()
    except Exception as err:  # noqa: BLE001 (compared with torch's)
        return type(err).__name__, str(err)
    return str(out.dtype).split(".")[-1], out.tolist()


_INT_OPERANDS = {"int64": ([1, 2, 3], [3, 1, 0]), "int32": ([1, 2, 3], [3, 1, 0]), "uint8": ([1, 2, 3], [3, 1, 0]),
                 "bool": ([True, False, True], [False, False, True])}
_BINARY_ON_INTEGERS = {
    "hypot": lambda m, x, y: m.hypot(x, y),
    "logaddexp": lambda m, x, y: m.logaddexp(x, y),
    "logaddexp2": lambda m, x, y: m.logaddexp2(x, y),
    "logaddexp_method": lambda m, x, y: x.logaddexp(y),
    "hypot_mixed_ints": lambda m, x, y: m.hypot(x, y.to(m.int16)),
    "fmod": lambda m, x, y: m.fmod(x, y),
    "lerp_tensor_weight": lambda m, x, y: m.lerp(x, y, m.ones_like(x)),
    "lerp_0d_weight": lambda m, x, y: m.lerp(x, y, m.tensor(1, dtype=x.dtype)),
    "lerp_scalar_weight": lambda m, x, y: m.lerp(x, y, 0.5),
    "lerp_int_scalar_weight": lambda m, x, y: x.lerp(y, 1),
    "lerp_float_end": lambda m, x, y: m.lerp(x, y.float(), 0.5),
    "lerp_float_weight": lambda m, x, y: m.lerp(x, y, m.full((3,), 0.5)),
    # a 0-d weight takes part in the promotion: a floating one gives a floating kernel (and result)
    "lerp_0d_float_weight": lambda m, x, y: m.lerp(x, y, m.tensor(0.5)),
    "lerp_0d_float64_weight": lambda m, x, y: m.lerp(x, y, m.tensor(0.25, dtype=m.float64)),
    "lerp_0d_int_weight": lambda m, x, y: m.lerp(x, y, m.tensor(1)),
    "hypot_scalar": lambda m, x, y: m.hypot(x, 2),
    "logaddexp_scalar": lambda m, x, y: m.logaddexp(x, 2.0),
    "atan2_scalar": lambda m, x, y: m.atan2(x, 2),
    "fmax_scalar": lambda m, x, y: m.fmax(x, 2),
    "fmin_scalar": lambda m, x, y: m.fmin(x, 2),
    "xlogy_scalar": lambda m, x, y: m.xlogy(x, 2),
    "xlogy_scalar_self": lambda m, x, y: m.xlogy(2, x),
    "xlog1py_scalar": lambda m, x, y: m.special.xlog1py(x, 2),
    "float_xlogy_scalar": lambda m, x, y: m.xlogy(x.float(), 2.5),
    "hypot_float_other": lambda m, x, y: m.hypot(x, y.float()),
}


@pytest.mark.parametrize("op", list(_BINARY_ON_INTEGERS))
@pytest.mark.parametrize("dtype", list(_INT_OPERANDS))
def test_binary_ops_of_integer_and_bool_tensors_answer_or_refuse_as_pytorch(op, dtype):
    """PyTorch has no integer kernels for hypot, logaddexp(2), lerp (NotImplementedError naming the kernel and
    the dtype), refuses a Python number for the tensor operand of hypot, logaddexp, atan2, fmax, fmin (TypeError)
    and gives xlogy of an integer tensor and a number the default float dtype: the same results, dtypes, error
    types and messages."""
    a, b = _INT_OPERANDS[dtype]
    tx, ty = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, b))
    ex, ey = (ember.tensor(v, dtype=getattr(ember, dtype)) for v in (a, b))
    want = _outcome(lambda: _BINARY_ON_INTEGERS[op](torch, tx, ty))
    got = _outcome(lambda: _BINARY_ON_INTEGERS[op](ember, ex, ey))
    if want[0].startswith("float") and want[0] == got[0]:
        assert_close(np.array(got[1]), np.array(want[1]))
    else:
        assert got == want


@pytest.mark.parametrize("op", ["xlogy", "special.xlogy", "special.xlog1py"])
@pytest.mark.parametrize("operands", [(2, 3), (2.0, 3.5), (True, 2)])
def test_xlogy_of_two_numbers_is_a_type_error_as_pytorch(op, operands):
    """PyTorch's overloads need a tensor operand: two numbers are its TypeError, not an internal error."""
    def call(m):
        fn = m
        for part in op.split("."):
            fn = getattr(fn, part)
        return fn(*operands)

    with pytest.raises(TypeError, match="received an invalid combination of arguments") as want:
        call(torch)
    with pytest.raises(type(want.value), match="received an invalid combination of arguments"):
        call(ember)


@pytest.mark.parametrize("op", ["xlogy", "special.xlog1py"])
def test_xlogy_number_beyond_a_half_dtype_is_inf_without_warnings(op):
    """A number takes the tensor's dtype (1e5 is inf in float16), as PyTorch's wrapped numbers do, silently."""
    results = []
    for m in (torch, ember):
        fn = m
        for part in op.split("."):
            fn = getattr(fn, part)
        x = m.tensor([1.0, 2.0, 0.0], dtype=m.float16)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            results.append((fn(x, 1e5), fn(1e5, x), fn(x, -1e5)))
    for got, want in zip(results[1], results[0]):
        assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


_COMPLEX_LOGADDEXP = [complex(1, 2), complex(-3, 0.5), complex(float("inf"), 1), complex(float("-inf"), 2),
                      complex(float("nan"), 0), complex(0.5, float("nan")), complex(2, -1), complex(float("inf"), -1)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logaddexp_of_complex_tensors_as_pytorch(dtype):
    """PyTorch computes logaddexp of complex operands (log1p(exp(min - max)) + max by real part, its special cases
    for infinities and NaN); logaddexp2 and hypot stay refused. Mixed with a float tensor, it promotes."""
    got, want = [], []
    for m, out in ((torch, want), (ember, got)):
        a = m.tensor([[z] for z in _COMPLEX_LOGADDEXP], dtype=getattr(m, dtype))
        b = m.tensor([_COMPLEX_LOGADDEXP], dtype=getattr(m, dtype))
        out.append(m.logaddexp(a, b).numpy())
        out.append(m.logaddexp(m.tensor([1.0, -2.0]), m.tensor([0.5j, 1 + 1j], dtype=getattr(m, dtype))).numpy())
        for op in ("logaddexp2", "hypot"):
            with pytest.raises(NotImplementedError) as err:
                getattr(m, op)(a, b)
            out.append(str(err.value))
    for g, w in zip(got, want):
        if isinstance(w, str):
            assert g == w
        else:
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_logaddexp_complex_gradients_as_pytorch():
    check(lambda m, a, b: m.logaddexp(a * (1 + 0.5j), b * (0.3 - 1j)).abs(), [(3, 4), (3, 4)], dtype=np.float64,
          atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("weight", [0.3, 0.9, 0.05, -0.7, 0.999])
def test_lerp_with_a_number_weight_is_pytorchs_bits(weight, dtype):
    # PyTorch: start + w * (end - start) for |w| < 0.5, end + (w - 1) * (end - start) otherwise, each one fused
    # multiply-add, half and bfloat16 in float32 (EMA and Adam-style updates lerp_ their buffers so)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4099)).astype(np.float32)
    outs = []
    for m in (ember, torch):
        dt = getattr(m, dtype)
        x, y = m.tensor(a).to(dt).requires_grad_(), m.tensor(b).to(dt).requires_grad_()
        out = x.lerp(y, weight)
        out.sum().backward()
        in_place = m.tensor(a).to(dt).lerp_(m.tensor(b).to(dt), weight)
        outs.append([t.detach().float().numpy() for t in (out, in_place, x.grad, y.grad)])
    for e, t in zip(*outs):
        if dtype == "float32":  # (ember rounds the product, then the sum: documented)
            np.testing.assert_allclose(e, t, rtol=2e-7, atol=2e-7)
        else:
            np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("weight", [0.49999999, 0.4999999999999999, -0.49999999])
def test_lerp_picks_its_formula_by_the_weight_in_the_kernels_dtype(weight, dtype):
    """PyTorch's kernel tests |w| < 0.5 on w in its computing dtype (float32 for float32 and the half dtypes): a
    weight that rounds to 0.5 there takes the other formula, which an infinite operand tells apart."""
    outs = []
    for m in (ember, torch):
        dt = getattr(m, dtype)
        x, y = m.tensor([np.inf, 1.0, -np.inf]).to(dt), m.tensor([1.0, -np.inf, 2.0]).to(dt)
        outs.append([x.lerp(y, weight).tolist(), x.clone().lerp_(y, weight).tolist()])
    np.testing.assert_array_equal(*outs)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("inplace", [False, True])
def test_nan_to_num_of_a_complex_tensor_replaces_each_part_as_pytorch(dtype, inplace):
    # (each part apart: a NaN real part with a finite imaginary one keeps the imaginary one)
    values = [complex(np.nan, 1), complex(np.inf, -np.inf), 1 + 2j, complex(2, np.nan), complex(-np.inf, np.nan)]
    results = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=getattr(m, dtype))
        y = x.nan_to_num_(posinf=3.0) if inplace else m.nan_to_num(x, nan=0.5, neginf=-4.0)
        results.append(y)
    assert_close(results[0], results[1])
    for m in (ember, torch):  # PyTorch defines no complex derivative for it
        with pytest.raises(RuntimeError, match="does not support automatic differentiation for outputs with complex"):
            m.nan_to_num(m.tensor(values, dtype=getattr(m, dtype), requires_grad=True))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "int8", "bool"])
@pytest.mark.parametrize("spelling", ["function", "method"])
def test_bitwise_not_of_a_floating_tensor_raises_as_pytorch(dtype, spelling):
    # (NumPy's invert raised its own TypeError; PyTorch has no floating kernel: NotImplementedError)
    def run(m):
        x = m.zeros(3, dtype=getattr(m, dtype))
        return m.bitwise_not(x) if spelling == "function" else x.bitwise_not()

    (got, _), (want, _) = outcomes(run)
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    else:
        assert_close(got, want)
