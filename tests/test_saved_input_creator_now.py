"""The error for a saved input changed in place names the tensor's creator now, as PyTorch's (which unpacks the saved
tensor and asks its grad_fn): ``y * y`` saved ``y``, then ``y.add_(1)`` is "output 0 of Add", a tensor that needed no
gradient and took one in place is named after that op, a base changed through its view after ``CopySlices``; a
saved output keeps naming the node that saved it, and a leaf changed under no_grad names none."""

import pytest
import torch

import ember


def _changed_after_saved(lib, change):
    w = lib.ones(3, requires_grad=True)
    y = w * 2
    z = y * y
    change(lib, y, w)
    return z


CASES = {
    "add_": lambda lib: _changed_after_saved(lib, lambda lib, y, w: y.add_(1)),
    "mul_tensor": lambda lib: _changed_after_saved(lib, lambda lib, y, w: y.mul_(w)),
    "twice": lambda lib: _changed_after_saved(lib, lambda lib, y, w: (y.add_(1), y.exp_())),
    "setitem": lambda lib: _changed_after_saved(lib, lambda lib, y, w: y.__setitem__(0, 5.0)),
    "copy_": lambda lib: _changed_after_saved(lib, lambda lib, y, w: y.copy_(w * 3)),
    "through_a_view": lambda lib: _changed_after_saved(lib, lambda lib, y, w: y[0:2].add_(1)),
    "under_no_grad": lambda lib: _changed_after_saved(lib, _add_untracked),
}


def _add_untracked(lib, y, w):
    with lib.no_grad():  # (no new history: its creator stays Mul)
        y.add_(1)


def _no_grad_then(lib):
    x = lib.ones(3)
    w = lib.ones(3, requires_grad=True)
    z = w * x
    x.add_(w)  # (x takes a history: Add)
    return z


def _saved_output(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    return y


def _leaf(lib):
    w = lib.ones(3, requires_grad=True)
    z = w * w
    with lib.no_grad():
        w.add_(1)
    return z


CASES.update({"gains_a_history": _no_grad_then, "saved_output": _saved_output, "leaf": _leaf})


def _message(lib, make) -> str:
    z = make(lib)
    with pytest.raises(RuntimeError) as e:
        z.sum().backward()
    return str(e.value).split(" Hint:")[0]


@pytest.mark.parametrize("case", list(CASES))
def test_the_op_named_is_pytorchs(case):
    theirs = _message(torch, CASES[case])
    assert "modified by an inplace operation" in theirs
    assert _message(ember, CASES[case]) == theirs
