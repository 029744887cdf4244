"""out=: the result written into a given tensor, its resizing, dtype checks and refusal under autograd,
against PyTorch."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close

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
}
# PyTorch's own message for these is an internal assertion's text; ember matches the error type only
MESSAGE_NOT_MATCHED = {"max", "min"}


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
    t_out = torch.empty(0, dtype=getattr(torch, dtype))
    try:
        CALLS[name](torch, torch.tensor(X), t_out)
    except (RuntimeError, TypeError) as t_err:
        with pytest.raises(type(t_err)) as e_err:
            CALLS[name](ember, ember.tensor(X), ember.empty(0, dtype=getattr(ember, dtype)))
        if name not in MESSAGE_NOT_MATCHED:
            assert str(e_err.value) == str(t_err)
    else:
        e_out = ember.empty(0, dtype=getattr(ember, dtype))
        CALLS[name](ember, ember.tensor(X), e_out)
        assert_close(e_out, t_out)


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
