"""Reductions against PyTorch: dim as None/int/tuple, keepdim, ties, empty and 0-d inputs, dtypes, errors."""

import math
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_error, check

import ember

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "amin", "var", "std", "norm", "logsumexp"])
def test_reduce_dims(op, dim, keepdim):
    if dim is None and op in ("amax", "amin", "logsumexp"):
        dim = (0, 1, 2)
    if dim is None:
        fn = lambda m, x: getattr(x, op)()  # noqa: E731
        if keepdim:
            pytest.skip("keepdim needs dim")
    elif op == "prod" and isinstance(dim, tuple) or op == "norm" and dim == (0, 1, 2):
        pytest.skip("PyTorch's prod takes a single dim; its Frobenius norm at most two")
    else:
        fn = lambda m, x: getattr(m, op)(x, dim=dim, keepdim=keepdim)  # noqa: E731
    check(fn, [(2, 3, 4)], positive=op == "prod")


@pytest.mark.parametrize("shape", [(), (1,), (5,), (1, 1), (3, 1, 2)], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min", "var", "std", "norm", "amax", "logsumexp"])
def test_reduce_small_shapes(op, shape):
    if op == "logsumexp":
        check(lambda m, x: x.logsumexp(0), [shape])
        return
    check(lambda m, x: getattr(x, op)(), [shape], atol=1e-4)


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "logsumexp", "var", "norm"])
def test_reduce_0d_with_dim(op):
    check(lambda m, x: getattr(x, op)(dim=0), [()])
    check(lambda m, x: getattr(x, op)(dim=-1, keepdim=True), [()])


@pytest.mark.parametrize("fn", [
    lambda m, x: x.sum(),
    lambda m, x: x.sum(0),
    lambda m, x: x.sum(1),
    lambda m, x: x.mean(1),
    lambda m, x: x.prod(0),
    lambda m, x: x.prod(),
    lambda m, x: x.amax(1),
    lambda m, x: x.max(1).values,
    lambda m, x: x.norm(),
    lambda m, x: x.logsumexp(0),
])
def test_reduce_empty(fn):
    check(fn, [(0, 3)])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim(op, dim, keepdim):
    check(lambda m, x: tuple(getattr(x, op)(dim, keepdim)), [(3, 4, 2)])
    check(lambda m, x: tuple(getattr(m, op)(x, dim=dim, keepdim=keepdim)), [(3, 4, 2)])


def test_max_returns_named_tuple():
    out = ember.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert indices.dtype == ember.int64 and indices.tolist() == [1, 0]


def test_max_min_0d_dim():
    check(lambda m, x: tuple(x.max(0)), [()])
    check(lambda m, x: tuple(x.min(-1, keepdim=True)), [()])


@pytest.mark.parametrize("op", ["max", "min", "amax", "amin"])
def test_extreme_ties_gradient(op):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype=np.float32)
    check(lambda m, t: getattr(t, op)(), [x])
    if op in ("amax", "amin"):
        check(lambda m, t: getattr(t, op)(1), [x])
    else:  # along a dim the gradient goes to the returned index only
        check(lambda m, t: getattr(t, op)(1).values, [x])


def test_max_binary_form():
    check(lambda m, a, b: m.max(a, b), [(2, 3), (3,)])
    check(lambda m, a, b: a.min(b), [(2, 3), (2, 3)])


@pytest.mark.parametrize("fn", [
    lambda m, x: x.argmax(), lambda m, x: x.argmin(), lambda m, x: x.argmax(1), lambda m, x: x.argmin(0),
    lambda m, x: x.argmax(-1, keepdim=True), lambda m, x: m.argmax(x, dim=0), lambda m, x: x.argmax(0, True),
])
def test_argmax_argmin(fn):
    check(fn, [(3, 4)], grad=False)
    check(fn, [np.array([[1, 3, 3, 0], [2, 2, 0, 2], [5, 5, 5, 5]])], grad=False)


def test_argmax_0d():
    check(lambda m, x: x.argmax(), [()], grad=False)
    check(lambda m, x: x.argmax(0), [()], grad=False)


def test_prod_with_zeros_gradient():
    x = np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    check(lambda m, t: t.prod(), [x])
    check(lambda m, t: t.prod(1), [x])
    check(lambda m, t: t.prod(0, keepdim=True), [x])
    check(lambda m, t: t.prod(), [np.array([2.0, 0.0, 3.0], dtype=np.float32)])


@pytest.mark.parametrize("kwargs", [{}, {"unbiased": False}, {"correction": 0}, {"correction": 2},
                                    {"dim": 1, "unbiased": True}, {"dim": (0, 1), "correction": 0}], ids=str)
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_options(op, kwargs):
    check(lambda m, x: getattr(x, op)(**kwargs), [(4, 5)])


def test_var_positional_unbiased():
    check(lambda m, x: x.var(False), [(4, 5)])
    check(lambda m, x: x.std(0, False), [(4, 5)])


def test_var_single_element_is_nan():
    check(lambda m, x: x.var(), [(1,)], grad=False)
    check(lambda m, x: x.std(0), [(1, 3)], grad=False)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, float("inf"), "fro"], ids=str)
@pytest.mark.parametrize("dim", [None, 1, (0, 1)], ids=str)
def test_norm(p, dim):
    check(lambda m, x: x.norm(p, dim), [(3, 4)], positive=p == 0.5)


def test_norm_of_zeros_has_zero_grad():
    check(lambda m, x: x.norm(), [np.zeros((2, 3), dtype=np.float32)])
    check(lambda m, x: x.norm(dim=1), [np.array([[0.0, 0.0], [3.0, 4.0]], dtype=np.float32)])


def test_logsumexp_large_and_inf():
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [-np.inf, 0.0]], dtype=np.float32)
    check(lambda m, t: t.logsumexp(1), [x], grad=False)


@pytest.mark.parametrize("fn", [
    lambda m, x: x.all(), lambda m, x: x.any(), lambda m, x: x.all(0), lambda m, x: x.any(1),
    lambda m, x: x.all(1, keepdim=True), lambda m, x: m.any(x, 0),
])
def test_all_any(fn):
    check(fn, [np.array([[True, False, True], [True, True, True]])], grad=False)
    check(fn, [np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)], grad=False)
    check(fn, [np.zeros((2, 0), dtype=bool)], grad=False)


@pytest.mark.parametrize("fn", [
    lambda m, x: x.sum(), lambda m, x: x.sum(0), lambda m, x: x.prod(), lambda m, x: x.max(),
    lambda m, x: x.sum(dtype=m.float64), lambda m, x: x.cumsum(0), lambda m, x: x.max(1).indices,
])
@pytest.mark.parametrize("dt", [np.int32, np.int64, np.bool_])
def test_integer_reduction_dtypes(fn, dt):
    check(fn, [np.array([[1, 0, 3], [2, 1, 1]]).astype(dt)], grad=False)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dim):
    check(lambda m, x: x.cumsum(dim), [(3, 4)])


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "complex64", "bfloat16"])
def test_running_sums_and_products_accumulate_as_pytorch_bit_for_bit(op, dtype):
    """PyTorch's CPU kernel carries float32 (complex64) running values in double and rounds each output once (half
    precision in float32): a float32 running sum's last entries differ in the last bit from a float32 accumulation,
    enough to move a searchsorted tie (NeRF's importance sampling on a normalised CDF)."""
    rng = np.random.default_rng(0)
    x = rng.random((3, 2000)) if op == "cumsum" else 1.0 + (rng.random((3, 2000)) - 0.5) * 0.01  # (no underflow)
    if dtype == "complex64":
        x = x + 1j * (rng.random((3, 2000)) - 0.5) * 1e-3
    g = rng.random((3, 2000))
    out = {}
    for m in (torch, ember):
        t = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        y = getattr(t, op)(1)
        y.backward(m.tensor(g).to(y.dtype))
        wide = m.complex128 if dtype == "complex64" else m.float64
        out[m.__name__] = (y.detach().to(wide).numpy(), t.grad.to(wide).numpy())
    np.testing.assert_array_equal(out["ember"][0], out["torch"][0])
    np.testing.assert_allclose(out["ember"][1], out["torch"][1], rtol=1e-6 if dtype != "bfloat16" else 1e-2)
    if op == "cumsum":  # the reversed running sum of the gradient accumulates the same way
        np.testing.assert_array_equal(out["ember"][1], out["torch"][1])


@pytest.mark.parametrize("x", [[1 + 0.1j, 2 - 0.3j, 0.5 + 0.2j], [1 + 0.1j, 0j, 0.5 + 0.2j]])
def test_complex_cumprod_gradient_conjugates_as_pytorch(x):
    """grad_i = sum_{j >= i} g_j * conj(out_j / x_i), with and without a zero in the input."""
    g = [1 + 0j, 0.5 + 0.5j, 0.2 - 1j]
    grads = {}
    for m in (torch, ember):
        t = m.tensor(x, dtype=m.complex128).requires_grad_()
        t.cumprod(0).backward(m.tensor(g, dtype=m.complex128))
        grads[m.__name__] = t.grad.numpy()
    np.testing.assert_allclose(grads["ember"], grads["torch"], rtol=1e-12)


def test_sum_mean_float64_and_dtype_arg():
    check(lambda m, x: x.sum(1), [(3, 4)], dtype=np.float64)
    check(lambda m, x: x.mean(dtype=m.float64), [(3, 4)])


@pytest.mark.parametrize("expr", [
    "x.sum(2)", "x.mean(-3)", "x.max(5)", "x.argmax(2)", "x.var(3)",
])
def test_dim_out_of_range(expr):
    with pytest.raises(IndexError, match="Dimension out of range"):
        eval(expr, {"x": ember.ones(2, 3)})


@pytest.mark.parametrize("expr", [
    "x.sum((0, 0))", "x.mean((1, -1))", "x.int().mean()", "x.long().var()", "x.long().std()",
    "x.long().norm()", "x[:0].max()", "x[:0].max(0)", "x[:0].argmax()", "x[:0].min(0)",
    "x[:0].amax(0)", "x[:0].argmin(0)", "x.sum(dim=(0, 5))",
])
def test_reduction_errors_match_torch(expr):
    with pytest.raises((RuntimeError, IndexError)) as err:
        eval(expr, {"x": ember.ones(2, 3)})
    with pytest.raises((RuntimeError, IndexError)) as terr:
        eval(expr, {"x": torch.ones(2, 3)})
    assert err.type is terr.type


def test_empty_max_dim_ok_when_other_dim_empty():
    check(lambda m, x: tuple(x.max(1)), [(0, 3)], grad=False)


def test_mean_of_empty_is_nan():
    assert_close(ember.ones(0).mean(), torch.ones(0).mean())


@pytest.mark.parametrize("op", ["var", "std", "norm"])
def test_complex_var_std_norm_are_real_and_match_torch(op):
    """A complex input's variance, standard deviation and norm use |x - mean|^2 (real and imaginary parts
    squared and added), and are real, as in PyTorch."""
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    for dim in (None, 1):
        want = getattr(torch.tensor(z), op)() if dim is None else getattr(torch.tensor(z), op)(dim)
        got = getattr(ember.tensor(z), op)() if dim is None else getattr(ember.tensor(z), op)(dim)
        assert got.dtype == ember.float32 and want.dtype == torch.float32
        assert_close(got, want)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_extreme_along_the_only_dim_and_of_a_scalar(op, keepdim):
    """Along the one dim of a 1-d tensor the index of the extreme (not 0); a 0-d tensor's is 0, as in PyTorch."""
    for values, dim in (([1.0, 3.0, -2.0, 3.0, 0.5], 0), ([1.0, 3.0, -2.0, 3.0, 0.5], -1), (2.5, 0), (2.5, -1)):
        want = getattr(torch, op)(torch.tensor(values), dim, keepdim)
        got = getattr(ember, op)(ember.tensor(values), dim, keepdim)
        assert got.dtype == ember.int64 and got.shape == want.shape and got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype,pair", [("float16", [1000.0, 1000.5]), ("bfloat16", [1000.0, 1004.0])])
def test_half_precision_var_and_std_compute_in_float32_as_pytorch(dtype, pair):
    """The mean of these values falls halfway between two of the dtype's numbers: computed in the half dtype
    (NumPy's loops) it rounds to one of them and the variance doubles; PyTorch computes in float32 and rounds
    the result once, and so does ember."""
    values = pair * 4
    t, e = torch.tensor(values, dtype=getattr(torch, dtype)), ember.tensor(values, dtype=getattr(ember, dtype))
    for name, kwargs in [("var", {}), ("std", {"correction": 0}), ("var", {"dim": 0, "keepdim": True})]:
        mine, theirs = getattr(e, name)(**kwargs), getattr(t, name)(**kwargs)
        assert str(mine.dtype) == str(theirs.dtype).replace("torch", "ember")
        assert mine.float().tolist() == theirs.float().tolist(), (name, kwargs)


@pytest.mark.parametrize("dim", [0, 1])
def test_prod_gradient_over_a_dim_of_size_one_with_zeros_matches_torch(dim):
    """prod over a dim of size 1 of a tensor holding zeros: each element is its own product, gradient 1."""
    values = np.array([[0.0], [2.0], [3.0]]) if dim == 1 else np.array([[0.0, 2.0, 3.0]])
    grads = []
    for m in (ember, torch):
        x = m.tensor(values, requires_grad=True)
        (x.prod(dim) * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("as_keyword", [False, True])
def test_mean_of_integers_is_refused_naming_the_dtype_as_pytorch_does(dtype, as_keyword):
    """PyTorch's message names the dtype by its C++ name (Long, Int, Byte...) and says whether it was the input's
    dtype or the one passed as dtype=."""
    def call(m):
        x = m.ones(3, dtype=getattr(m, dtype))
        return x.float().mean(dtype=getattr(m, dtype)) if as_keyword else x.mean()

    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(ember)
    assert str(got.value).startswith(str(want.value)), (str(got.value), str(want.value))


@pytest.mark.parametrize("op", ["prod", "cumsum", "norm"])
def test_dtype_argument_casts_before_reducing_as_pytorch(op):
    """``dtype=`` casts the input first (an integer input reduced in float64), as PyTorch's."""
    x = np.array([[1, 2, 4], [3, 0, 2], [5, 1, 1]], dtype=np.int32)
    call = {"prod": lambda m, t: m.prod(t, 1, dtype=m.float64),
            "cumsum": lambda m, t: m.cumsum(t, 1, dtype=m.float64),
            "norm": lambda m, t: m.norm(t.float(), 3, 1, dtype=m.float64)}[op]
    got, want = call(ember, ember.tensor(x)), call(torch, torch.tensor(x))
    assert got.dtype == ember.float64 and want.dtype == torch.float64
    assert_close(got, want)


# every op that takes a dim, on a 0-d tensor: PyTorch takes dim 0 and -1 as the scalar's one "dim" and refuses 1
# and -2 (IndexError); ember's ops that reshape a scalar to one element first must check the dim against 0 dims
_ZERO_D_DIM_OPS = {
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "prod": lambda x, d: x.prod(d),
    "nansum": lambda x, d: x.nansum(d), "nanmean": lambda x, d: x.nanmean(d),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin(d), "max": lambda x, d: x.max(d).values,
    "min": lambda x, d: x.min(d).values, "argmax": lambda x, d: x.argmax(d), "argmin": lambda x, d: x.argmin(d),
    "logsumexp": lambda x, d: x.logsumexp(d), "var": lambda x, d: x.var(d, correction=0),
    "std": lambda x, d: x.std(d, correction=0), "norm": lambda x, d: x.norm(dim=d), "all": lambda x, d: x.all(d),
    "any": lambda x, d: x.any(d), "count_nonzero": lambda x, d: x.count_nonzero(d),
    "cumsum": lambda x, d: x.cumsum(d), "cumprod": lambda x, d: x.cumprod(d),
    "logcumsumexp": lambda x, d: x.logcumsumexp(d), "cummax": lambda x, d: x.cummax(d).values,
    "cummin": lambda x, d: x.cummin(d).values, "softmax": lambda x, d: x.softmax(d),
    "log_softmax": lambda x, d: x.log_softmax(d), "median": lambda x, d: x.median(d).values,
    "sort": lambda x, d: x.sort(d).values, "argsort": lambda x, d: x.argsort(d),
    "topk": lambda x, d: x.topk(1, d).values, "kthvalue": lambda x, d: x.kthvalue(1, d).values,
    "flip": lambda x, d: x.flip(d), "squeeze": lambda x, d: x.squeeze(d), "unsqueeze": lambda x, d: x.unsqueeze(d),
    "unbind": lambda x, d: x.unsqueeze(0).unbind(d)[0], "narrow": lambda x, d: x.narrow(d, 0, 1),
}


@pytest.mark.parametrize("dim", [0, -1, 1, -2])
@pytest.mark.parametrize("name", list(_ZERO_D_DIM_OPS))
def test_an_op_along_a_dim_of_a_0d_tensor_as_pytorch(name, dim):
    fn = _ZERO_D_DIM_OPS[name]
    results = []
    for m in (ember, torch):
        try:
            results.append(fn(m.tensor(2.5), dim))
        except (IndexError, RuntimeError) as err:
            results.append(type(err))
    e, t = results
    if isinstance(t, type):
        assert e is t, f"ember gave {e!r} where PyTorch raised {t.__name__}"
    else:
        assert not isinstance(e, type), f"ember raised {e.__name__} where PyTorch gave {t}"
        assert_close(e, t)


# every reduction that takes a list of dims
_DIM_LIST_OPS = {
    "sum": lambda m, x, d: m.sum(x, d), "sum method": lambda m, x, d: x.sum(d), "mean": lambda m, x, d: m.mean(x, d),
    "mean keepdim": lambda m, x, d: m.mean(x, dim=d, keepdim=True), "amax": lambda m, x, d: m.amax(x, d),
    "amin": lambda m, x, d: m.amin(x, d), "std": lambda m, x, d: m.std(x, d), "var": lambda m, x, d: m.var(x, d),
    "var_mean": lambda m, x, d: m.var_mean(x, d), "std_mean": lambda m, x, d: m.std_mean(x, d),
    "logsumexp": lambda m, x, d: m.logsumexp(x, d), "nansum": lambda m, x, d: m.nansum(x, d),
    "nanmean": lambda m, x, d: m.nanmean(x, d), "count_nonzero": lambda m, x, d: m.count_nonzero(x, d),
    "vector_norm": lambda m, x, d: m.linalg.vector_norm(x, dim=d), "any": lambda m, x, d: m.any(x, d),
    "all": lambda m, x, d: m.all(x, d),
}


@pytest.mark.parametrize("dims", [(0, 0), (0, -3), (1, 0, 1), (-1, 2), (2, 0, 1, 0)], ids=str)
@pytest.mark.parametrize("name", list(_DIM_LIST_OPS))
def test_a_dim_listed_twice_is_refused_as_pytorch(name, dims):
    """A dim named twice (the same number, or a dim and its negative alias, adjacent or not once sorted) is
    PyTorch's RuntimeError "dim d appears multiple times in the list of dims" (not NumPy's duplicate-axis
    ValueError); the same dims without the repeat reduce as PyTorch's."""
    op = _DIM_LIST_OPS[name]
    x = np.arange(24.0).reshape(2, 3, 4) - 5
    with pytest.raises(RuntimeError) as theirs:
        op(torch, torch.tensor(x), dims)
    with pytest.raises(RuntimeError) as ours:
        op(ember, ember.tensor(x), dims)
    assert str(ours.value) == str(theirs.value)
    assert "appears multiple times in the list of dims" in str(ours.value)
    once = tuple(dict.fromkeys(d % 3 for d in dims))
    want, got = op(torch, torch.tensor(x), once), op(ember, ember.tensor(x), once)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_close(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_std_of_values_whose_squares_pass_the_dtype_range_is_finite_as_pytorch(dtype):
    """PyTorch accumulates a float32 (and a half) variance in float64 and takes the square root before rounding:
    the standard deviation of values near 1e30 (float16: 1e3) is finite though their squares, and their variance,
    are past the dtype's range; a variance whose terms overflow but whose value fits is finite too."""
    big = 2.0**10 if dtype == "float16" else 2.0**100  # (means exact: the gradients' x - mean too)
    # PyTorch's half-precision gradient formula rounds at each step, ember's once: a step's rounding apart
    grad_rtol = {"float32": 1e-4, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    cases = [[big, 2 * big, 3 * big], [[-3 * big, big, 2 * big], [big, 2 * big, 3 * big]]]
    if dtype == "float32":
        cases.append([1.5e19, -1.5e19, 0.0])  # the squares overflow float32, their mean does not
    for values in cases:
        t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
        e = ember.tensor(values, dtype=getattr(ember, dtype), requires_grad=True)
        for name, kwargs in [("std", {}), ("var", {}), ("std", {"dim": -1}), ("std", {"dim": 0, "correction": 0}),
                             ("var", {"dim": -1, "keepdim": True})]:
            want, got = getattr(t, name)(**kwargs), getattr(e, name)(**kwargs)
            assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
            assert_close(got.float(), want.float())
            want_grad = torch.autograd.grad(want.sum(), t)[0]
            (got_grad,) = ember.autograd.grad(got.sum(), e)
            assert_close(got_grad.float(), want_grad.float(), rtol=grad_rtol)
        assert_close(ember.std_mean(e.detach())[0].float(), torch.std_mean(t.detach())[0].float())
    assert ember.std(ember.tensor([1e30, 2e30], dtype=ember.float32)).isfinite().item()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
def test_the_mean_std_mean_returns_is_finite_near_the_top_of_the_range_as_pytorch(fn, dtype):
    """PyTorch computes std_mean's and var_mean's mean with the variance (in float64 for float32 and the half
    dtypes, a running mean for float64): values near the dtype's largest have a finite mean there though their
    sum overflows (mean() itself overflows, in both). Values, dtypes and the gradient through the mean match."""
    top = float(torch.finfo(getattr(torch, dtype)).max)
    rng = np.random.default_rng(0)
    # (signs mixed but in float64, where PyTorch's running mean's x - mean overflows to NaN)
    signs = np.sign(rng.uniform(-0.2, 1, (3, 4))) if dtype != "float64" else 1.0
    values = (top * rng.uniform(0.9, 1.0, (3, 4)) * signs).tolist()
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": (0, 1), "correction": 0}):
        t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
        e = ember.tensor(values, dtype=getattr(ember, dtype), requires_grad=True)
        (tspread, tmean), (espread, emean) = getattr(torch, fn)(t, **kwargs), getattr(ember, fn)(e, **kwargs)
        assert str(emean.dtype) == str(tmean.dtype).replace("torch", "ember")
        assert tmean.isfinite().all() and emean.isfinite().all()
        assert_close(emean.double(), tmean.double(), rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
        assert_close(espread.double(), tspread.double(), rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
        (want,) = torch.autograd.grad(tmean.sum(), t)
        (got,) = ember.autograd.grad(emean.sum(), e)
        assert_close(got.double(), want.double())
    # away from the top: the same bits as torch's (float64: its running mean rounds differently, by an ulp)
    usual = [[1.0, 2.0, 3.5], [-4.0, 0.25, 6.0]]
    for kwargs in ({}, {"dim": 1}):
        tmean = getattr(torch, fn)(torch.tensor(usual, dtype=getattr(torch, dtype)), **kwargs)[1]
        emean = getattr(ember, fn)(ember.tensor(usual, dtype=getattr(ember, dtype)), **kwargs)[1]
        assert_close(emean.double(), tmean.double(), rtol=1e-15 if dtype == "float64" else 0, atol=0)


def test_std_gradient_of_a_constant_input_is_zero_as_pytorch():
    """Where the standard deviation is 0 PyTorch's gradient is 0 (not sqrt's infinite slope times 0, NaN); one
    element (correction 1: NaN) keeps NaN."""
    for values, kwargs in [([2.0, 2.0, 2.0], {}), ([[1.0, 1.0], [1.0, 3.0]], {"dim": 1}), ([5.0], {})]:
        t, e = torch.tensor(values, requires_grad=True), ember.tensor(values, requires_grad=True)
        torch.std(t, **kwargs).sum().backward()
        ember.std(e, **kwargs).sum().backward()
        assert_close(e.grad, t.grad)
        assert type(ember.std(e, **kwargs).grad_fn).__name__ == "StdBackward0"


def _error(fn):
    try:
        fn()
    except Exception as err:  # noqa: BLE001 (the error itself is what is compared)
        return type(err).__name__, str(err)
    raise AssertionError("no error")


@pytest.mark.parametrize("dim", [(0,), [1], (0, 1)], ids=str)
def test_aminmax_refuses_a_sequence_of_dims_as_pytorch(dim):
    """PyTorch's aminmax reduces along one dim: a tuple or list is its argument parser's TypeError."""
    values = [[1.0, 5.0], [3.0, -2.0]]
    want = _error(lambda: torch.aminmax(torch.tensor(values), dim=dim))
    assert want[0] == "TypeError"
    assert _error(lambda: ember.aminmax(ember.tensor(values), dim=dim)) == want
    assert ember.aminmax(ember.tensor(values), dim=1).max.tolist() == [5.0, 3.0]


@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}], ids=str)
def test_aminmax_records_one_node_of_both_results_as_pytorch(kwargs):
    """One AminmaxBackward0 for min and max; with only max used, min's tensor hooks are called with None, and the
    gradient is max's alone (split evenly among ties)."""
    values = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    results = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        mn, mx = m.aminmax(x, **kwargs)
        assert mn.grad_fn is mx.grad_fn and mn.grad_fn.name() == "AminmaxBackward0"
        seen = []
        for name, t in (("min", mn), ("max", mx)):
            t.register_hook(lambda g, name=name, seen=seen: seen.append((name, None if g is None else g.tolist())))
        (g_max,) = m.autograd.grad((mx * 2).sum(), x, retain_graph=True)
        (g_both,) = m.autograd.grad((mx * 2).sum() + (mn * 3).sum(), x)
        results.append((g_max.tolist(), g_both.tolist(), seen))
    assert results[0] == results[1]
    assert results[0][2][0] == ("min", None)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_aminmax_gradient_of_both_results_rounds_as_pytorchs(dtype):
    """Where min and max tie (a constant slice), each result's share is divided in the input's dtype before the
    two are added, as PyTorch's: the same bits (not the sum taken in float64 and rounded once)."""
    grads = []
    for m in (ember, torch):
        x = m.tensor([[1.0, 2.0]] * 3 + [[1.0, 2.5]] * 4, dtype=getattr(m, dtype), requires_grad=True)
        for dim in (0, None):
            mn, mx = m.aminmax(x[:3] if dim is None else x, dim=dim)
            (g,) = m.autograd.grad((mn * 2).sum() + (mx * 3).sum(), x)
            grads.append(g.float().tolist())
    assert grads[:2] == grads[2:]


@pytest.mark.parametrize("which", ["min", "max"])
def test_aminmax_result_changed_in_place_is_pytorchs_error(which):
    messages = []
    for m in (ember, torch):
        x = m.tensor([[1.0, 3.0], [2.0, 0.0]], requires_grad=True)
        out = m.aminmax(x, dim=1)
        getattr(out, which).add_(1)
        messages.append(_error(lambda out=out: out.max.sum().backward()))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("case", ["all of an empty tensor", "an empty dim", "complex"])
def test_aminmax_errors_as_pytorch(case):
    def call(m):
        if case == "complex":
            return m.aminmax(m.tensor([1 + 1j]))
        return m.aminmax(m.zeros(0, 3), **({} if case.startswith("all") else {"dim": 0}))

    assert _error(lambda: call(ember)) == _error(lambda: call(torch))


@pytest.mark.parametrize("p,dim", [("fro", (1, 0, 1)), ("fro", (0, 1, 2)), ("nuc", None), ("nuc", 1), ("abc", None),
                                   (1, (1, 1)), ("fro", (1, 1))], ids=str)
def test_norm_errors_for_dims_and_orders_as_pytorch(p, dim):
    """torch.norm with a string order over more than two dims (or "nuc" over all dims of a 3-d tensor, or an
    unknown order) asks linalg.matrix_norm, whose error names the dims as PyTorch's; a repeated dim of a vector
    norm is the reduction's error."""
    want = _error(lambda: torch.norm(torch.ones(2, 3, 4), p=p, dim=dim))
    assert _error(lambda: ember.norm(ember.ones(2, 3, 4), p=p, dim=dim)) == want


INTEGER_REDUCTIONS = {
    "sum": lambda m, x: x.sum(), "prod": lambda m, x: x.prod(), "prod dim": lambda m, x: x.prod(0, keepdim=True),
    "cumsum": lambda m, x: x.cumsum(0), "cumsum float64": lambda m, x: x.cumsum(0, dtype=m.float64),
    "logsumexp": lambda m, x: m.logsumexp(x, 0), "all": lambda m, x: x.all(), "any dim": lambda m, x: x.any(0),
    "all dim keepdim": lambda m, x: m.all(x, 0, keepdim=True), "square": lambda m, x: m.square(x),
}


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32"])
@pytest.mark.parametrize("name", list(INTEGER_REDUCTIONS))
def test_reductions_of_integers_and_bools_take_pytorchs_dtype(name, dtype):
    """sum, prod and cumsum accumulate integers and bools as int64 (uint8 too: NumPy's uint64 is no ember dtype),
    logsumexp computes them in the default float dtype, all/any of uint8 stay uint8 (PyTorch's legacy), and a bool's
    square is int64 (pow(x, 2)): the dtype and values as PyTorch's."""
    outcomes = []
    for m in (torch, ember):
        y = INTEGER_REDUCTIONS[name](m, m.tensor([[3, 0], [-2, 1], [1, 2]]).to(getattr(m, dtype)))
        outcomes.append((str(y.dtype).split(".")[1], np.round(np.array(y.double().tolist()), 4).tolist()))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("call", ["argmax()", "argmin()", "argmax(0)", "argmin(0, keepdim=True)"])
def test_argmax_and_argmin_refuse_bool_input_as_pytorch(call):
    """PyTorch's argmax/argmin take no bool tensor (its RuntimeError and message); max/amax of bool still reduce."""
    messages = []
    for m in (torch, ember):
        x = m.tensor([[True, False], [False, True]])
        with pytest.raises(RuntimeError) as err:
            eval(f"x.{call}")
        messages.append(str(err.value))
        assert x.max().item() is True and x.amax(0).tolist() == [True, True]
    assert messages[0] == messages[1]


_LAYOUTS = {
    "contiguous": lambda m: m.arange(24.0).reshape(2, 3, 4) * 0.1 - 1,
    "transposed": lambda m: (m.arange(24.0).reshape(2, 3, 4) * 0.1 - 1).transpose(0, 2),
    "permuted": lambda m: (m.arange(24.0).reshape(2, 3, 4) * 0.1 - 1).permute(1, 2, 0),
    "strided": lambda m: (m.arange(48.0)[::2].reshape(2, 3, 4) * 0.1 - 1),
    "expanded": lambda m: (m.arange(4.0) * 0.1 - 1).expand(2, 3, 4),
}


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_cumulative_ops_return_contiguous_results_as_pytorch(op, layout, dtype):
    """A running sum, product, extreme or log-sum-exp is contiguous whatever its input's layout, as PyTorch's
    (NumPy's accumulation keeps a transposed input's order, and cummax/cummin built their index along the last
    axis: their results were column-major even for a contiguous input, so that ``view`` refused them)."""
    if op == "logcumsumexp" and dtype == "int64":
        pytest.skip("PyTorch's logcumsumexp takes floating inputs only")
    for dim in range(3):
        results = []
        for m in (torch, ember):
            out = getattr(m, op)(_LAYOUTS[layout](m).to(getattr(m, dtype)), dim)
            parts = (out,) if op in ("cumsum", "cumprod", "logcumsumexp") else (out.values, out.indices)
            results.append([(p.stride(), str(p.dtype).split(".")[1], p.double().view(-1).numpy()) for p in parts])
        for want, got in zip(*results):
            assert got[:2] == want[:2], (dim, got[:2], want[:2])
            np.testing.assert_allclose(got[2], want[2], rtol=2e-3)  # (float16 accumulates in float32 in both)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "logcumsumexp"])
def test_cumulative_gradients_of_a_transposed_input_as_pytorch(op):
    grads = []
    for m in (torch, ember):
        x = (m.arange(12.0).reshape(3, 4) * 0.1 + 0.5).requires_grad_()
        out = getattr(m, op)(x.t(), 1)
        out = out if op != "cummax" else out.values
        (out * (m.arange(12.0).reshape(4, 3) - 5)).sum().backward()
        grads.append(x.grad)
    assert_close(grads[1], grads[0], atol=1e-5)


@pytest.mark.parametrize("p", [0.5, 1.5, 2.5, 3.0])
@pytest.mark.parametrize("dim", [None, 1])
def test_p_norm_gradient_for_fractional_p_as_pytorch(p, dim):
    """The p-norm's gradient sgn(x) |x|^(p-1) / ||x||^(p-1) on each of its branches (p < 1, 1 < p < 2, p > 2),
    zeros among the entries."""
    x = np.array([[0.5, -1.5, 0.0, 2.0], [-0.25, 0.0, 3.0, -1.0]], dtype=np.float64)
    grads = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        out = m.norm(t, p=p) if dim is None else m.norm(t, p=p, dim=dim)
        (out * m.arange(1.0, out.numel() + 1, dtype=m.float64).reshape(out.shape)).sum().backward()
        grads.append(t.grad)
    assert_close(grads[1], grads[0], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [None, 1, (0, 2), (1, 2)])
def test_the_mean_std_mean_returns_over_infinities_is_pytorchs_running_mean(fn, dtype, dim):
    """PyTorch's mean of std_mean / var_mean is a running (Welford) mean: an infinity stays only as the last element
    of its slice (after finite ones), else it is NaN (``inf - inf``), unlike ``mean()``."""
    values = np.ones((3, 4, 2))
    for where in [(0, 0, 0), (2, 3, 1), (1, 3, 0), (1, 2, 1)]:
        values[where] = np.inf
    values[0, 3, 1] = -np.inf
    got = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=getattr(m, dtype))
        got.append(getattr(m, fn)(x) if dim is None else getattr(m, fn)(x, dim))
    np.testing.assert_array_equal(got[0][1].numpy(), got[1][1].numpy())
    np.testing.assert_array_equal(got[0][0].numpy(), got[1][0].numpy())


@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_std_mean_and_var_mean_of_an_empty_input_are_nan_as_pytorchs(fn, dtype, dim):
    """An empty reduction gives NaN for both results (the mean of no elements) with PyTorch's warning about the
    degrees of freedom; over a non-empty dim of an empty input the results are empty."""
    got, warned = [], []
    for m in (ember, torch):
        x = m.zeros(0, 3, dtype=getattr(m, dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got.append([r.float().numpy() for r in (getattr(m, fn)(x) if dim is None else getattr(m, fn)(x, dim))])
        warned.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    assert warned[0] == warned[1]
    for g, w in zip(*got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shape, correction", [((1,), 1), ((2,), 2), ((2,), 1), ((3, 1), 1)])
def test_degrees_of_freedom_at_zero_warn_as_pytorchs(fn, shape, correction):
    """The warning about the degrees of freedom comes when the reduced count minus the correction is 0 or less,
    as PyTorch's: at exactly 0 too (one element with the default correction, two with correction=2), not at 1."""
    got, warned = [], []
    for m in (ember, torch):
        x = m.arange(1.0, 1.0 + math.prod(shape), dtype=m.float64).reshape(shape)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(m, fn)(x, 0, correction=correction)
        got.append([r.numpy() for r in (out if isinstance(out, tuple) else (out,))])
        warned.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    assert warned[0] == warned[1]
    for g, w in zip(*got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fn, name", [("std_mean", "StdMeanBackward0"), ("var_mean", "VarMeanBackward0")])
def test_std_mean_and_var_mean_nodes_are_named_as_pytorchs(fn, name):
    for dim in (None, 0):
        for m in (ember, torch):
            x = m.ones(3, 2, requires_grad=True)
            spread, mean = getattr(m, fn)(x) if dim is None else getattr(m, fn)(x, dim)
            assert (spread.grad_fn.name(), mean.grad_fn.name()) == (name, name), m


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("fn, name", [("std_mean", "StdMeanBackward0"), ("var_mean", "VarMeanBackward0")])
def test_std_mean_and_var_mean_are_one_node_of_both_results_as_pytorchs(fn, name, dtype):
    """PyTorch records std_mean / var_mean as one node of both results (the same grad_fn, output numbers 0 and 1,
    one next function), a complex input's mean included; its gradient sums both results' (either alone too), and
    differentiates again. ember recorded two nodes, and a complex mean had no grad_fn."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 4))
    if dtype == "complex128":
        data = data + 1j * rng.standard_normal((3, 4))
    for kwargs in ({}, {"dim": 1}, {"dim": (0, 1), "keepdim": True, "correction": 0}):
        got = []
        for m in (ember, torch):
            x = m.tensor(data, requires_grad=True)
            spread, mean = getattr(m, fn)(x, **kwargs)
            node = spread.grad_fn
            assert mean.grad_fn is node and node.name() == name and type(node).__name__ == name
            assert [f.variable is x for f, _ in node.next_functions] == [True]
            assert (spread._output_nr, mean._output_nr) == (0, 1) if m is ember else (
                spread.output_nr, mean.output_nr) == (0, 1)
            (g_mean,) = m.autograd.grad(mean.real.sum(), x, retain_graph=True)
            (g_spread,) = m.autograd.grad(spread.sum(), x, retain_graph=True)
            loss = (spread * 1.5).sum() + (mean * mean.conj()).real.sum()
            (g,) = m.autograd.grad(loss, x, create_graph=True)
            (gg,) = m.autograd.grad((g * g.conj()).real.sum(), x)
            got.append([r.detach().resolve_conj().numpy() if m is torch else r.detach().numpy()
                        for r in (spread, mean, g, gg, g_mean, g_spread)])
        for e, t in zip(*got):
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


KEEPDIM_WITHOUT_DIM = {
    "sum_method": lambda m, x: x.sum(keepdim=True),
    "sum_function": lambda m, x: m.sum(x, keepdim=True),
    "sum_dtype": lambda m, x: x.sum(keepdim=True, dtype=m.float64),
    "sum_function_dtype": lambda m, x: m.sum(x, keepdim=True, dtype=m.float64),
    "mean_method": lambda m, x: x.mean(keepdim=True),
    "mean_function": lambda m, x: m.mean(x, keepdim=True),
    "mean_dtype": lambda m, x: x.mean(keepdim=True, dtype=m.float64),
    # keepdim given at all, False too, needs a dim; torch.mean with a dtype matches no overload; prod as sum
    "sum_method_false": lambda m, x: x.sum(keepdim=False),
    "sum_function_false": lambda m, x: m.sum(x, keepdim=False),
    "mean_function_false": lambda m, x: m.mean(x, keepdim=False),
    "mean_function_dtype": lambda m, x: m.mean(x, keepdim=True, dtype=m.float64),
    "prod_method": lambda m, x: x.prod(keepdim=True),
    "prod_method_false": lambda m, x: x.prod(keepdim=False),
    "prod_function": lambda m, x: m.prod(x, keepdim=True),
    "prod_function_dtype": lambda m, x: m.prod(x, keepdim=True, dtype=m.float64),
    "prod_dim_none_keepdim_false": lambda m, x: m.prod(x, dim=None, keepdim=False),
}


@pytest.mark.parametrize("call", KEEPDIM_WITHOUT_DIM)
def test_keepdim_without_a_dim_is_pytorchs_type_error(call):
    assert_same_error(lambda m: KEEPDIM_WITHOUT_DIM[call](m, m.ones(2, 3)))


@pytest.mark.parametrize("keepdim", [False, True])
def test_dim_none_with_keepdim_reduces_all_elements(keepdim):
    for name in ("sum", "mean"):
        got, want = (getattr(m.ones(2, 3), name)(None, keepdim=keepdim) for m in (ember, torch))
        assert_close(got, want)
        assert_close(getattr(ember, name)(ember.ones(2, 3)), getattr(torch, name)(torch.ones(2, 3)))


@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod", "nansum"])
@pytest.mark.parametrize("source", ["float32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "bool"])
def test_integer_dtype_result_is_that_dtype_wrapped(op, source, dtype):
    # NumPy accumulates a narrower integer as int64 (uint64 for unsigned); PyTorch's result is in the dtype asked
    # for, wrapped (100 + 100 in int8 is -56); ember gave int64, or an array of uint64 no tensor could hold
    outcomes = []
    for m in (torch, ember):
        x = m.tensor([[100, 100, 3], [120, 1, 0]]).to(getattr(m, source))
        args = (0,) if op in ("cumsum", "cumprod") else ()
        try:
            out = getattr(m, op)(x, *args, dtype=getattr(m, dtype))
            outcomes.append((str(out.dtype).split(".")[-1], out.tolist()))
        except (RuntimeError, NotImplementedError) as err:
            outcomes.append((type(err).__name__, str(err)))
        if op in ("sum", "prod"):  # (over a dim too)
            outcomes.append(str(getattr(m, op)(x, 1, dtype=getattr(m, dtype)).tolist()))
    assert outcomes[len(outcomes) // 2:] == outcomes[:len(outcomes) // 2]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", ["nansum", "nanmean"])
def test_nan_reductions_with_dtype_compute_in_it_as_pytorch(op, dtype):
    # the elements converted to dtype first (rounded there), accumulated in float32 for a half dtype; nanmean's
    # result is of dtype (its count divides without promoting it back to the input's)
    a = np.random.default_rng(0).standard_normal((4, 30, 3))
    a[0, 3, 1] = np.nan
    results = [getattr(m.tensor(a), op)(1, dtype=getattr(m, dtype)) for m in (ember, torch)]
    assert results[0].dtype.name == str(results[1].dtype).split(".")[1]
    # (float32: the same to its summation order; a half dtype: the float32 sum rounded once, bit for bit)
    rtol = 1e-5 if dtype == "float32" else 0
    np.testing.assert_allclose(results[0].float().numpy(), results[1].float().numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("op", ["max", "min", "amax", "amin", "median"])
@pytest.mark.parametrize("values", [[1.0, float("nan"), 3.0], [1.0, float("nan"), float("nan")], [2.0, 1.0, 2.0]])
def test_extreme_of_all_elements_gradient_with_nan_as_pytorch(op, values):
    # max()/min() of all elements send a NaN result's gradient evenly to the NaNs (PyTorch's
    # evenly_distribute_backward); amax/amin to the elements equal to it, none: NaN everywhere
    grads = []
    for m in (ember, torch):
        x = m.tensor(values, requires_grad=True)
        getattr(x, op)().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("call", [
    lambda x: x.max(), lambda x: x.min(), lambda x: x.max(0)[0], lambda x: x.min(-1)[0],
    lambda x: x.max(0, keepdim=True)[0], lambda x: x.amax(0),
], ids=["max", "min", "max_dim", "min_dim", "max_keepdim", "amax"])
@pytest.mark.parametrize("value", [float("nan"), 2.5])
def test_extreme_of_a_0d_tensor_gradient_as_pytorch(call, value):
    # (a 0-d NaN is its own max: the gradient 1 as PyTorch's, not 0 / 0 from NaN == NaN; amax's stays NaN)
    grads = []
    for m in (ember, torch):
        x = m.tensor(value, requires_grad=True)
        call(x).backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1])  # (NaN where NaN)


@pytest.mark.parametrize("shape,dims,keepdim", [((2, 3), (), False), ((4,), [], False), ((2, 3), (), True),
                                                ((), (), False), ((0, 3), (), False), ((2, 3), (0, 1), False)])
def test_logsumexp_over_no_dims_as_pytorch(shape, dims, keepdim):
    """An empty dim list reduces every dimension; without keepdim, PyTorch's kernel then fails to write its kept
    size-1 dims into the 0-d result (RuntimeError) for a tensor with dimensions and elements, as ember does."""
    outcomes = []
    for m in (torch, ember):
        x = m.arange(float(np.prod(shape))).reshape(shape)
        try:
            outcomes.append(m.logsumexp(x, dims, keepdim=keepdim).tolist())
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dim", [(), []])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any_over_an_empty_dim_list_reduce_no_dim_as_pytorch(name, dim, keepdim):
    """PyTorch's all/any read ``dim=()`` as no dim (each element's truth, the shape kept), where sum and mean read
    it as every dim."""
    a = np.random.default_rng(0).standard_normal((2, 3))
    a[0, 1] = 0.0
    results = [getattr(m, name)(m.tensor(a), dim=dim, keepdim=keepdim) for m in (torch, ember)]
    assert str(results[1].dtype).split(".")[1] == str(results[0].dtype).split(".")[1]
    np.testing.assert_array_equal(results[1].numpy(), results[0].numpy())
