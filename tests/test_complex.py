"""Complex tensors against PyTorch: dtypes and promotion, creation, repr, the views of their parts
(real/imag, view_as_real/view_as_complex), complex()/polar()/conj/angle, and gradients in PyTorch's
convention (z.grad = dL/dRe z + i dL/dIm z) through every op that takes complex input."""

from __future__ import annotations

import io
import itertools
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check
from test_data_samplers import raises_like_torch

import ember

C64 = np.complex64


def test_dtypes_and_aliases():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128 and ember.chalf is ember.complex32
    for name in ("complex64", "complex128", "complex32"):
        e, t = getattr(ember, name), getattr(torch, name)
        assert (e.is_complex, e.is_floating_point, e.itemsize) == (t.is_complex, t.is_floating_point, t.itemsize)
    assert not ember.float32.is_complex
    with pytest.raises(TypeError, match="no complex32 tensors.*complex64"):
        ember.zeros(2, dtype=ember.chalf)
    assert ember.finfo(ember.cfloat).eps == torch.finfo(torch.cfloat).eps
    assert ember.finfo(ember.cdouble).dtype == torch.finfo(torch.cdouble).dtype == "float64"


NAMES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(NAMES, 2)))
def test_promotion_as_pytorch(a, b):
    ea, eb, ta, tb = getattr(ember, a), getattr(ember, b), getattr(torch, a), getattr(torch, b)
    assert ember.promote_types(ea, eb).name == str(torch.promote_types(ta, tb)).removeprefix("torch.")
    # a dimensioned tensor with a 0-d tensor, both ways, and with Python scalars
    for (ex, tx), (ey, ty) in (((ea, ta), (eb, tb)), ((eb, tb), (ea, ta))):
        e = ember.ones(2, dtype=ex) + ember.tensor(1, dtype=ey) if "bool" not in (a, b) else None
        if e is not None:
            expected = str((torch.ones(2, dtype=tx) + torch.tensor(1, dtype=ty)).dtype)[6:]
            assert e.dtype.name == expected.replace("complex32", "complex64")
    if a != "bool":
        for s in (2, 2.5, 1j, 1 + 2j):  # (float16 * 1j is complex32 in PyTorch: ember has none, complex64)
            expected = str((torch.ones(2, dtype=ta) * s).dtype)[6:].replace("complex32", "complex64")
            assert (ember.ones(2, dtype=ea) * s).dtype.name == expected


def test_default_complex_follows_default_float():
    assert ember.tensor(1j).dtype is ember.complex64 and ember.tensor([1, 2j]).dtype is ember.complex64
    assert ember.tensor(np.array([1j])).dtype is ember.complex128  # NumPy arrays keep their dtype, as PyTorch
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor(1j).dtype is ember.complex128
        assert (ember.arange(3) * 1j).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)


def test_creation():
    for fn in ("zeros", "ones", "empty"):
        e = getattr(ember, fn)(2, 3, dtype=ember.cfloat)
        assert e.dtype is ember.complex64 and e.shape == (2, 3)
    assert ember.full((2,), 1 + 2j).dtype is ember.complex64 == ember.full((2,), 1 + 2j).dtype  # as torch.full
    assert str(torch.full((2,), 1 + 2j).dtype) == "torch.complex64"
    ember.manual_seed(0)
    z = ember.randn(200_000, dtype=ember.cfloat)
    assert z.dtype is ember.complex64
    # PyTorch's variance split: real and imaginary parts each of variance 1/2, E|z|^2 = 1
    assert abs(float(z.real.var()) - 0.5) < 0.01 and abs(float(z.imag.var()) - 0.5) < 0.01
    assert abs(float((z.abs() ** 2).mean()) - 1) < 0.01
    u = ember.rand(100_000, dtype=ember.cdouble)
    assert u.dtype is ember.complex128 and 0 <= float(u.imag.min()) and float(u.real.max()) < 1
    x = ember.tensor([1.0, 2.0]).to(ember.cfloat)
    assert x.dtype is ember.complex64 and x.tolist() == [1 + 0j, 2 + 0j]
    assert x.cdouble().dtype is ember.complex128 and complex(ember.tensor(1 + 2j)) == 1 + 2j


def test_type_strings():
    for name in ("complex64", "complex128", "float32", "int64", "bool"):
        assert ember.zeros(1, dtype=getattr(ember, name)).type() == torch.zeros(1, dtype=getattr(torch, name)).type()


def test_is_complex_and_floating_point():
    z, x = ember.zeros(2, dtype=ember.cfloat), ember.zeros(2)
    assert z.is_complex() and ember.is_complex(z) and not x.is_complex()
    assert not z.is_floating_point() and not ember.is_floating_point(z)


@pytest.mark.parametrize("values", [[1 + 2j, -3.5 - 1j, 0.25j], [[1 + 2j, -3.5e-5 - 1j], [1e6, 2]], [0j], 1j,
                                    [1.5 - 0.0j, 2, -1e-9j], list(np.arange(30) * (1 + 1j)), [[]]])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_repr_as_pytorch(values, dtype):
    e = ember.tensor(values, dtype=getattr(ember, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    assert repr(e).replace("ember.", "torch.") == repr(t)
    assert repr(e.requires_grad_()).replace("ember.", "torch.") == repr(t.requires_grad_())


def test_real_imag_are_views_and_settable():
    z = ember.tensor([1 + 2j, 3 - 4j])
    r, i = z.real, z.imag
    assert r.dtype is ember.float32 and i.tolist() == [2, -4] and ember.real(z).tolist() == [1, 3]
    r[0] = 10
    i.mul_(2)
    assert z.tolist() == [10 + 4j, 3 - 8j]
    z.real = ember.tensor([0.0, 1.0])
    z.imag = ember.tensor([5.0, 6.0])
    assert z.tolist() == [5j, 1 + 6j]
    x = ember.ones(2)
    assert x.real is x and ember.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag  # noqa: B018


def test_view_as_real_and_complex_share_memory():
    z = ember.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]])
    r = ember.view_as_real(z)
    assert r.shape == (2, 2, 2) and r.dtype is ember.float32 and r[1, 0].tolist() == [5, 6]
    r[0, 1, 1] = -1
    assert z[0, 1].item() == 3 - 1j
    a = ember.arange(12.0).view(3, 2, 2)
    c = ember.view_as_complex(a)
    assert c.shape == (3, 2) and c[1, 1].item() == 6 + 7j
    c.mul_(2)
    assert a[1, 1].tolist() == [12, 14]
    # views of views with strides that allow it; the transposed complex matrix keeps its layout
    assert ember.view_as_real(z.t())[0, 1].tolist() == [5, 6]
    assert ember.view_as_complex(ember.arange(16.0).view(4, 2, 2)[::2]).tolist() == [[0 + 1j, 2 + 3j], [8 + 9j, 10 + 11j]]
    assert ember.view_as_complex(ember.zeros(3, 2, dtype=ember.float64)).dtype is ember.complex128
    assert ember.view_as_complex(ember.arange(18.0).view(3, 3, 2)[:, 1:2]).tolist() == [[2 + 3j], [8 + 9j], [14 + 15j]]


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(2, 3), lambda m: m.zeros(3, 2).t().contiguous().t(), lambda m: m.zeros(7)[1:].view(3, 2),
    lambda m: m.zeros(3, 2, dtype=m.int64), lambda m: m.zeros(()), lambda m: m.zeros(2, 4)[:, ::2, None].expand(2, 2, 2),
], ids=["size", "stride", "offset", "int", "0-d", "expanded"])
def test_view_as_complex_errors_as_pytorch(make):
    with pytest.raises(RuntimeError) as te:
        torch.view_as_complex(make(torch))
    with pytest.raises(RuntimeError) as ee:
        ember.view_as_complex(make(ember))
    expected = str(te.value).replace("half, float and double", "float and double").split(",")[0].split(":")[0]
    assert expected in str(ee.value)


def test_view_as_complex_of_half_is_an_error():  # PyTorch makes complex32, a dtype ember does not have
    with pytest.raises(RuntimeError, match="Half .ember has no complex32 for half"):
        ember.view_as_complex(ember.zeros(3, 2, dtype=ember.float16))


def test_view_as_real_of_real_tensor_is_an_error():
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        ember.view_as_real(ember.zeros(3, 2))


def test_complex_and_polar_errors():
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Float or Double"):
        ember.polar(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))


def test_conj_family():
    z = ember.tensor([1 + 2j])
    assert z.conj().tolist() == [1 - 2j] and ember.conj_physical(z).tolist() == [1 - 2j]
    assert not z.conj().is_conj() and z.conj().resolve_conj().tolist() == [1 - 2j]
    x = ember.ones(2)
    assert x.conj() is x and not ember.is_conj(x)
    m = ember.tensor([[1 + 1j, 2j], [3, 4 - 1j]])
    assert m.mH.tolist() == torch.tensor([[1 + 1j, 2j], [3, 4 - 1j]]).mH.tolist() == m.adjoint().tolist()


def test_backward_of_complex_output_needs_a_gradient():
    z = ember.tensor([1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got ember.complex64"):
        z.sum().backward()


@pytest.mark.parametrize("src,dst", [("complex64", "complex128"), ("complex128", "complex64"),
                                     ("float32", "complex64"), ("float64", "complex128"), ("float32", "float64")])
def test_cast_gradient_keeps_what_the_source_dtype_holds(src, dst):
    """The gradient of a cast is cast back: a complex source keeps its gradient's imaginary part, a real source
    of a complex result gets the real part (as PyTorch)."""
    grads = []
    for m in (ember, torch):
        x = m.tensor(np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j] if "complex" in src else [1.0, -2.0, 0.5]),
                     dtype=getattr(m, src), requires_grad=True)
        y = x.to(getattr(m, dst))
        w = m.tensor(np.array([2 - 1j, 0.5 + 3j, 1j]) if "complex" in dst else np.array([2.0, 0.5, -1.0]),
                     dtype=getattr(m, dst))
        (y * w).abs().sum().backward()
        grads.append(x.grad)
    assert grads[0].dtype == getattr(ember, src)
    assert_close(grads[0], grads[1], atol=1e-5, rtol=1e-5)


def test_casting_complex_to_real_warns_and_keeps_real_part(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # (PyTorch warns once per process: as a fresh one)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        x = ember.tensor([1 + 2j]).float()
    assert x.tolist() == [1.0]


@pytest.mark.parametrize("op", ["sum", "prod", "mean"])
def test_reduction_to_a_real_dtype_of_a_complex_tensor_that_requires_grad_warns_as_pytorch(monkeypatch, op):
    # PyTorch's one UserWarning (the real part kept), not NumPy's ComplexWarning of the promoted copy
    monkeypatch.setattr(ember._warnings, "_warned_once", set())
    results, grads = [], []
    for m in (ember, torch):
        x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(x, op)(dtype=m.float64)
        if m is ember:  # (PyTorch's warns once per process: only a first call of the session would show it)
            assert [w.category for w in caught] == [UserWarning]
            assert "discards the imaginary part" in str(caught[0].message)
        out.backward()
        results.append(out.item())
        grads.append(x.grad.numpy())
    assert results[0] == results[1]
    np.testing.assert_array_equal(grads[0], grads[1])


# ----------------------------------------------------------------- values and gradients vs torch
UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal", "rsqrt", "neg", "abs", "angle",
         "conj", "conj_physical", "sgn", "square", "log1p"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_values_and_grads(name, dtype):
    atol = 1e-4 if dtype == np.complex64 else 1e-10
    check(lambda m, z: getattr(m, name)(z), [(3, 4)], dtype=dtype, atol=atol, rtol=1e-4)


@pytest.mark.parametrize("op", [
    lambda m, a, b: a * b, lambda m, a, b: a / b, lambda m, a, b: a + b, lambda m, a, b: a - b,
    lambda m, a, b: a @ b.transpose(0, 1), lambda m, a, b: m.matmul(a[0], b[0]),
    lambda m, a, b: m.einsum("ij,kj->ik", a, b), lambda m, a, b: a ** 2 * b, lambda m, a, b: a ** b,
    lambda m, a, b: (a * 2j + 1.5) / (b - 1j), lambda m, a, b: a.sum(0) * b.mean(),
    lambda m, a, b: a.reshape(12)[3:7] * b[1, :2].repeat(2), lambda m, a, b: m.cat([a, b]) @ b.t(),
    lambda m, a, b: a.sum() + b.mean(1).sum(),
], ids=["mul", "div", "add", "sub", "matmul", "dot", "einsum", "pow2", "pow", "scalars", "sum-mean",
        "reshape-index", "cat-mm", "full-sums"])
def test_binary_values_and_grads(op):
    check(op, [(3, 4), (3, 4)], dtype=np.complex128, atol=1e-10)


def test_mixed_real_and_complex_grads():
    # a real leaf meets a complex one: its gradient is the real part, as PyTorch's
    check(lambda m, x, z: (x * z).exp(), [np.random.default_rng(0).standard_normal((3, 4)), (3, 4)],
          dtype=np.complex128, atol=1e-10)
    check(lambda m, x, z: m.matmul(x.to(m.cdouble), z), [np.random.default_rng(1).standard_normal((2, 3)), (3, 4)],
          dtype=np.complex128, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_real_inputs_gradient_from_a_complex_result_under_create_graph(dtype):
    """The real part of a complex gradient goes down a real input's edge under create_graph too (a recorded
    gradient's real part, in the input's dtype: float32 promoted to complex128 by the other operand), and its
    own gradient is PyTorch's."""
    def run(m):
        x = m.tensor(np.array([0.5, -1.0, 2.0], dtype), requires_grad=True)
        w = m.tensor(np.array([1 + 2j, 3 - 1j, 0.5j]))
        g, = m.autograd.grad((x * w * x).abs().sum(), x, create_graph=True)
        h, = m.autograd.grad((g * g).sum(), x)
        return g, h

    (eg, eh), (tg, th) = run(ember), run(torch)
    for e, t in ((eg, tg), (eh, th)):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] == np.dtype(dtype).name
        assert_close(e, t, atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("op", [
    lambda m, z: m.view_as_real(z) * 2, lambda m, z: m.view_as_real(z * z).sum(-1),
    lambda m, z: z.real * 3 + z.imag ** 2, lambda m, z: m.real(z).exp(), lambda m, z: m.imag(z * z),
    lambda m, z: z.abs() * m.angle(z),
], ids=["view_as_real", "view_as_real2", "real-imag", "real", "imag", "abs-angle"])
def test_parts_grads(op):
    check(op, [(3, 4)], dtype=np.complex128, atol=1e-10)


@pytest.mark.parametrize("op", [
    lambda m, a, b: m.view_as_complex(m.stack([a, b], -1)), lambda m, a, b: m.complex(a, b) ** 2,
    lambda m, a, b: m.polar(a, b), lambda m, a, b: m.polar(a.abs(), b) * m.complex(b, a),
    lambda m, a, b: m.view_as_real(m.view_as_complex(m.stack([a, b], -1)).exp()),
    lambda m, a, b: m.angle(a), lambda m, a, b: m.view_as_complex(m.stack([a, b], -1)).abs(),
], ids=["view_as_complex", "complex", "polar", "polar-abs", "roundtrip", "angle-real", "abs"])
def test_build_from_real_grads(op):
    check(op, [(3, 4), (3, 4)], dtype=np.float64, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtypes_map_to_complex(dtype):
    check(lambda m, a, b: m.complex(a, b), [(2, 3), (2, 3)], dtype=dtype)
    check(lambda m, a, b: m.polar(a, b), [(2, 3), (2, 3)], dtype=dtype)


# ----------------------------------------------------------------- checkpoints
def test_save_and_load_complex():
    z = ember.randn(3, 2, dtype=ember.cfloat)
    zd = ember.randn(4, dtype=ember.cdouble, requires_grad=True)
    buf = io.BytesIO()
    ember.save({"z": z, "zd": zd}, buf)
    out = ember.load(io.BytesIO(buf.getvalue()))
    assert out["z"].dtype is ember.complex64 and ember.equal(out["z"], z) and out["zd"].requires_grad
    # ember -> PyTorch's format -> torch, and torch -> ember
    buf = io.BytesIO()
    ember.save({"z": z}, buf, format="torch")
    t = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    assert t["z"].dtype == torch.complex64 and np.array_equal(t["z"].numpy(), z.numpy())
    buf = io.BytesIO()
    torch.save({"w": torch.view_as_complex(torch.arange(8.0).view(2, 2, 2)), "d": torch.ones(2, dtype=torch.cdouble)},
               buf)
    out = ember.load(io.BytesIO(buf.getvalue()))
    assert out["w"].tolist() == [[1j, 2 + 3j], [4 + 5j, 6 + 7j]] and out["d"].dtype is ember.complex128


def test_assert_close_helper_sees_complex_dtypes():
    assert_close(ember.tensor([1j]), torch.tensor([1j]))


MORE = {
    "cumsum": lambda m, z: z.cumsum(1), "prod": lambda m, z: z.prod(1), "prod-all": lambda m, z: z.prod(),
    "norm": lambda m, z: z.norm(), "norm-dim": lambda m, z: z.norm(dim=1), "var": lambda m, z: z.var(1),
    "std": lambda m, z: z.std(), "where": lambda m, z: m.where(z.real > 0, z, z * 2),
    "masked_fill": lambda m, z: z.masked_fill(z.real > 0, 1 + 1j), "flip": lambda m, z: z.flip(0) * z,
    "roll": lambda m, z: m.roll(z, 1, 1) * z, "diag": lambda m, z: m.diag(z[:, :3]),
    "trace": lambda m, z: m.trace(z[:, :3]), "tril": lambda m, z: m.tril(z),
    "index_select": lambda m, z: z.index_select(1, m.tensor([0, 2, 2])),
    "gather": lambda m, z: z.gather(1, m.tensor([[0, 1], [2, 2], [3, 0]])), "repeat": lambda m, z: z.repeat(2, 1),
    "expand": lambda m, z: z[:, :1].expand(3, 4) * z, "sum-dim": lambda m, z: z.sum(0, keepdim=True),
    "mean-dim": lambda m, z: z.mean(1), "stack": lambda m, z: m.stack([z, z.conj()]),
    "split": lambda m, z: z.split(2, 1)[1] * 1j, "rsub": lambda m, z: 2 - z, "rdiv": lambda m, z: 1 / z,
    "pow-scalar": lambda m, z: z ** 0.5, "rpow": lambda m, z: 2 ** z, "addcmul": lambda m, z: m.addcmul(z, z, z, value=2),
    "lerp": lambda m, z: m.lerp(z, z * 1j, 0.3), "mm": lambda m, z: m.mm(z, z.t().conj()),
    "bmm": lambda m, z: m.bmm(z[None], z.t()[None]), "outer": lambda m, z: m.outer(z[0], z[1]),
    "mv": lambda m, z: m.mv(z, z[0]), "mul_": lambda m, z: z.clone().mul_(1j),
    **{f: lambda m, z, f=f: getattr(m, f)(z) for f in (
        "tan", "sinh", "cosh", "log10", "log2", "expm1", "exp2", "atan", "asin", "acos", "asinh", "acosh", "atanh",
        "sinc")},
    "logsumexp": lambda m, z: m.logsumexp(z * 3, 1),  # (the imaginary part the principal log's, in (-pi, pi])
    "logsumexp-all": lambda m, z: m.logsumexp(z * 3j, (0, 1)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops_values_and_grads(name):
    check(MORE[name], [(3, 4)], dtype=np.complex128, atol=1e-9)


@pytest.mark.parametrize("name", ["erfinv", "lgamma", "digamma", "logit"])
@pytest.mark.parametrize("form", ["function", "method", "in-place"])
def test_real_only_functions_refuse_complex_as_pytorch(name, form):
    # PyTorch's kernels have no complex version: its NotImplementedError (logit computed the cast real part)
    def make(m):
        z = m.tensor([0.5 + 1j, -0.25j])
        return {"function": lambda: getattr(m, name)(z), "method": lambda: getattr(z, name)(),
                "in-place": lambda: getattr(z, name + "_")()}[form]()

    got, want = raises_like_torch(make)
    assert got == want


@pytest.mark.parametrize("call", [
    lambda m, z: z < z, lambda m, z: z >= 0, lambda m, z: z.max(), lambda m, z: z.max(0), lambda m, z: z.amin(),
    lambda m, z: z.argmax(), lambda m, z: z.sort(), lambda m, z: z.topk(1), lambda m, z: m.maximum(z, z),
    lambda m, z: z.clamp(0, 1), lambda m, z: z.relu(), lambda m, z: z.floor(), lambda m, z: z.sign(),
    lambda m, z: z.round(),
], ids=["lt", "ge", "max", "max-dim", "amin", "argmax", "sort", "topk", "maximum", "clamp", "relu", "floor", "sign",
        "round"])
def test_orderings_and_roundings_refuse_complex_as_pytorch(call):
    with pytest.raises((RuntimeError, NotImplementedError)) as te:
        call(torch, torch.tensor([1j, 2]))
    with pytest.raises(te.type):
        call(ember, ember.tensor([1j, 2]))
    assert (ember.tensor([1j, 2]) == ember.tensor([1j, 0])).tolist() == [True, False]  # equality is fine



def test_abs_and_polar_gradients_at_complex_zero_are_zero_as_torch():
    # d|z| is sgn(z) = z/|z|, taken as 0 at z = 0 (PyTorch's choice, so a zero entry adds nothing)
    values = np.array([0j, 3 + 4j, -1 - 1j], dtype=np.complex128)
    grads = {}
    for m in (ember, torch):
        z = m.tensor(values, requires_grad=True)
        r = m.tensor([0.0, 2.0, 1.0], dtype=m.float64, requires_grad=True)
        theta = m.tensor([0.3, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        (z.abs() * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        (m.polar(r, theta) * m.tensor([1 + 2j, 1j, -1.0], dtype=m.complex128)).real.sum().backward()
        grads[m] = (z.grad, r.grad, theta.grad)
    for mine, theirs in zip(grads[ember], grads[torch]):
        assert_close(mine, theirs)


@pytest.mark.parametrize("side", ["base", "exponent"])
def test_float_power_of_a_complex_tensor_is_complex128_as_torch(side):
    """A complex tensor on either side makes float_power compute in complex128 (a real scalar on the other)."""
    z = np.array([1 + 1j, 2 - 1j, -0.5 + 2j], dtype=np.complex64)
    outs = []
    for m in (ember, torch):
        t = m.tensor(z)
        outs.append(m.float_power(t, 2.5) if side == "base" else m.float_power(1.5, t))
    assert str(outs[0].dtype).split(".")[-1] == str(outs[1].dtype).split(".")[-1] == "complex128"
    assert_close(outs[0], outs[1])


_ZERO_EXPONENTS = [0.0, 0j, 0, 1.0, 1j, -1.0, 2.0, 0.5, -0.5, 3.0, -2.0, 2 + 1j, -1 + 1j, 1e-3]


@pytest.mark.parametrize("exponent", _ZERO_EXPONENTS, ids=repr)
def test_complex_zero_to_a_power_as_pytorch(exponent):
    """PyTorch computes a complex power of a tensor exponent as exp(b log a): at a zero base 0 ** 0 is NaN,
    0 ** -1 is inf + NaN j and 0 ** 1 is -0j (NumPy's power: 1, NaN, 0); a Python-number exponent takes
    PyTorch's special cases (1 at 0, the base itself at 1, products, square roots, reciprocals). Compared by
    repr, so that NaN and the sign of zero count."""
    base = [0j, complex(-0.0, 0.0)]
    for m in (torch, ember):
        z = m.tensor(base, dtype=m.complex64)
        got = [repr((z ** m.tensor(exponent)).tolist()), repr((z[0] ** m.tensor(exponent)).tolist()),
               repr((z ** exponent).tolist()), repr((m.zeros(2) ** m.tensor([exponent], dtype=m.complex64)).tolist())]
        if m is torch:
            want = got
    assert got == want


_COMPLEX_EXPONENTS = [0j, 2 + 0j, 0.5 + 0j, 1 + 1j, 1j, 2 - 0.5j, -1 + 0j, -1 + 1j, 1 + 2j]


def _zero_base(m, form: str, n: int):
    if form == "tensor ** tensor":  # (the last base not zero: the formula beside the special case)
        return m.tensor([0j] * (n - 1) + [1 + 1j], dtype=m.complex64, requires_grad=True)
    if form == "0-d tensor ** tensor":
        return m.tensor(0j, dtype=m.complex64, requires_grad=True)
    if form == "real tensor ** tensor":
        return m.zeros(n, requires_grad=True)
    return 0j if form == "complex number ** tensor" else 0.0


@pytest.mark.parametrize("form", ["tensor ** tensor", "complex number ** tensor", "real number ** tensor",
                                  "0-d tensor ** tensor", "real tensor ** tensor"])
def test_complex_zero_bases_gradients_as_pytorch(form):
    """At a zero base PyTorch's derivative in a complex exponent is 0 only where the exponent is real and
    non-negative (imaginary part 0, real part >= 0), else the NaN of b log a (0 ** (1 + 1j) included), whatever
    the base's form; the base's own derivative beside it. Compared by repr, so that NaN and the sign of zero
    count."""
    for m in (torch, ember):
        b = m.tensor(_COMPLEX_EXPONENTS, dtype=m.complex64, requires_grad=True)
        a = _zero_base(m, form, len(_COMPLEX_EXPONENTS))
        (m.pow(a, b) if isinstance(a, float) else a ** b).real.sum().backward()
        got = [repr(b.grad.tolist())] + ([repr(a.grad.tolist())] if isinstance(a, m.Tensor) else [])
        if m is torch:
            want = got
    assert got == want


@pytest.mark.parametrize("case", ["tensor ** complex", "complex ** tensor", "0-d tensor ** complex",
                                  "tensor ** 0-d complex tensor", "pow"])
def test_float16_to_a_complex_power_is_refused_as_pytorch(case):
    """float16 with a complex number promotes to complex32 in PyTorch (complex64 in ember), whose pow PyTorch has
    no kernel for: NotImplementedError, not a complex64 result."""
    def run(m):
        h = m.tensor([1.0, 2.0], dtype=m.float16)
        return {"tensor ** complex": lambda: h ** (1 + 2j), "complex ** tensor": lambda: (1 + 2j) ** h,
                "0-d tensor ** complex": lambda: h[0] ** 1j, "pow": lambda: m.pow(h, 2j),
                "tensor ** 0-d complex tensor": lambda: h ** m.tensor(1j)}[case]()
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'ComplexHalf'"):
        run(torch)
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'ComplexHalf'"):
        run(ember)
    for m in (torch, ember):  # bfloat16 has no complex dtype of its own: complex64 in both
        assert str((m.tensor([1.0], dtype=m.bfloat16) ** 1j).dtype).endswith("complex64")


@pytest.mark.parametrize("out_features", [1, 3])
@pytest.mark.parametrize("x_shape", [(4,), (2, 4), (2, 3, 4)], ids=str)
def test_linear_gradients_of_complex_inputs_as_pytorch(out_features, x_shape):
    """x @ W^T + b: x's gradient g @ conj(W), W's g^T @ conj(x), as matmul's (they lacked the conjugates)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape) + 1j * rng.standard_normal(x_shape)
    w = rng.standard_normal((out_features, 4)) + 1j * rng.standard_normal((out_features, 4))
    b = rng.standard_normal(out_features) + 1j * rng.standard_normal(out_features)
    grads = []
    for m in (torch, ember):
        ts = [m.tensor(a, requires_grad=True) for a in (x, w, b)]
        m.nn.functional.linear(*ts).abs().sum().backward()
        grads.append([t.grad.resolve_conj().numpy() if m is torch else t.grad.numpy() for t in ts])
    for want, got in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
