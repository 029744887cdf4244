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
