"""The binary and value-testing ops of ``ember/ops/elementwise.py`` at their edges, against PyTorch: each public
function over PyTorch's type-promotion table (bool, uint8, int8, int64, float16, bfloat16, float32, float64, complex128
operands; a Python bool, int, float, -0.0 or complex number on either side; a 0-d tensor beside an n-d one; empty and
broadcast shapes), on data holding NaN, infinities and -0.0 where the formulas branch: the value (signed zeros
included), dtype, shape and node name, the gradients of a floating result, or PyTorch's error type and message.

Left out on purpose (docs/api.md names the first, docs/testing.md's module sample of elementwise.py the second):
complex32 (a float16 tensor with a complex number: ember has none, its result is complex64) and a complex number
added to (or subtracted from) a non-finite real tensor (PyTorch's kernel computes ``a + alpha * b`` as complex numbers
even for alpha 1, ``1 * (inf + 0j)`` making a NaN imaginary part)."""

import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float64", "float32", "float16", "bfloat16", "complex128", "int64", "int8", "uint8", "bool"]
INEXACT = {"float64", "float32", "float16", "bfloat16", "complex128", "complex64"}
NUMBERS = [True, 0, 3, -2, 2.5, -0.0, 1.5 - 2j, 300]


def _array(rng, shape, dt):
    a = np.array(rng.standard_normal(shape) * 3)
    if dt == "bool":
        return a > 0
    if dt == "uint8":
        return np.abs(a).astype(np.int64) + 1
    if dt.startswith("int"):
        v = a.astype(np.int64)
        return np.where(v == 0, -1, v)  # (no integer division by zero: its error is tested on its own)
    if dt.startswith("complex"):
        return a + 1j * rng.standard_normal(shape)
    flat = a.reshape(-1)
    flat[:5] = [np.nan, np.inf, -0.0, -np.inf, 0.0][:flat.size]  # (where the formulas branch)
    return a


def _numpy(t):
    t = t.detach()
    if t.dtype in (torch.bool, ember.bool):
        return t.numpy()
    m = torch if isinstance(t, torch.Tensor) else ember
    return t.to(m.complex128 if t.is_complex() else m.float64).numpy()


def _run(m, fn, operands, dts, grads=True):
    """``fn(m)`` on ``m``'s tensors (an operand whose dtype is None is a Python number): ("error", type, message) or
    [value, dtype, shape, node name, gradients of a floating or complex result]."""
    needs = all(d in INEXACT for d in dts if d is not None)
    ts = [v if d is None else m.tensor(v).to(getattr(m, d)).requires_grad_(needs) for v, d in zip(operands, dts)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = fn(m)(*ts)
    except Exception as e:  # noqa: BLE001 (PyTorch's type and message compared)
        return ("error", type(e).__name__, str(e))
    if not isinstance(out, (torch.Tensor, ember.Tensor)):
        return [out]
    result = [_numpy(out), str(out.dtype).split(".")[-1], tuple(out.shape),
              None if out.grad_fn is None else type(out.grad_fn).__name__]
    if grads and out.grad_fn is not None and (out.is_floating_point() or out.is_complex()):
        inputs = [t for t in ts if isinstance(t, (torch.Tensor, ember.Tensor))]
        try:
            gs = m.autograd.grad(out, inputs, m.ones_like(out), allow_unused=True)
            result.append([None if g is None else _numpy(g) for g in gs])
        except RuntimeError as e:  # (an op without a derivative: its message)
            result.append(("error", str(e)))
    return result


def _same_values(e, t, dts, result, where, signed_zeros=True):
    """``e`` (ember's) as ``t`` (PyTorch's), within the rounding of the ``result`` dtype and of half precision
    operands; a zero's sign too (``signed_zeros``)."""
    half = any(d in ("float16", "bfloat16") for d in (*dts, result) if d)
    single = result in ("float32", "complex64")
    tol = dict(rtol=1e-2, atol=1e-2) if half else dict(rtol=1e-6, atol=1e-6) if single else dict(rtol=1e-12, atol=0)
    np.testing.assert_allclose(e, t, **tol, equal_nan=True, err_msg=where)
    if signed_zeros and e.dtype.kind == "f":  # (-0.0 where PyTorch's is, +0.0 where its is)
        zero = (e == 0) & (t == 0)
        np.testing.assert_array_equal(np.signbit(e[zero]), np.signbit(t[zero]), err_msg=f"signed zero {where}")


def _compare(name, fn, operands, dts, grads=True, message=True):
    e, t = _run(ember, fn, operands, dts, grads), _run(torch, fn, operands, dts, grads)
    where = f"{name} {[o if d is None else d for o, d in zip(operands, dts)]}"
    if isinstance(t, tuple) or isinstance(e, tuple):
        assert isinstance(e, tuple) and isinstance(t, tuple), (where, e[:4], t[:4])
        assert e[1] == t[1], (where, e, t)
        if message:
            assert e[2] == t[2], where
        return
    if len(t) == 1:
        assert e == t, where
        return
    assert e[1:4] == t[1:4], where  # dtype, shape, node name
    _same_values(e[0], t[0], dts, t[1], where)
    assert len(e) == len(t), where
    if len(t) > 4:
        if isinstance(t[4], tuple):
            assert e[4] == t[4], where
            return
        for ge, gt in zip(e[4], t[4]):
            assert (ge is None) == (gt is None), where
            if gt is not None:
                _same_values(ge, gt, dts, t[1], f"gradient {where}", signed_zeros=False)


BINARY = {
    "add": lambda m: m.add, "sub": lambda m: m.sub, "rsub": lambda m: m.rsub, "mul": lambda m: m.mul,
    "div": lambda m: m.div, "true_divide": lambda m: m.true_divide,
    "div_floor": lambda m: (lambda a, b: m.div(a, b, rounding_mode="floor")),
    "div_trunc": lambda m: (lambda a, b: m.div(a, b, rounding_mode="trunc")),
    "pow": lambda m: m.pow, "float_power": lambda m: m.float_power, "remainder": lambda m: m.remainder,
    "floor_divide": lambda m: m.floor_divide, "maximum": lambda m: m.maximum, "minimum": lambda m: m.minimum,
    "eq": lambda m: m.eq, "ne": lambda m: m.ne, "lt": lambda m: m.lt, "le": lambda m: m.le, "gt": lambda m: m.gt,
    "ge": lambda m: m.ge, "logical_and": lambda m: m.logical_and, "logical_or": lambda m: m.logical_or,
    "logical_xor": lambda m: m.logical_xor, "bitwise_and": lambda m: m.bitwise_and,
    "bitwise_or": lambda m: m.bitwise_or, "bitwise_xor": lambda m: m.bitwise_xor,
    "bitwise_left_shift": lambda m: m.bitwise_left_shift, "bitwise_right_shift": lambda m: m.bitwise_right_shift,
}


@pytest.mark.parametrize("name", list(BINARY))
def test_a_tensor_beside_a_python_number_as_pytorchs(name):
    fn = BINARY[name]
    rng = np.random.default_rng(5501)
    for dt in DTYPES:
        data = _array(rng, (2, 3), dt)
        for number in NUMBERS:
            if isinstance(number, complex) and dt == "float16":
                continue  # (complex32: none in ember, docs/api.md)
            finite = np.where(np.isfinite(data), data, 1.0) if dt not in ("bool", "uint8") else data
            values = finite if isinstance(number, complex) and name in ("add", "sub", "rsub") else data
            _compare(name, fn, (values, number), (dt, None))
            # (a number first: pow's bool base has no gradient in PyTorch (its backward fails an internal assert);
            # rsub's refusal of it is worded by ember/ops/special_fns.py, not as PyTorch's parser)
            _compare(name, fn, (number, values), (None, dt), grads=not (name == "pow" and number.__class__ is bool),
                     message=name != "rsub")


SHAPES = [((2, 3), (3,)), ((), (4,)), ((4,), ()), ((0, 1), (1,)), ((1,), (2, 1))]


def _complex32(da, sa, db, sb) -> bool:
    """Whether PyTorch's promotion of the two operands is complex32 (ember has none: docs/api.md)."""
    return torch.result_type(torch.zeros(sa, dtype=getattr(torch, da)),
                             torch.zeros(sb, dtype=getattr(torch, db))) == torch.complex32


@pytest.mark.parametrize("name", list(BINARY))
def test_two_tensors_as_pytorchs(name):
    """Every pair of dtypes, each in two of the shape pairs (n-d with broadcast, 0-d beside n-d, empty)."""
    fn = BINARY[name]
    rng = np.random.default_rng(5502)
    for i, da in enumerate(DTYPES):
        for j, db in enumerate(DTYPES):
            for sa, sb in (SHAPES[(i + j) % len(SHAPES)], SHAPES[(i + j + 2) % len(SHAPES)]):
                if _complex32(da, sa, db, sb):
                    continue
                a, b = _array(rng, sa, da), _array(rng, sb, db)
                if name in ("add", "sub", "rsub") and (da.startswith("complex") != db.startswith("complex")):
                    a, b = (np.where(np.isfinite(v), v, 1.0) for v in (a, b))  # (PyTorch's alpha * b: module doc)
                _compare(name, fn, (a, b), (da, db))


UNARY = {
    "isnan": lambda m: m.isnan, "isinf": lambda m: m.isinf, "isfinite": lambda m: m.isfinite,
    "isposinf": lambda m: m.isposinf, "isneginf": lambda m: m.isneginf, "signbit": lambda m: m.signbit,
    "isreal": lambda m: m.isreal, "logical_not": lambda m: m.logical_not, "bitwise_not": lambda m: m.bitwise_not,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_the_value_tests_as_pytorchs(name):
    rng = np.random.default_rng(5503)
    for dt in DTYPES:
        for shape in [(2, 3), (), (0,), (1, 1)]:
            _compare(name, UNARY[name], (_array(rng, shape, dt),), (dt,))


def _remainders(m, values, dt, divisor):
    x = m.tensor(values, dtype=getattr(m, dt))
    return [m.remainder(x, divisor), m.remainder(x, m.tensor(divisor, dtype=getattr(m, dt))),
            m.remainder(x, m.full_like(x, divisor)), m.remainder(-3.0, x),  # (a number first: remainder.Scalar_Tensor)
            x.clone().remainder_(divisor), x.clone().remainder_(m.full_like(x, divisor))]


def test_remainder_keeps_the_dividends_sign_of_a_zero_result_as_pytorchs():
    """PyTorch's remainder is fmod(a, b) moved by b where the signs differ: a zero result has the dividend's sign
    (-0.0 % 3 and -3.0 % 3 are -0.0), where NumPy's remainder gives the divisor's; in place too."""
    values = [-0.0, 0.0, 3.0, -3.0, 6.0, -6.0, 5.5, -5.5, float("inf"), float("nan")]
    for dt in ("float64", "float32", "float16", "bfloat16"):
        for divisor in (3, -3, 3.0, -0.0):
            for e, t in zip(_remainders(ember, values, dt, divisor), _remainders(torch, values, dt, divisor)):
                _same_values(_numpy(e), _numpy(t), (dt,), dt, f"{dt} {divisor}")


def test_integer_division_by_zero_raises_only_where_it_divides_as_pytorchs():
    """PyTorch's kernels raise ZeroDivisionError at an integer division they compute: in place too (NumPy's
    remainder by zero is 0), never for an empty result."""
    calls = [lambda m: m.ones(3, dtype=m.int64).remainder_(0), lambda m: m.ones(3, dtype=m.int8).remainder_(False),
             lambda m: m.ones(3, dtype=m.int64).remainder_(m.zeros(3, dtype=m.int64)),
             lambda m: m.ones(3, dtype=m.int64).remainder_(0.0), lambda m: m.ones(0, dtype=m.int64).remainder_(0),
             lambda m: m.remainder(m.zeros(0, 1, dtype=m.int64), m.tensor([False])),
             lambda m: m.floor_divide(m.zeros(0, dtype=m.uint8), 0), lambda m: m.remainder(5, m.tensor([0, 1])),
             lambda m: m.div(m.zeros(0, dtype=m.int8), m.tensor(0, dtype=m.int8), rounding_mode="trunc"),
             lambda m: m.div(m.ones(2, dtype=m.int8), m.tensor(0, dtype=m.int8), rounding_mode="floor")]
    for call in calls:
        outcomes = []
        for m in (torch, ember):
            try:
                out = call(m)
            except RuntimeError as e:
                outcomes.append(str(e))
            else:
                outcomes.append((str(out.dtype).split(".")[-1], tuple(out.shape), out.tolist()))
        assert outcomes[1] == outcomes[0]


def test_remainder_of_a_number_by_a_tensor_has_no_derivative_as_pytorchs():
    """PyTorch's remainder.Scalar_Tensor has no derivative formula: a NotImplemented node whose backward raises."""
    for m in (torch, ember):
        y = m.tensor([1.0, 2.0, -1.5], requires_grad=True)
        out = m.remainder(2.5, y)
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
            out.sum().backward()
        x = m.tensor([1.0, 2.0, -1.5], requires_grad=True)  # (a tensor dividend: RemainderBackward0/1)
        assert type(m.remainder(x, 2.5).grad_fn).__name__ == "RemainderBackward0"
        assert type(m.remainder(x, y).grad_fn).__name__ == "RemainderBackward1"


def test_a_number_base_of_a_complex_exponent_differentiates_through_its_complex_log():
    for dt in ("complex128", "complex64"):
        for base in (-2, -0.5, 3, 2.5):
            grads = []
            for m in (torch, ember):
                z = m.tensor([1 + 1j, 2 - 1j, -1.5 + 0j], dtype=getattr(m, dt), requires_grad=True)
                grads.append(_numpy(m.autograd.grad(m.pow(base, z).abs().sum(), z)[0]))
            np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, err_msg=f"{dt} {base}")


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "greater", "less_equal", "not_equal"])
def test_a_comparison_refuses_a_number_first_as_pytorchs(name):
    for args in [(3, None), (2.5, None), (3, 4), ("a", None)]:
        errors = []
        for m in (torch, ember):
            with pytest.raises(TypeError) as caught:
                getattr(m, name)(args[0], m.ones(2) if args[1] is None else args[1])
            errors.append(str(caught.value))
        assert errors[1] == errors[0]


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_refuse_a_number_first_as_pytorchs(name):
    for number, dt in ((3, "uint8"), (300, "int8"), (-2, "uint8"), (2.5, "float32")):
        errors = []
        for m in (torch, ember):
            with pytest.raises(TypeError) as caught:
                getattr(m, name)(number, m.ones(2, dtype=getattr(m, dt)))
            errors.append(str(caught.value))
        assert errors[1] == errors[0]


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "bfloat16", "int64", "int8", "uint8"])
def test_rounded_division_of_a_number_by_a_tensor_keeps_the_tensors_dtype(dt):
    for mode in ("trunc", "floor"):
        for number in (2.5, -0.0, 7, -7):
            divisors = [1.5, -2.0, 3.0, -4.0, -0.25] if dt in INEXACT else [1, -2, 3, -4]
            results = [m.div(number, m.tensor(divisors).to(getattr(m, dt)), rounding_mode=mode)
                       if dt in INEXACT or isinstance(number, int) else None for m in (torch, ember)]
            if results[0] is None:
                continue
            assert str(results[1].dtype).split(".")[-1] == str(results[0].dtype).split(".")[-1], (dt, mode, number)
            _same_values(_numpy(results[1]), _numpy(results[0]), (dt,), dt, f"{dt} {mode} {number}")


@pytest.mark.parametrize("name", ["add", "sub", "rsub"])
def test_alpha_over_the_promotion_table_as_pytorchs(name):
    """``alpha=`` of each kind beside operands of each kind: PyTorch's value and gradient (alpha scales the second
    operand's), or its refusal of an alpha the result cannot take (a float for integers, a bool for non-bool ...)."""
    rng = np.random.default_rng(5504)
    for i, dt in enumerate(["float64", "float32", "bfloat16", "complex128", "int64", "uint8", "bool"]):
        for alpha in (2, -1, 0, 0.5, True, False, 2 - 1j):
            fn = (lambda m, alpha=alpha: (lambda x, y: getattr(m, name)(x, y, alpha=alpha)))
            a, b = _array(rng, (2, 3), dt), _array(rng, (3,), "float64" if i % 2 else dt)
            a, b = (np.where(np.isfinite(v), v, 1.0) if v.dtype.kind == "f" else v for v in (a, b))
            _compare(f"{name} alpha={alpha}", fn, (a, b), (dt, "float64" if i % 2 else dt))
            _compare(f"{name} alpha={alpha}", fn, (a, 3), (dt, None), message=name != "rsub")


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "bfloat16", "complex128", "int64", "uint8", "bool"])
def test_isclose_and_allclose_keywords_as_pytorchs(dt):
    """Each keyword left to its default, then set (rtol, atol, equal_nan), on data with NaN and infinities."""
    rng = np.random.default_rng(5505)
    a = _array(rng, (2, 4), dt)
    b = a + (rng.standard_normal(a.shape) * 1e-6 if a.dtype.kind in "fc" else 0)
    for kw in ({}, {"rtol": 0.0}, {"atol": 0.0}, {"rtol": 0.0, "atol": 0.0}, {"equal_nan": True},
               {"rtol": 1e-3, "atol": 1e-2, "equal_nan": True}):
        for fname in ("isclose", "allclose"):
            fn = (lambda m, fname=fname, kw=kw: (lambda x, y: getattr(m, fname)(x, y, **kw)))
            _compare(f"{fname} {kw}", fn, (a, b), (dt, dt), grads=False)
        _compare("isclose", lambda m: m.isclose, (a, np.real(b).astype(np.float64) if dt != "float64" else b),
                 (dt, "float32" if dt == "float64" else "float64"), grads=False)  # (two dtypes: PyTorch's error)
    _compare("equal", lambda m: m.equal, (a, b), (dt, dt), grads=False)
    _compare("equal", lambda m: m.equal, (a, a[:1]), (dt, dt), grads=False)  # (another shape: False)


def test_a_complex_exponent_without_imaginary_part_at_a_zero_base_as_pytorchs():
    """PyTorch's special cases of a number exponent (1, 2, 3, 0.5 and their negatives) hold for a complex number
    with no imaginary part too (2 + 0j squares): at a zero base, its values; other exponents exp(b log a)."""
    data = np.array([0j, 1 + 1j, -0.0 + 0j, 2 - 0.5j])
    for dt in ("complex128", "complex64"):
        for e in (1 + 0j, 2 + 0j, 3 + 0j, -1 + 0j, -2 + 0j, 0.5 + 0j, -0.5 + 0j, 2.5 + 0j, 1 + 1j, 0j):
            _compare("pow", lambda m: m.pow, (data, e), (dt, None), grads=False)
