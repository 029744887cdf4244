"""An integer tensor filled in place from a float value tensor that requires grad: PyTorch's masked_fill_ records
it (MaskedFillBackward1, the result requiring grad), as index_fill_ and fill_ do, while copy_ records nothing and
the out-of-place masked_fill refuses it ("Autograd not support dtype: Long")."""

import pytest
import torch

import ember

CALLS = {
    "masked_fill_": lambda m, x, v: x.masked_fill_(m.tensor([True, False, True]), v),
    "masked_fill_ bool": lambda m, x, v: x.bool().masked_fill_(m.tensor([True, False, True]), v),
    "masked_fill_ float64 value": lambda m, x, v: x.masked_fill_(m.tensor([True, False, True]), v.double()),
    "index_fill_": lambda m, x, v: x.index_fill_(0, m.tensor([0]), v),
    "fill_": lambda m, x, v: x.fill_(v),
    "copy_": lambda m, x, v: x.copy_(v.expand(3)),
    "masked_fill": lambda m, x, v: x.masked_fill(m.tensor([True, False, True]), v),
}


def _outcome(m, name):
    v = m.tensor(2.5, requires_grad=True)
    try:
        r = CALLS[name](m, m.tensor([1, 2, 3]), v)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return r.tolist(), str(r.dtype).split(".")[-1], r.requires_grad, type(r.grad_fn).__name__


@pytest.mark.parametrize("name", CALLS)
def test_integer_fill_from_a_value_requiring_grad(name):
    assert _outcome(ember, name) == _outcome(torch, name)


def test_float_fill_unchanged():
    for m in (ember, torch):
        v = m.tensor(2.5, requires_grad=True)
        r = m.tensor([1.0, 2.0, 3.0]).masked_fill_(m.tensor([True, False, True]), v)
        r.sum().backward()
        assert type(r.grad_fn).__name__ == "MaskedFillBackward1" and v.grad.item() == 2.0


# (name, the integer tensor with a history -> what is done with it): out-of-place ops on it are refused ("Autograd
# not support dtype"), in-place ones and casts to an integer dtype are not, a gradient reaching it is PyTorch's
# engine's assertion
FILLS = {
    "masked_fill_": lambda m, v: m.tensor([1, 2, 3]).masked_fill_(m.tensor([False, True, True]), v),
    "index_fill_": lambda m, v: m.tensor([1, 2, 3]).index_fill_(0, m.tensor([1]), v),
    "fill_": lambda m, v: m.tensor([1, 2, 3]).fill_(v),
    "bool masked_fill_": lambda m, v: m.tensor([True, False, True]).masked_fill_(m.tensor([False, True, True]), v),
}
USES = {
    "add": lambda m, y: y + 1, "mul": lambda m, y: y * 2, "sum": lambda m, y: y.sum(), "select": lambda m, y: y[0],
    "view": lambda m, y: y.view(3), "clone": lambda m, y: y.clone(), "neg": lambda m, y: y.long().neg(),
    "cumsum": lambda m, y: y.cumsum(0), "cat": lambda m, y: m.cat([y, y]), "t": lambda m, y: y[None].t(),
    "int": lambda m, y: y.int(), "float": lambda m, y: y.float(), "div": lambda m, y: y / 2,
    "eq": lambda m, y: y == 1, "lt_number": lambda m, y: y < 2, "ne_tensor": lambda m, y: y != m.tensor([1, 2, 3]),
    "add_float": lambda m, y: y + 1.5, "mul_int_tensor": lambda m, y: y * m.tensor([1, 2, 3]),
    "sum_float": lambda m, y: y.sum(dtype=m.float32), "prod": lambda m, y: y.prod(),
    "logical_and": lambda m, y: y.logical_and(y), "bitwise_and": lambda m, y: y & y, "add_": lambda m, y: y.add_(True if y.dtype == m.bool else 1),
    "masked_fill_ again": lambda m, y: y.masked_fill_(m.tensor([True, False, False]), 0),
    "index_fill": lambda m, y: m.tensor([1, 2]).index_fill(0, m.tensor([0]), m.tensor(1.5, requires_grad=True)),
    "index_fill bool": lambda m, y: m.tensor([True]).index_fill(0, m.tensor([0]), m.tensor(1.5, requires_grad=True)),
}


def _use(m, fill, use):
    y = FILLS[fill](m, m.tensor(2.5, requires_grad=True))
    try:
        r = USES[use](m, y)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return r.tolist(), str(r.dtype).split(".")[-1], r.requires_grad, type(r.grad_fn).__name__


# (a bool one promoted to an integer dtype by the op, y + 1, y.sum(): PyTorch's node refuses its Long result, as
# ember's, whose promotion's cast keeps the tensor's flag for the op's node to refuse)
@pytest.mark.parametrize("fill,use", [(f, u) for f in FILLS for u in USES])
def test_ops_on_an_integer_tensor_with_history(fill, use):
    assert _use(ember, fill, use) == _use(torch, fill, use)


BACKWARDS = {
    "float sum": lambda m, y, v: y.float().sum().backward(),
    "times float": lambda m, y, v: (y * 2.0).sum().backward(),
    "root, float gradient": lambda m, y, v: y.backward(m.ones(3)),
    "root, integer gradient": lambda m, y, v: y.backward(m.ones(3, dtype=m.long)),
    "grad": lambda m, y, v: m.autograd.grad(y.float().sum(), v),
    "grad create_graph": lambda m, y, v: m.autograd.grad(y.double().sum(), v, create_graph=True),
}


@pytest.mark.parametrize("how", BACKWARDS)
@pytest.mark.parametrize("fill", ["masked_fill_", "index_fill_", "fill_"])
def test_a_gradient_never_reaches_an_integer_tensor(fill, how):
    """PyTorch casts the gradient to the integer tensor's dtype and its engine asserts: no gradient reaches the
    value (ember gave it one before)."""
    for m in (ember, torch):
        v = m.tensor(2.5, requires_grad=True)
        y = FILLS[fill](m, v)
        with pytest.raises(RuntimeError, match=r"isDifferentiableType\(grad.scalar_type\(\)\) INTERNAL ASSERT FAILED"):
            BACKWARDS[how](m, y, v)
        assert v.grad is None


def test_float_value_history_still_differentiable():
    for m in (ember, torch):
        v = m.tensor(2.5, requires_grad=True)
        y = m.tensor([1.0, 2.0, 3.0]).index_fill_(0, m.tensor([0, 2]), v)
        (y * y).sum().backward()
        assert v.grad.item() == 10.0
        x = m.tensor([0.5, 1.5], requires_grad=True)
        assert not x.long().requires_grad and x.long().grad_fn is None and not x.bool().requires_grad


SETITEMS = {
    "x[0] = v[0]": lambda m, i, v: i.__setitem__(0, v[0]),
    "x[:2] = v[:2]": lambda m, i, v: i.__setitem__(slice(0, 2), v[:2]),
    "x[...] = v": lambda m, i, v: i.__setitem__(Ellipsis, v),
}  # (index tensors: PyTorch's index_put_ refuses a float value for an integer tensor, as ember's)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("name", SETITEMS)
def test_setitem_of_a_value_requiring_grad_into_an_integer_tensor_records_nothing_as_pytorch(name, dtype):
    """PyTorch's copy of a value into a tensor without gradients (an integer or bool one) records nothing: the tensor
    keeps no history, and later ops on it are plain integer ops (a recorded one would be refused above)."""
    got = []
    for m in (ember, torch):
        v = m.tensor([1.5, 2.5, 3.5], requires_grad=True)
        i = m.zeros(3, dtype=getattr(m, dtype))
        SETITEMS[name](m, i, v)
        r = i | True if dtype == "bool" else i + 1
        got.append((i.requires_grad, i.grad_fn is None, r.tolist(), r.requires_grad, i.sum().requires_grad))
    assert got[0] == got[1]


# writes into an integer or bool tensor with a history: through a view of it (y[0] = 7, y[1:] = ...) PyTorch makes
# the view first, an integer result its autograd refuses; into the tensor itself (y[:], y[...], an index tensor, a
# mask) it records; an in-place op whose result cannot be cast into a bool y is that error, before the refusal
WRITES = ["y[0] = 7", "y[0] = True", "y[1:] = m.tensor([1, 0])", "y[:] = 1", "y[...] = 1", "y[m.tensor([0])] = 1",
          "y[m.tensor([True, False, True])] = 1", "y += 1", "y.add_(1)", "y.mul_(2)", "y *= True",
          "y.add_(m.tensor([1, 0, 1]))", "y.long() + 1", "y[None]"]


@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize("statement", WRITES)
def test_writes_into_an_integer_tensor_with_history(statement, dtype):
    got = []
    for m in (ember, torch):
        y = m.zeros(3, dtype=getattr(m, dtype)).masked_fill_(m.tensor([True, False, True]),
                                                              m.tensor(1.0, requires_grad=True))
        try:
            exec(statement, {"m": m, "y": y})
            got.append((y.tolist(), y.requires_grad, type(y.grad_fn).__name__))
        except RuntimeError as e:
            got.append(("RuntimeError", str(e)))
    assert got[0] == got[1]
