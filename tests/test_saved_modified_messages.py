"""PyTorch's error, word for word, for a saved tensor changed in place before backward: the tensor's type name
(``torch.FloatTensor``, ``torch.HalfTensor`` and ``torch.LongTensor``, but ``CPUBFloat16Type``, ``CPUBoolType`` and
``CPUComplexFloatType``: the types without a legacy name), its shape, and the op whose output it is.

Each saving op in each dtype: a half-precision op that saves its result (softmax, log_softmax, norm, prod, cumprod)
computes in float32 and saves the float32 result before rounding it, so the entry that stands for its result is
written apart (``Node._saved_unrounded``), and a bool mask or an integer index is saved beside a floating input."""

import pytest
import torch

import ember


def _result_changed(op, *args):
    def make(m, x):
        y = getattr(x, op)(*args)
        y.mul_(2)
        return y
    return make


def _operand_changed(m, x):
    w = m.tensor([1.0, 2.0, 3.0], dtype=x.dtype)
    y = x * w
    w.add_(1)
    return y


def _view_operand_changed(m, x):
    w = m.tensor([1.0, 2.0, 3.0], dtype=x.dtype)
    y = x * w[:]
    w.add_(1)
    return y


def _nonleaf_base_changed(m, x):
    b = x * 1
    y = b ** 3
    b.mul_(2)
    return y


def _mask_changed(op):
    def make(m, x):
        c = m.tensor([True, False, True])
        y = m.where(c, x, m.zeros_like(x)) if op == "where" else x.masked_fill(c, 0.0)
        c.logical_not_()
        return y
    return make


def _index_changed(op):
    def make(m, x):
        i = m.tensor([0, 2])
        y = x.gather(0, i) if op == "gather" else x.index_select(0, i)
        i.add_(0)
        return y
    return make


CASES = {"exp's result": _result_changed("exp"), "sigmoid's result": _result_changed("sigmoid"),
         "tanh's result": _result_changed("tanh"), "softmax's result": _result_changed("softmax", 0),
         "log_softmax's result": _result_changed("log_softmax", 0), "norm's result": _result_changed("norm"),
         "prod's result": _result_changed("prod"), "prod's result along a dim": _result_changed("prod", 0),
         "cumprod's result": _result_changed("cumprod", 0),
         "mul's operand": _operand_changed,
         "mul's operand through a view": _view_operand_changed, "pow's non-leaf base": _nonleaf_base_changed,
         "where's condition": _mask_changed("where"), "masked_fill's mask": _mask_changed("masked_fill"),
         "gather's index": _index_changed("gather"), "index_select's index": _index_changed("index_select")}


def _message(m, case, dtype):
    x = m.tensor([0.5, -1.0, 2.0], dtype=getattr(m, dtype), requires_grad=True)
    y = CASES[case](m, x)
    with pytest.raises(RuntimeError) as err:
        (y.abs() if y.is_complex() else y).sum().backward()
    return str(err.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_tensor_changed_in_place_message_as_torch(case, dtype):
    if "softmax" in case and dtype.startswith("complex"):
        pytest.skip("PyTorch has no complex softmax")
    assert _message(ember, case, dtype) == _message(torch, case, dtype)


def _function_named(m, name):
    def forward(ctx, x):
        return x * 2

    def backward(ctx, g):
        return g * 2

    return type(name, (m.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _creator_message(m, case):
    """The message for an output of ``case``'s creator (a custom Function named so, a node numbered 1, or
    CopyBackwards) saved by sin and then changed in place without recording: the creator stays the node named."""
    x = m.ones(2, 3, requires_grad=True)
    if case == "prod along a dim":
        y = x.prod(1)  # ProdBackward1
    elif case == "copy_ into a tensor without history":
        y = m.zeros(2, 3)
        y.copy_(x * 1)  # torch::autograd::CopyBackwards
    else:
        y = _function_named(m, case).apply(x)  # its node: the class's name and Backward, no number
    w = y.sin()
    with m.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError) as err:
        w.sum().backward()
    return y.grad_fn.name(), str(err.value)


@pytest.mark.parametrize("case", ["Double", "Scale2", "Backward", "BackwardScale", "ScaleBackward", "Scale0",
                                  "prod along a dim", "copy_ into a tensor without history"])
def test_saved_output_changed_in_place_names_its_forward_op_as_torch(case):
    """PyTorch names the op by its node's name without the last ``Backward`` and the digits after it (the number
    kept unless 0): a custom Function's DoubleBackward is Double, ProdBackward1 Prod1, and CopyBackwards (a letter
    after Backward) keeps its name."""
    name, message = _creator_message(ember, case)
    expected_name, expected = _creator_message(torch, case)
    assert name == expected_name
    assert message == expected
