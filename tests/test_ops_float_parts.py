"""torch.ldexp / frexp / nextafter / heaviside (and Tensor.ldexp(_), frexp, nextafter(_), heaviside(_),
torch.ldexp_, out=) against PyTorch: values at the edges (signed zeros, subnormals, inf, nan, overflow), dtype
promotion over the dtypes, broadcasting, gradients, and the errors (types and messages)."""

import math

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "bool"]
EDGES = [0.0, -0.0, 1.0, -3.5, 1e-40, -2.5e-39, 3e38, 65504.0, 1e-7, float("inf"), float("-inf"), float("nan")]


def each(fn):
    """fn(framework) for ember and torch: the results, or the error types and messages."""
    out = []
    for fw in (ember, torch):
        try:
            out.append(fn(fw))
        except Exception as e:  # noqa: BLE001 (comparing the frameworks' errors)
            out.append((type(e).__name__, str(e)))
    return out


def array(t):
    return t.float().numpy() if t.dtype in (torch.bfloat16, ember.bfloat16) else t.numpy()


def same(got, want, rtol=0.0):
    named = type(want).__module__ == "torch.return_types"
    if isinstance(want, tuple) and not named:  # an error's (type, message)
        assert got == want
        return
    if named:
        assert type(got).__name__ == type(want).__name__
        assert (got.mantissa, got.exponent) == (got[0], got[1]) and (want.mantissa, want.exponent) == tuple(want)
        for g, w in zip(got, want):
            same(g, w, rtol)
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    if rtol:
        np.testing.assert_allclose(array(got), array(want), rtol=rtol)
    else:
        np.testing.assert_array_equal(array(got), array(want))
        if not np.iscomplexobj(array(want)):
            assert np.array_equal(np.signbit(array(got)), np.signbit(array(want)))


def tensor(fw, values, dtype):
    return fw.tensor(values, dtype=getattr(fw, dtype))


@pytest.mark.parametrize("x_dtype", DTYPES)
@pytest.mark.parametrize("e_dtype", DTYPES)
def test_ldexp_dtypes_and_values_as_pytorch(x_dtype, e_dtype):
    def fn(fw):
        x = tensor(fw, [1, 0, 1, 0, 1, 1], x_dtype) * tensor(fw, [1.5, 2.0, -0.75, 1.0, 3.0, 0.5], "float64").to(
            getattr(fw, x_dtype)) if x_dtype != "bool" else tensor(fw, [1, 0, 1, 0, 1, 1], x_dtype)
        e = tensor(fw, [3, 1, 0, 1, 1, 0], e_dtype)
        return fw.ldexp(x, e)

    same(*each(fn))


def test_ldexp_range_as_pytorch():
    # integer exponents scale exactly (no overflow of 2**e first; C's int: 2**40 wraps to 0)
    for x, e in [([1e30, 1e-30, 3e-39, 1.0, 1.0], [-200, 100, 1, 2 ** 40, -150]),
                 ([1.5, -2.0], [127, -149])]:
        for d in ("float32", "float64", "float16", "bfloat16"):
            same(*each(lambda fw, x=x, d=d, e=e: fw.ldexp(tensor(fw, x, d), fw.tensor(e))))
    # floating exponents multiply by exp2
    same(*each(lambda fw: fw.ldexp(fw.tensor([1e30, 2.0, 3.0]), fw.tensor([-200.0, 0.5, -1.25]))))
    # broadcasting (PyTorch's integer-exponent kernel warns where the result outgrows input's shape; ember does not)
    same(*each(lambda fw: fw.ldexp(fw.tensor([[1.0], [2.0]]), fw.tensor([1.0, 2.0, 3.0]))))
    same(*each(lambda fw: fw.ldexp(fw.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), fw.tensor([1, 2, -3]))))
    same(*each(lambda fw: fw.ldexp(fw.tensor([1 + 1j, -2j]), fw.tensor([3, -1]))))


def test_ldexp_gradients_as_pytorch():
    for e_float in (True, False):
        def fn(fw, e_float=e_float):
            x = fw.tensor([1.5, -2.0, 0.25], dtype=fw.float64, requires_grad=True)
            e = (fw.tensor([3.0, -1.0, 0.5], dtype=fw.float64, requires_grad=True) if e_float
                 else fw.tensor([3, -1, 0]))
            y = fw.ldexp(x, e)
            assert type(y.grad_fn).__name__ == "LdexpBackward0"
            (y * fw.tensor([1.0, 2.0, 3.0], dtype=fw.float64)).sum().backward()
            return x.grad, (e.grad if e_float else x.grad)

        (gx, ge), (wx, we) = each(fn)
        same(gx, wx, 1e-15)
        same(ge, we, 1e-15)


def test_ldexp_second_derivatives_as_pytorch():
    # e's gradient g * out * ln 2 reads the output: differentiable again in x and in e
    def fn(fw):
        x = fw.tensor([1.5, -2.0, 0.25], dtype=fw.float64, requires_grad=True)
        e = fw.tensor([3.0, -1.0, 0.5], dtype=fw.float64, requires_grad=True)
        gx, ge = fw.autograd.grad(fw.ldexp(x, e).sum(), (x, e), create_graph=True)
        return fw.autograd.grad((gx * ge).sum(), (x, e))

    (gx, ge), (wx, we) = each(fn)
    same(gx, wx, 1e-15)
    same(ge, we, 1e-15)


@pytest.mark.parametrize("case", ["number", "bool_exponent", "in_place_int", "out_int"])
def test_ldexp_errors_as_pytorch(case):
    def fn(fw):
        if case == "number":
            return fw.ldexp(fw.tensor([1.0]), 3)
        if case == "bool_exponent":
            return fw.ldexp(fw.tensor([1.0]), fw.tensor([True]))
        if case == "in_place_int":
            return fw.tensor([1, 2]).ldexp_(fw.tensor([3, 4]))
        return fw.ldexp(fw.tensor([1.0]), fw.tensor([3]), out=fw.empty(1, dtype=fw.int64))

    got, want = each(fn)
    assert isinstance(want, tuple) and got == want


def test_ldexp_in_place_and_out_as_pytorch():
    def fn(fw):
        x = fw.tensor([1.0, 2.0, -0.5])
        r = x.ldexp_(fw.tensor([3, 4, -1]))
        assert r is x
        y = fw.tensor([1.0, 3.0], dtype=fw.float64)
        assert fw.ldexp_(y, fw.tensor([2, 2])) is y
        out = fw.empty(0)
        assert fw.ldexp(fw.tensor([1.0, 2.0]), fw.tensor([3, 4]), out=out) is out
        return fw.cat([x.double(), y, out.double()])

    same(*each(fn))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_frexp_values_as_pytorch(dtype):
    def fn(fw):
        return fw.frexp(tensor(fw, EDGES, "float64").to(getattr(fw, dtype)))

    same(*each(fn))
    got, want = each(lambda fw: tensor(fw, [[8.0, -0.3]], dtype).frexp())
    same(got, want)


def test_frexp_gradient_and_errors_as_pytorch():
    def fn(fw):
        x = fw.tensor([1.0, 6.0, -0.3, 0.0], dtype=fw.float64, requires_grad=True)
        m, e = fw.frexp(x)
        assert type(m.grad_fn).__name__ == "FrexpBackward0" and not e.requires_grad
        (m * fw.tensor([1.0, 2.0, 3.0, 4.0], dtype=fw.float64)).sum().backward()
        return x.grad

    same(*each(fn))
    for bad in (lambda fw: fw.frexp(fw.tensor([1, 2])), lambda fw: fw.frexp(fw.tensor([1 + 1j]))):
        got, want = each(bad)
        assert isinstance(want, tuple) and got == want


@pytest.mark.parametrize("out", [("float32", "int32"), ("float32", "int64"), ("float64", "int32")])
def test_frexp_out_as_pytorch(out):
    def fn(fw):
        m, e = fw.empty(0, dtype=getattr(fw, out[0])), fw.empty(0, dtype=getattr(fw, out[1]))
        r = fw.frexp(fw.tensor([3.0, -0.25]), out=(m, e))
        assert r.mantissa is m and r.exponent is e
        return r

    same(*each(fn))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nextafter_values_as_pytorch(dtype):
    x = [0.0, -0.0, 1.0, 1.0, float("inf"), float("nan"), 1.0, -1e-40, 65504.0, 2.0]
    y = [1.0, -1.0, 2.0, 0.0, 0.0, 1.0, float("nan"), 0.0, float("inf"), 2.0]
    same(*each(lambda fw: fw.nextafter(tensor(fw, x, dtype), tensor(fw, y, dtype))))


def test_nextafter_promotion_broadcasting_gradients_and_errors_as_pytorch():
    same(*each(lambda fw: fw.nextafter(fw.tensor([[1.0], [2.0]]), fw.tensor([3.0, 0.0], dtype=fw.float64))))
    same(*each(lambda fw: fw.nextafter(fw.tensor([1.0, 2.0]), fw.tensor(3.0, dtype=fw.float64))))
    same(*each(lambda fw: fw.tensor([1.0, 2.0]).nextafter_(fw.tensor([3.0, 0.0]))))

    def grads(fw):
        x = fw.tensor([1.0, 2.0], dtype=fw.float64, requires_grad=True)
        y = fw.tensor([3.0, 0.0], dtype=fw.float64, requires_grad=True)
        r = fw.nextafter(x, y)
        assert type(r.grad_fn).__name__ == "NextafterBackward0"
        (r * 3).sum().backward()
        return fw.cat([x.grad, y.grad])

    same(*each(grads))
    for bad in (lambda fw: fw.nextafter(fw.tensor([1, 2]), fw.tensor([2, 1])),
                lambda fw: fw.nextafter(fw.tensor([1.0]), 2.0)):
        got, want = each(bad)
        assert isinstance(want, tuple) and got == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16"])
def test_heaviside_values_as_pytorch(dtype):
    x = [-1, 0, 2, 0] if dtype in ("int64", "uint8", "bool") else [-1.0, 0.0, -0.0, 2.0, float("nan"),
                                                                   float("-inf")]
    if dtype == "bool":
        x = [True, False, True, False]
    v = [True, False] if dtype == "bool" else [7, 5]
    same(*each(lambda fw: fw.heaviside(tensor(fw, x, dtype)[:, None], tensor(fw, v, dtype))))
    same(*each(lambda fw: tensor(fw, x, dtype).heaviside(tensor(fw, v[0], dtype))))
    same(*each(lambda fw: tensor(fw, x, dtype).heaviside_(tensor(fw, v[:1], dtype))))


@pytest.mark.parametrize("case", ["dtypes", "zero_dim_dtype", "complex", "number", "out_dtype", "backward"])
def test_heaviside_errors_as_pytorch(case):
    def fn(fw):
        if case == "dtypes":
            return fw.heaviside(fw.tensor([1, 0]), fw.tensor([0.5]))
        if case == "zero_dim_dtype":
            return fw.heaviside(fw.tensor([1.0, 0.0]), fw.tensor(0.5, dtype=fw.float64))
        if case == "complex":
            return fw.heaviside(fw.tensor([1j]), fw.tensor([1 + 0j]))
        if case == "number":
            return fw.heaviside(fw.tensor([1.0]), 0.5)
        if case == "out_dtype":
            return fw.heaviside(fw.tensor([1.0]), fw.tensor([0.5]), out=fw.empty(1, dtype=fw.float64))
        x = fw.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        y = fw.heaviside(x, fw.tensor([0.5]))
        assert type(y.grad_fn).__name__ == "NotImplemented"
        y.sum().backward()

    got, want = each(fn)
    assert isinstance(want, tuple) and got == want


def test_heaviside_out_as_pytorch():
    def fn(fw):
        out = fw.empty(0)
        assert fw.heaviside(fw.tensor([-1.0, 0.0, 3.0]), fw.tensor([0.25]), out=out) is out
        return out

    same(*each(fn))
    assert math.isnan(ember.heaviside(ember.tensor([0.0]), ember.tensor([float("nan")])).item())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64"])
def test_frac_refuses_other_than_floating_dtypes_as_pytorch(dtype):
    got, want = each(lambda fw: fw.frac(fw.tensor([1]).to(getattr(fw, dtype))))
    assert got == want


@pytest.mark.parametrize("x_dtype,e_dtype", [("float32", "bfloat16"), ("float32", "float16"),
                                             ("float64", "bfloat16"), ("bfloat16", "float32")])
def test_ldexp_power_of_a_floating_exponent_rounds_in_its_dtype_as_pytorch(x_dtype, e_dtype):
    # PyTorch computes x * pow(2, e): the power rounded to e's dtype before the product in the promoted one
    e_values = [0.3, -1.7, 2.45, 0.01, -0.5]

    def fn(fw):
        x = tensor(fw, [1.1, -3.3, 0.7, 5.0, 1.0], x_dtype).requires_grad_()
        e = tensor(fw, e_values, e_dtype).requires_grad_()
        out = fw.ldexp(x, e)
        (out * tensor(fw, [1.0, 2.0, 3.0, 1.0, 2.0], x_dtype)).sum().backward()
        return out.detach(), x.grad, e.grad

    (got, got_x, got_e), (want, want_x, want_e) = each(fn)
    same(got, want, rtol=1e-6)  # (a float32 exponent: NumPy's exp2 and PyTorch's pow may differ in the last bit)
    same(got_x, want_x, rtol=1e-6)
    same(got_e, want_e, rtol=2e-2)


def test_ldexp_gradients_of_complex_operands_are_conjugated_as_pytorch():
    rng = np.random.default_rng(0)
    x, e = (rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(2))

    def fn(fw):
        xt, et = fw.tensor(x, requires_grad=True), fw.tensor(e, requires_grad=True)
        (fw.ldexp(xt, et) * fw.tensor([1, 2 + 1j, 3, 1j])).real.sum().backward()
        return xt.grad, et.grad

    for got, want in zip(*each(fn)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
