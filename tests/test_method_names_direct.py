"""Tensor methods whose parameters carry PyTorch's names run as they are written, without the wrapper that renames
PyTorch's keyword names to ember's (``_arg_aliases.with_torch_names``: a Python frame and the arguments packed again,
0.08-0.26 µs a call), and take what PyTorch's take: its keyword names, the positional forms, and its errors for
other names. A Linear that records nothing does not work out its node's PyTorch name."""

import inspect

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.nn._ops import linear as linear_op

X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)

# (method, call with PyTorch's keyword names) for the methods that now need no renaming
CALLS = [
    ("add", lambda x: x.add(other=x * 2, alpha=3)), ("sub", lambda x: x.sub(other=x * 2)),
    ("subtract", lambda x: x.subtract(other=x)), ("mul", lambda x: x.mul(other=x)),
    ("multiply", lambda x: x.multiply(other=x)), ("div", lambda x: x.div(other=x + 1, rounding_mode="floor")),
    ("divide", lambda x: x.divide(other=x + 1)), ("true_divide", lambda x: x.true_divide(other=x + 1)),
    ("floor_divide", lambda x: x.floor_divide(other=x + 1)), ("remainder", lambda x: x.remainder(other=x + 1)),
    ("pow", lambda x: x.pow(exponent=2)), ("pow_", lambda x: x.clone().pow_(exponent=2)),
    ("maximum", lambda x: x.maximum(other=x * 2)), ("minimum", lambda x: x.minimum(other=x * 2)),
    ("eq", lambda x: x.eq(other=x)), ("ne", lambda x: x.ne(other=x)), ("lt", lambda x: x.lt(other=x + 1)),
    ("le", lambda x: x.le(other=x)), ("gt", lambda x: x.gt(other=x)), ("ge", lambda x: x.ge(other=x)),
    ("greater", lambda x: x.greater(other=x)), ("less_equal", lambda x: x.less_equal(other=x)),
    ("logical_and", lambda x: x.logical_and(other=x)), ("logical_xor", lambda x: x.logical_xor(other=x)),
    ("isclose", lambda x: x.isclose(other=x, rtol=0.1)), ("allclose", lambda x: x.allclose(other=x)),
    ("equal", lambda x: x.equal(other=x)),
    ("matmul", lambda x: x.matmul(other=x.t())), ("mm", lambda x: x.mm(mat2=x.t())),
    ("bmm", lambda x: x[None].bmm(mat2=x.t()[None])), ("mv", lambda x: x.mv(vec=x[0])),
    ("dot", lambda x: x[0].dot(tensor=x[1])), ("outer", lambda x: x[0].outer(vec2=x[1])),
    ("ger", lambda x: x[0].ger(vec2=x[1])), ("inner", lambda x: x.inner(other=x)),
    ("addcmul_", lambda x: x.clone().addcmul_(tensor1=x, tensor2=x, value=0.5)),
    ("addcdiv_", lambda x: x.clone().addcdiv_(tensor1=x, tensor2=x + 1, value=2)),
]

# methods whose only wrapper (``_dtype.method_scalars``) numbers a refused number's position as PyTorch numbers a
# method's: it renames no argument
ERRORS_ONLY = {"isclose", "allclose"}


@pytest.mark.parametrize("name,call", CALLS, ids=[name for name, _ in CALLS])
def test_pytorchs_keyword_names_without_a_wrapper(name, call):
    method = getattr(ember.Tensor, name)
    if name in ERRORS_ONLY:  # a layer that renames nothing: the signature is the method's own
        assert inspect.signature(method) == inspect.signature(inspect.unwrap(method))
    else:
        assert inspect.unwrap(method) is method  # the method itself: no renaming layer on the call path
    assert_close(call(ember.tensor(X)), call(torch.tensor(X)))


@pytest.mark.parametrize("call", [
    lambda x: x.add(x), lambda x: x + x, lambda x: x.sub(x, alpha=2), lambda x: x.pow(2), lambda x: x ** 2,
    lambda x: x.mm(x.t()), lambda x: x @ x.t(), lambda x: x.clone().addcmul_(x, x), lambda x: x[0].dot(x[1]),
])
def test_positional_forms(call):
    assert_close(call(ember.tensor(X)), call(torch.tensor(X)))


@pytest.mark.parametrize("call", [
    lambda x: x.add(b=x), lambda x: x.mul(b=x), lambda x: x.mm(b=x.t()), lambda x: x.pow(other=2),
    lambda x: x.clone().addcmul_(t1=x, t2=x), lambda x: x.add(x, other=x), lambda x: x.mv(v=x[0]),
])
def test_other_names_are_refused_as_pytorch_refuses_them(call):
    with pytest.raises(TypeError):
        call(torch.tensor(X))
    with pytest.raises(TypeError):
        call(ember.tensor(X))


@pytest.mark.parametrize("call", [
    lambda x: x.sum(axis=1, keepdims=True), lambda x: x.amax(axis=0), lambda x: x.softmax(axis=1),
    lambda x: x.mean(dim=1, keepdim=True),
])
def test_numpy_spellings_still_taken(call):
    assert_close(call(ember.tensor(X)), call(torch.tensor(X)))


def test_unrecorded_linear_does_not_work_out_its_node_name(monkeypatch):
    names = []
    original = linear_op._torch_node_name
    monkeypatch.setattr(linear_op, "_torch_node_name", lambda x, b: names.append(1) or original(x, b))
    layer = ember.nn.Linear(3, 4)
    x = ember.tensor(X)
    with ember.no_grad():
        layer(x)
    layer.requires_grad_(False)
    layer(x)
    assert names == []
    layer.requires_grad_(True)
    out = layer(x)
    assert names == [1]
    assert out.grad_fn.name() == "AddmmBackward0" and type(out.grad_fn).__name__ == "AddmmBackward0"


@pytest.mark.parametrize("shape,bias", [((2, 3), True), ((2, 3), False), ((3,), True), ((3,), False),
                                        ((2, 2, 3), True), ((2, 2, 3), False)])
def test_recorded_linear_node_names_as_pytorchs(shape, bias):
    rng = np.random.default_rng(0)
    xs, w, b = rng.standard_normal(shape, np.float32), rng.standard_normal((4, 3), np.float32), \
        rng.standard_normal(4, np.float32)
    outs = []
    for lib in (torch, ember):
        x = lib.tensor(xs, requires_grad=True)
        with lib.no_grad():  # under no_grad first: nothing recorded, then the same call recorded
            assert lib.nn.functional.linear(x, lib.tensor(w), lib.tensor(b) if bias else None).grad_fn is None
        outs.append(lib.nn.functional.linear(x, lib.tensor(w), lib.tensor(b) if bias else None))
    assert type(outs[1].grad_fn).__name__ == type(outs[0].grad_fn).__name__
    assert_close(outs[1], outs[0])
