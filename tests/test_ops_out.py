"""out=: the result written into a given tensor, its resizing, dtype checks and refusal under autograd,
against PyTorch."""

from contextlib import nullcontext

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error, assert_same_outcome, outcomes

X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
IDX = np.array([[0, 1], [1, 0], [2, 3]])

# name -> f(module, x, out): one call with out=, on X (float32)
CALLS = {
    "max": lambda m, x, o: m.max(x, out=o),
    "max_other": lambda m, x, o: m.max(x, x * 2, out=o),
    "min": lambda m, x, o: m.min(x, out=o),
    "sum_dim": lambda m, x, o: m.sum(x, 0, out=o),
    "sum_keepdim": lambda m, x, o: m.sum(x, 1, keepdim=True, out=o),
    "mean": lambda m, x, o: m.mean(x, 1, out=o),
    "prod": lambda m, x, o: m.prod(x, 0, out=o),
    "std": lambda m, x, o: m.std(x, 0, out=o),
    "cumsum": lambda m, x, o: m.cumsum(x, 1, out=o),
    "amax": lambda m, x, o: m.amax(x, 0, out=o),
    "logsumexp": lambda m, x, o: m.logsumexp(x, 1, out=o),
    "index_select": lambda m, x, o: m.index_select(x, 1, m.tensor([3, 0, 3]), out=o),
    "gather": lambda m, x, o: m.gather(x, 1, m.tensor(IDX), out=o),
    "masked_select": lambda m, x, o: m.masked_select(x, x > 0, out=o),
    "take": lambda m, x, o: m.take(x, m.tensor(IDX), out=o),
    "add": lambda m, x, o: m.add(x, 1.5, alpha=2, out=o),
    "mul": lambda m, x, o: m.mul(x, x, out=o),
    "exp": lambda m, x, o: m.exp(x, out=o),
    "sigmoid": lambda m, x, o: m.sigmoid(x, out=o),
    "clamp": lambda m, x, o: m.clamp(x, -0.5, 0.5, out=o),
    "round": lambda m, x, o: m.round(x, out=o),
    "where": lambda m, x, o: m.where(x > 0, x, -x, out=o),
    "matmul": lambda m, x, o: m.matmul(x, x.T, out=o),
    "mm": lambda m, x, o: m.mm(x.T, x, out=o),
    "cat": lambda m, x, o: m.cat([x, x], 1, out=o),
    "stack": lambda m, x, o: m.stack([x, x], out=o),
    "abs": lambda m, x, o: m.abs(x, out=o),
    "ceil": lambda m, x, o: m.ceil(x, out=o),
    "floor": lambda m, x, o: m.floor(x, out=o),
    "trunc": lambda m, x, o: m.trunc(x, out=o),
    "frac": lambda m, x, o: m.frac(x, out=o),
    "neg": lambda m, x, o: m.neg(x, out=o),
    "sign": lambda m, x, o: m.sign(x, out=o),
    "clip": lambda m, x, o: m.clip(x, -0.5, 0.5, out=o),
    "addmm": lambda m, x, o: m.addmm(x @ x.T, x, x.T, out=o),
    "bmm": lambda m, x, o: m.bmm(x[None], x.T[None], out=o),
    "norm": lambda m, x, o: m.norm(x, out=o),
    "amin": lambda m, x, o: m.amin(x, 1, out=o),
    "mv": lambda m, x, o: m.mv(x, x[0], out=o),
    "mean_all": lambda m, x, o: m.mean(x, out=o),
    "addmv": lambda m, x, o: m.addmv(x[:, 0], x, x[0], beta=0.5, alpha=2, out=o),
    "dot": lambda m, x, o: m.dot(x[0], x[1], out=o),
    "vdot": lambda m, x, o: m.vdot(x[0], x[1], out=o),
    "outer": lambda m, x, o: m.outer(x[0], x[:, 1], out=o),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_is_written_and_returned(name):
    e_out, t_out = ember.empty(0), torch.empty(0)
    e_r = CALLS[name](ember, ember.tensor(X), e_out)
    t_r = CALLS[name](torch, torch.tensor(X), t_out)
    assert e_r is e_out and t_r is t_out
    assert_close(e_out, t_out)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_out_dtype_checked_as_pytorch_does(name, dtype):
    """A wider float out is accepted where PyTorch casts and refused where it checks exactly; an integer out
    is always refused for a float result, with PyTorch's error type."""
    def run(m):
        out = m.empty(0, dtype=getattr(m, dtype))
        CALLS[name](m, m.tensor(X), out)
        return out

    assert_same_outcome(run)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_max_min_with_dim_write_values_and_indices(m):
    x = m.tensor(X)
    values, indices = m.empty(0), m.empty(0, dtype=m.long)
    r = m.max(x, 1, keepdim=True, out=(values, indices))
    assert r[0] is values and r[1] is indices and r.values is values
    assert type(r).__name__ == "max_out"  # PyTorch's out= form has its own named tuple
    assert_close(values, torch.tensor(X).max(1, keepdim=True).values)
    assert_close(indices, torch.tensor(X).max(1, keepdim=True).indices)
    with pytest.raises(RuntimeError):  # the values' dtype must be the input's exactly
        m.min(x, 0, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.long)))
    with pytest.raises(TypeError):  # one tensor where the op returns two
        m.max(x, 1, out=m.empty(0))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_nonempty_out_of_another_shape_is_resized_with_a_warning(m):
    out = m.zeros(5)
    with pytest.warns(UserWarning, match="was resized since it had shape \\[5\\]"):
        m.sum(m.tensor(X), 0, out=out)
    assert tuple(out.shape) == (4,)
    same = m.zeros(4)
    m.sum(m.tensor(X), 0, out=same)  # the right shape: no warning (warnings are errors here)
    assert_close(same, torch.tensor(X).sum(0))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_out_refused_when_an_input_requires_grad(m):
    x = m.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        m.max(x, out=m.empty(0))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        m.cat([m.tensor(X), x], out=m.empty(0))
    with m.no_grad():
        out = m.empty(0)
        m.sum(x, 1, out=out)
    assert not out.requires_grad
    assert_close(out, torch.tensor(X).sum(1))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_out_may_be_an_input(m):
    x = m.tensor(X)
    assert m.mul(x, 2, out=x) is x
    assert_close(x, torch.tensor(X) * 2)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_out_must_be_a_tensor(m):
    with pytest.raises(TypeError):
        m.add(m.tensor(X), 1, out=[1.0])


@pytest.mark.parametrize("call", [
    lambda m, x: m.argmax(x, 1, out=m.empty(3)),
    lambda m, x: m.sort(x, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
    lambda m, x: m.topk(x, 2, out=(m.empty(0, dtype=m.bfloat16), m.empty(0, dtype=m.int64))),
    lambda m, x: m.mm(x.to(m.complex64), x.T.to(m.complex64), out=m.empty(0)),
    lambda m, x: m.bitwise_not(x.to(m.int64), out=m.empty(0, dtype=m.int32)),
    lambda m, x: m.add(x.to(m.complex64), 1, out=m.empty(0, dtype=m.bool)),
], ids=["argmax", "sort", "topk", "mm_complex", "bitwise_not", "add_complex"])
def test_out_dtype_messages_name_types_as_pytorch(call):
    with pytest.raises(RuntimeError) as t_err:
        call(torch, torch.tensor(X))
    with pytest.raises(RuntimeError) as e_err:
        call(ember, ember.tensor(X))
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("name", ["abs", "absolute"])
@pytest.mark.parametrize("dtype", ["float64", "float16", "complex64", "int64"])
def test_abs_of_a_complex_tensor_casts_into_out_as_pytorch(name, dtype):
    """abs of a complex tensor is real: its out takes any dtype that result casts to (not exactly the input's)."""
    got = []
    for m in (torch, ember):
        x = m.tensor([3 + 4j, -1j], dtype=m.complex64)
        out = m.empty(0, dtype=getattr(m, dtype))
        try:
            getattr(m, name)(x, out=out)
            got.append(out.tolist())
        except RuntimeError as err:
            got.append(str(err))
    assert got[0] == got[1]


E = lambda m, *a, **k: m.empty(0, *a, **k)  # noqa: E731 - an empty out


@pytest.mark.parametrize("call", [
    lambda m, x: m.sum(x, out=E(m)),
    lambda m, x: m.sum(x, out=3),
    lambda m, x: m.sum(x, dtype=m.float64, out=E(m)),
    lambda m, x: m.sum(x, keepdim=True, out=E(m)),
    lambda m, x: m.sum(x, 1, out=(E(m),)),
    lambda m, x: m.prod(x, out=E(m)),
    lambda m, x: m.prod(x, dtype=m.float64, out=E(m)),
    lambda m, x: m.prod(x, dim=None, out=E(m)),
    lambda m, x: m.sum(x.requires_grad_(), out=E(m)),
    lambda m, x: m.max(x, out=(E(m), E(m, dtype=m.long))),
    lambda m, x: m.min(x, out=3),
    lambda m, x: m.max(x, 1, out=E(m)),
    lambda m, x: m.min(x, 1, True, out=E(m)),
    lambda m, x: m.max(x, x, out=(E(m), E(m))),
    lambda m, x: m.max(x, 1, out=(E(m),)),
    lambda m, x: m.max(x, out=E(m, dtype=m.long)),
    lambda m, x: m.min(x.long(), out=E(m, dtype=m.bool)),
    lambda m, x: m.mean(x, out=E(m, dtype=m.bool)),
    lambda m, x: m.mean(x, 1, dtype=m.float64, out=E(m)),
    lambda m, x: m.mean(x, dtype=m.float64, out=E(m, dtype=m.float16)),
    lambda m, x: m.cumsum(x, 0, out=E(m, dtype=m.bool)),
    lambda m, x: m.cumprod(x.long(), 1, out=E(m, dtype=m.bool)),
    lambda m, x: m.cumsum(x, 0, dtype=m.bool),
    lambda m, x: x.cumprod(0, dtype=m.bool),
], ids=["sum", "sum_int", "sum_dtype", "sum_keepdim", "sum_tuple", "prod", "prod_dtype", "prod_dim_none", "sum_grad",
        "max_tuple", "min_int", "max_dim_tensor", "min_dim_keepdim_tensor", "max_other_tuple", "max_dim_one_tensor",
        "max_all_long", "min_all_bool", "mean_all_bool", "mean_dtype_not_outs", "mean_all_dtype_not_outs", "cumsum_bool", "cumprod_bool", "cumsum_dtype_bool",
        "cumprod_method_dtype_bool"])
def test_out_refused_as_pytorch(call):
    """out= where PyTorch's overload has none (sum and prod without a dim, a tensor for max with a dim, ...), and
    the dtypes of out PyTorch refuses for max/min of all elements, mean of all elements and running sums: PyTorch's
    error types and words."""
    assert_same_error(lambda m: call(m, m.tensor(X)))


@pytest.mark.parametrize("call", [
    lambda m: m.max(E(m), out=E(m)),
    lambda m: m.min(E(m), out=E(m, dtype=m.float64)),
    lambda m: m.max(E(m, dtype=m.int32), out=E(m, dtype=m.long)),
    lambda m: m.min(E(m, dtype=m.uint8), out=E(m, dtype=m.uint8)),
    lambda m: m.max(E(m, dtype=m.bool), out=E(m, dtype=m.bool)),
    lambda m: m.min(m.zeros(0, 3, dtype=m.bool), out=m.zeros(2, dtype=m.long)),
    lambda m: m.max(m.tensor([3, 1]), out=E(m)),
    lambda m: m.sum(m.tensor(X), 1, out=E(m, dtype=m.bool)),
    lambda m: m.sum(m.tensor([[3, -3], [2, 0]]), 1, out=E(m, dtype=m.bool)),
    lambda m: m.sum(m.tensor(X), dtype=m.bool),
    lambda m: m.prod(m.tensor([[1.5, 0.0], [2.0, 3.0]]), 1, out=E(m, dtype=m.bool)),
    lambda m: m.tensor([[1.5, 0.0], [0.0, 0.0]]).sum(1, dtype=m.bool),
    lambda m: m.mean(m.tensor(X), out=E(m, dtype=m.float64)),
    lambda m: m.mean(m.tensor(X), 1, out=E(m, dtype=m.float64)),
    lambda m: m.mean(m.tensor(X), 0, out=E(m, dtype=m.float16)),
    lambda m: m.mean(m.tensor(X).half(), 1, out=E(m)),
    lambda m: m.mean(m.tensor(X), 1, out=E(m, dtype=m.complex128)),
], ids=["max_empty", "min_empty_float64", "max_empty_int32", "min_empty_uint8", "max_empty_bool",
        "min_empty_2d_resized", "max_int_into_float", "sum_into_bool", "sum_int_into_bool", "sum_dtype_bool",
        "prod_into_bool", "sum_method_dtype_bool", "mean_all_float64", "mean_float64", "mean_float16",
        "mean_half_into_float", "mean_complex128"])
def test_out_written_as_pytorch(call):
    """max/min of all elements into out (an empty input: the dtype's lowest or highest value, as PyTorch's
    max.unary_out), sums and products into a bool out or with dtype=bool (any non-zero, all non-zero), and means
    computed in out's dtype (float32 for a half one): PyTorch's values bit for bit."""
    (got, got_warned), (want, want_warned) = outcomes(call)
    assert not isinstance(want, Exception)
    assert (str(got.dtype).split(".")[-1], got.tolist()) == (str(want.dtype).split(".")[-1], want.tolist())
    assert [str(w[1]) for w in got_warned] == [str(w[1]) for w in want_warned]


@pytest.mark.parametrize("call", [
    lambda m: m.ger(m.arange(3.0), m.arange(2.0), out=E(m)),
    lambda m: m.ger(m.arange(3.0), m.arange(2.0), out=E(m, dtype=m.long)),
    lambda m: m.outer(m.arange(3.0, requires_grad=True), m.arange(2.0), out=E(m)),
    lambda m: m.dot(m.arange(3.0, requires_grad=True), m.arange(3.0), out=E(m)),
    lambda m: m.vdot(m.arange(3.0), m.arange(3.0), out=m.zeros(2)),
    lambda m: m.addmv(m.zeros(2), m.ones(2, 3), m.ones(3), out=E(m, dtype=m.float64)),
    lambda m: m.prod(m.ones(2, 3), dim=None), lambda m: m.ones(2, 3).prod(dim=None), lambda m: m.prod(m.ones(2, 3), dim=None, keepdim=True), lambda m: m.prod(m.ones(2, 3), dim=None, dtype=m.float64),
    lambda m: m.ones(2, 3).prod(dim=None, keepdim=True), lambda m: m.prod(m.ones(2, 3)),
    lambda m: m.ones(2, 3).prod(dtype=m.float64), lambda m: m.prod(m.ones(2, 3), 1, True),
], ids=["ger", "ger_long", "outer_grad", "dot_grad", "vdot_resized", "addmv_float64", "prod_dim_none",
        "method_dim_none", "prod_dim_none_keepdim", "prod_dim_none_dtype", "method_dim_none_keepdim", "prod",
        "method_prod_dtype", "prod_dim"])
def test_vector_products_out_and_prod_dim_none_as_pytorch(call):
    """out= of addmv, dot, vdot (out's dtype exactly the result's), outer and ger (a cast; under autograd refused
    as mul's, which PyTorch's writes with), and prod's refusal of dim=None (sum takes it, prod has no such
    overload): PyTorch's values, errors and warnings (but ger's deprecation, which PyTorch gives once a process)."""
    (got, got_warned), (want, want_warned) = outcomes(call)
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    else:
        assert (str(got.dtype).split(".")[-1], got.tolist()) == (str(want.dtype).split(".")[-1], want.tolist())
    want_warned = [w for w in want_warned if "torch.ger is deprecated" not in w[1]]
    assert [str(w[1]) for w in got_warned] == [str(w[1]) for w in want_warned]


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_prod_refuses_a_positional_dim_none(m):
    """(PyTorch's message names the None positional, which ember's signature cannot tell from dim=None.)"""
    for call in (lambda: m.prod(m.ones(2, 3), None), lambda: m.ones(2, 3).prod(None)):
        with pytest.raises(TypeError, match="prod()"):
            call()


@pytest.mark.parametrize("call", [
    lambda m: m.mv(m.ones(2, 3), m.ones(2)),
    lambda m: m.mv(m.ones(2, 3), m.ones(3, dtype=m.long)),
    lambda m: m.mv(m.ones(2, 3, dtype=m.long), m.ones(3)),
    lambda m: m.mv(m.ones(2, 2, 2), m.ones(2)),
    lambda m: m.mv(m.ones(2), m.ones(2)),
    lambda m: m.ones(2, 3).mv(m.ones(3, 1)),
    lambda m: m.mv(m.ones(2, 3), m.ones(3), out=E(m, dtype=m.float64)),
    lambda m: m.mv(m.ones(2, 3, requires_grad=True), m.ones(3), out=E(m)),
], ids=["sizes", "vec_long", "mat_long", "3d", "1d", "vec_2d", "out_float64", "grad"])
def test_mv_errors_as_pytorch(call):
    assert_same_error(call)


SPECIAL_ARGS = {"polygamma": lambda x: (1, x), "multigammaln": lambda x: (x + 2, 2), "xlogy": lambda x: (x, x),
                "xlog1py": lambda x: (x, x), "zeta": lambda x: (x + 1, x), "gammainc": lambda x: (x, x),
                "gammaincc": lambda x: (x, x), "logsumexp": lambda x: (x, 0)}
SPECIAL_OUT = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
               "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "logsumexp", "multigammaln", "ndtr",
               "ndtri", "polygamma", "psi", "round", "sinc", "xlog1py", "xlogy", "zeta"]


@pytest.mark.parametrize("name", SPECIAL_OUT)
def test_special_functions_take_out_as_pytorch(name):
    """``torch.special``'s out=: written and returned, cast into a wider out or refused with PyTorch's words (round:
    only its own dtype), refused under autograd naming the op PyTorch runs (ndtr, composite: not refused), and a
    tuple refused naming the special_ function."""
    def calls(m):
        fn, args = getattr(m.special, name), SPECIAL_ARGS.get(name, lambda x: (x,))
        x = m.tensor([0.25, 0.5, 0.75])
        seen = []
        for dtype in ("float32", "float64", "float16", "int64", "bool"):
            out = E(m, dtype=getattr(m, dtype))
            try:
                r = fn(*args(x), out=out)
                seen.append((r is out, str(out.dtype).split(".")[-1], np.round(out.double().numpy(), 3).tolist()))
            except RuntimeError as err:
                seen.append(str(err))
        grad = (x, x.clone().requires_grad_()) if name == "polygamma" else (x.clone().requires_grad_(),)
        grad = args(grad[0])[:1] + grad[1:] if name == "polygamma" else (grad[0],) + args(x)[1:]
        try:
            with m.no_grad() if name == "ndtr" else nullcontext():
                seen.append(fn(*grad, out=E(m)).shape)
        except RuntimeError as err:
            seen.append(str(err))
        with pytest.raises(TypeError) as err:
            fn(*args(x), out=(E(m),))
        seen.append(type(err.value).__name__)
        return seen

    got, want = calls(ember), calls(torch)
    assert got == want


def test_special_ndtr_out_keeps_the_graph():
    """PyTorch's special.ndtr is composite: its out= copies a differentiable result, so out requires grad."""
    seen = []
    for m in (ember, torch):
        x = m.tensor([0.25, 0.5], requires_grad=True)
        out = m.special.ndtr(x, out=m.empty(0))
        out.sum().backward()
        seen.append((out.requires_grad, x.grad.tolist()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-6)


@pytest.mark.parametrize("name", ["i0", "igamma", "igammac", "mvlgamma", "polygamma"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_gamma_and_bessel_functions_take_out_as_pytorch(name, dtype):
    def call(m):
        x = m.tensor([2.25, 2.5])
        args = {"igamma": (x, x), "igammac": (x, x), "mvlgamma": (x, 2), "polygamma": (1, x)}.get(name, (x,))
        out = E(m, dtype=getattr(m, dtype))
        return getattr(m, name)(*args, out=out) is out, out

    (got, _), (want, _) = outcomes(call)
    if isinstance(want, Exception):
        assert (type(got), str(got)) == (type(want), str(want))
    else:
        assert got[0] and want[0]
        assert_close(got[1], want[1])


@pytest.mark.parametrize("call", [
    lambda m: m.max(input=m.tensor(X), out=E(m)),
    lambda m: m.min(input=m.tensor(X), out=E(m)),
    lambda m: m.max(input=m.tensor(X), dim=1, out=(E(m), E(m, dtype=m.long))),
    lambda m: m.sum(input=m.tensor(X), dim=0, out=E(m)),
], ids=["max_all", "min_all", "max_dim", "sum_dim"])
def test_out_with_the_input_by_keyword(call):
    """``input=`` by keyword picks the same overload as the positional tensor (max/min of all elements into
    ``out``)."""
    (got, _), (want, _) = outcomes(call)
    assert not isinstance(want, Exception)
    got, want = (got, want) if isinstance(want, torch.Tensor) else (got[0], want[0])
    assert (str(got.dtype).split(".")[-1], got.tolist()) == (str(want.dtype).split(".")[-1], want.tolist())


@pytest.mark.parametrize("call", [
    lambda m: m.sum(m.tensor(X), 0, dtype=m.float64, out=E(m)),
    lambda m: m.sum(m.tensor(X), 0, dtype=m.long, out=E(m)),
    lambda m: m.prod(m.tensor(X), 0, dtype=m.float64, out=E(m)),
    lambda m: m.cumsum(m.tensor(X), 0, dtype=m.float64, out=E(m)),
    lambda m: m.cumprod(m.tensor(X).long(), 1, dtype=m.float32, out=E(m, dtype=m.float64)),
    lambda m: m.arange(3, dtype=m.float64, out=E(m)),
], ids=["sum", "sum_long", "prod", "cumsum", "cumprod", "arange"])
def test_a_dtype_other_than_outs_is_refused(call):
    """sum/prod/cumsum/cumprod/arange compute in out's dtype; a ``dtype=`` that is not out's is PyTorch's
    RuntimeError, not a result computed in it and cast into out."""
    assert_same_error(call)


def _buffer(m):
    return m.tensor(np.linspace(0.1, 0.9, 12, dtype=np.float32))


# name -> f(module): an out= call whose out shares memory with an input in a way PyTorch refuses
OVERLAPPING = {
    "mul_transposed": lambda m: (lambda x: m.mul(x, x.t(), out=x))(m.ones(3, 3)),
    "add_shifted": lambda m: (lambda b: m.add(b[:4], 1, out=b[1:5]))(_buffer(m)),
    "add_element_of_out": lambda m: (lambda b: m.add(b[:4], b[0], out=b[:4]))(_buffer(m)),
    "neg_shifted": lambda m: (lambda b: m.neg(b[:4], out=b[1:5]))(_buffer(m)),
    "where_shifted": lambda m: (lambda b: m.where(b[:4] > 0.5, b[:4], b[4:8], out=b[1:5]))(_buffer(m)),
    "clamp_shifted": lambda m: (lambda b: m.clamp(b[:4], 0, 1, out=b[1:5]))(_buffer(m)),
    "cumsum_shifted": lambda m: (lambda b: m.cumsum(b[:4], 0, out=b[1:5]))(_buffer(m)),
    "addmm_bias": lambda m: (lambda b: m.addmm(b[:9].view(3, 3), m.ones(3, 3), m.ones(3, 3),
                                               out=b[1:10].view(3, 3)))(_buffer(m)),
    "cat_same": lambda m: (lambda b: m.cat([b[:4]], out=b[:4]))(_buffer(m)),
    "stack_part": lambda m: (lambda b: m.stack([b[:3], b[3:6]], out=b[:6].view(2, 3)))(_buffer(m)),
    "gather_same": lambda m: (lambda b: m.gather(b[:4], 0, m.tensor([3, 2, 1, 0]), out=b[:4]))(_buffer(m)),
    "index_select_shifted": lambda m: (lambda b: m.index_select(b[:4], 0, m.tensor([0, 1]), out=b[1:3]))(
        _buffer(m)),
    "expanded_out": lambda m: m.add(m.ones(4), 1, out=m.ones(1).expand(4)),
    # max/min with a dim or of two tensors check as the pointwise ops (of all elements they do not)
    "max_dim_part": lambda m: (lambda x: m.max(x, 0, out=(x[0], m.zeros(3, dtype=m.long))))(m.ones(3, 3)),
    "min_dim_part": lambda m: (lambda b: m.min(b[:4].view(2, 2), 1, out=(b[1:3], m.zeros(2, dtype=m.long))))(
        _buffer(m)),
    "max_binary": lambda m: (lambda x: m.max(x, x.t(), out=x))(m.ones(3, 3)),
    "minimum_like_min": lambda m: (lambda b: m.min(b[:4], b[4:8], out=b[1:5]))(_buffer(m)),
}
# and the overlaps PyTorch allows (the same view; strided views that are not dense)
ALLOWED_OVERLAPS = {
    "add_same": lambda m: (lambda b: m.add(b[:4], 1, out=b[:4]))(_buffer(m)),
    "add_expanded_same": lambda m: (lambda b: m.add(b[:4], 1, out=b[:4].expand(4)))(_buffer(m)),
    "add_strided": lambda m: (lambda b: m.add(b[::2], 1, out=b[1::2]))(_buffer(m)),
    "cumsum_same": lambda m: (lambda b: m.cumsum(b[:4], 0, out=b[:4]))(_buffer(m)),
    "cat_disjoint": lambda m: (lambda b: m.cat([b[:3]], out=b[3:6]))(_buffer(m)),
    # addmm/addmv expand their added input to the result's shape first: a repeated one is never refused
    "addmm_row_bias": lambda m: (lambda b: m.addmm(b[:3], m.ones(3, 3), m.ones(3, 3), out=b[:9].view(3, 3)))(
        _buffer(m)),
    "addmv_scalar_bias": lambda m: (lambda b: m.addmv(b[1:2], m.ones(3, 3), m.ones(3), out=b[:3]))(_buffer(m)),
    "max_of_all_elements": lambda m: (lambda b: m.max(b[:4], out=b[0]))(_buffer(m)),
}


@pytest.mark.parametrize("call", OVERLAPPING)
def test_an_out_overlapping_an_input_is_refused_as_pytorch(call):
    assert_same_error(OVERLAPPING[call])


@pytest.mark.parametrize("call", ALLOWED_OVERLAPS)
def test_an_out_overlapping_as_pytorch_allows_is_written(call):
    assert_close(ALLOWED_OVERLAPS[call](ember), ALLOWED_OVERLAPS[call](torch))


SPECIAL_VALUES = np.array([[1.5, np.nan], [np.inf, -np.inf]], dtype=np.float32)
# ops PyTorch gives out= that are joinings, products or pointwise: name -> f(module, x, out)
MORE_CALLS = {
    "vstack": lambda m, x, o: m.vstack([x, x], out=o),
    "hstack": lambda m, x, o: m.hstack([x, x], out=o),
    "inner": lambda m, x, o: m.inner(x, x, out=o),
    "kron": lambda m, x, o: m.kron(x, x, out=o),
    "nan_to_num": lambda m, x, o: m.nan_to_num(x, out=o),
    "sgn": lambda m, x, o: m.sgn(x, out=o),
    "angle": lambda m, x, o: m.angle(x, out=o),
    "isposinf": lambda m, x, o: m.isposinf(x, out=o),
    "isneginf": lambda m, x, o: m.isneginf(x, out=o),
}


@pytest.mark.parametrize("name", sorted(MORE_CALLS))
@pytest.mark.parametrize("source", ["float32", "int64", "complex64"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "float16"])
def test_more_ops_take_out_with_pytorchs_dtype_checks(name, source, dtype):
    """Written and returned where PyTorch accepts out's dtype (cast into it or exactly the result's), else
    PyTorch's error type and words."""
    def run(m):
        x = m.tensor(SPECIAL_VALUES).nan_to_num(0.5, 2.0, -3.0).to(getattr(m, source)) if source == "int64" else \
            m.tensor(SPECIAL_VALUES).to(getattr(m, source))
        out = m.empty(0, dtype=getattr(m, dtype))
        result = MORE_CALLS[name](m, x, out)
        assert result is out
        return out

    assert_same_outcome(run)


@pytest.mark.parametrize("name", sorted(MORE_CALLS))
def test_more_ops_out_under_autograd_as_pytorch(name):
    """Refused with an input that requires grad (PyTorch's words, naming the op autograd sees), except inner (a
    composite whose out= copies a differentiable result: the gradient flows through out) and the ops PyTorch
    does not differentiate."""
    def run(m):
        x = m.tensor(SPECIAL_VALUES).nan_to_num(0.5, 2.0, -3.0).requires_grad_(True)
        out = m.empty(0, dtype=m.bool if name.startswith("is") else m.float32)
        MORE_CALLS[name](m, x, out)
        if not out.requires_grad:
            return out
        out.sum().backward()
        return x.grad

    assert_same_outcome(run)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_nan_to_num_out_of_a_transposed_input_is_laid_out_as_pytorch(dtype):
    # (an integer input is copied into out resized row-major; a floating one's out follows the input's layout)
    strides = []
    for m in (ember, torch):
        out = m.empty(0, dtype=getattr(m, dtype))
        m.nan_to_num(m.zeros(4, 3, dtype=getattr(m, dtype)).t(), out=out)
        strides.append(out.stride())
    assert strides[0] == strides[1]
