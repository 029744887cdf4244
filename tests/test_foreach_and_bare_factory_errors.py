"""PyTorch's errors where a ``torch._foreach_*`` op's list of tensors is given a Tensor (or a generator, None), or
its number a tensor of elements; and ``rand()`` / ``randn()`` with no argument at all."""

from __future__ import annotations

import numpy as np
import pytest

from tests.oracle import outcomes


def _t(m):
    return m.ones(3)


CALLS = {
    # the ops of several forms: PyTorch lists them
    "add(T, 1)": lambda m: m._foreach_add(_t(m), 1),
    "add_(T, 1)": lambda m: m._foreach_add_(_t(m), 1),
    "add(T, [T])": lambda m: m._foreach_add(_t(m), [_t(m)]),
    "add(gen, 1)": lambda m: m._foreach_add((t for t in [_t(m)]), 1),
    "add(None, 1)": lambda m: m._foreach_add(None, 1),
    "add([T], gen)": lambda m: m._foreach_add([_t(m)], (t for t in [_t(m)])),
    "add([T], 'a')": lambda m: m._foreach_add([_t(m)], "a"),
    "sub(T, 1)": lambda m: m._foreach_sub(_t(m), 1),
    "mul(T, 2.0)": lambda m: m._foreach_mul(_t(m), 2.0),
    "div_(T, 2.0)": lambda m: m._foreach_div_(_t(m), 2.0),
    "maximum(T, 1.0)": lambda m: m._foreach_maximum(_t(m), 1.0),
    "maximum([T], T)": lambda m: m._foreach_maximum([_t(m)], _t(m)),
    "clamp_min_(T, 0)": lambda m: m._foreach_clamp_min_(_t(m), 0),
    "pow(T, 2)": lambda m: m._foreach_pow(_t(m), 2),
    "pow_(T, 2)": lambda m: m._foreach_pow_(_t(m), 2),
    "lerp(T, T, 0.5)": lambda m: m._foreach_lerp(_t(m), _t(m), 0.5),
    "lerp([T], T, 0.5)": lambda m: m._foreach_lerp([_t(m)], _t(m), 0.5),
    # the ops of one form: which argument
    "neg(T)": lambda m: m._foreach_neg(_t(m)),
    "neg(gen)": lambda m: m._foreach_neg(t for t in [_t(m)]),
    "sqrt_(T)": lambda m: m._foreach_sqrt_(_t(m)),
    "norm(T)": lambda m: m._foreach_norm(_t(m)),
    "zero_(T)": lambda m: m._foreach_zero_(_t(m)),
    "copy_(T, [T])": lambda m: m._foreach_copy_(_t(m), [_t(m)]),
    "copy_([T], T)": lambda m: m._foreach_copy_([_t(m)], _t(m)),
    "addcmul(T, [T], [T])": lambda m: m._foreach_addcmul(_t(m), [_t(m)], [_t(m)]),
    "addcmul([T], [T], T)": lambda m: m._foreach_addcmul([_t(m)], [_t(m)], _t(m)),
    "addcdiv_([T], T, [T])": lambda m: m._foreach_addcdiv_([_t(m)], _t(m), [_t(m)]),
    # a tensor of elements where a number may be (add/mul/div's Tensor form takes a 0-d one)
    "add([T], T)": lambda m: m._foreach_add([_t(m)], _t(m)),
    "mul([T], T)": lambda m: m._foreach_mul([_t(m)], _t(m)),
    # what passes
    "add([T], 0-d)": lambda m: m._foreach_add([_t(m)], m.tensor(2.0)),
    "sub((T,), 0-d)": lambda m: m._foreach_sub((_t(m),), m.tensor(2.0)),
    "add([T], [T], alpha=2)": lambda m: m._foreach_add([_t(m)], [_t(m)], alpha=2),
    "pow(2, [T])": lambda m: m._foreach_pow(2, [_t(m) * 3]),
    # PyTorch's Number base: a bool, a NumPy integer, a 0-d tensor that requires no gradient (one that does, or a 1-d
    # one, is refused)
    "pow(True, [T])": lambda m: m._foreach_pow(True, [_t(m) * 3]),
    "pow(np.int64, [T])": lambda m: m._foreach_pow(np.int64(2), [_t(m) * 3, m.arange(3)]),
    "pow(0-d, [T])": lambda m: m._foreach_pow(m.tensor(2), [_t(m) * 3]),
    "pow(0-d grad, [T])": lambda m: m._foreach_pow(m.tensor(2.0, requires_grad=True), [_t(m) * 3]),
    "pow(1-d, [T])": lambda m: m._foreach_pow(m.tensor([2.0]), [_t(m) * 3]),
    "lerp([T], [T], 0.5)": lambda m: m._foreach_lerp([_t(m)], [_t(m) * 3], 0.5),
    # random factories with no argument at all, or only keywords
    "rand()": lambda m: m.rand(),
    "randn()": lambda m: m.randn(),
    "rand(dtype=)": lambda m: m.rand(dtype=m.float64),
    "randn(requires_grad=True)": lambda m: m.randn(requires_grad=True),
}


def _forms(message: str) -> tuple[str, list[str]]:
    """The first line and the listed forms (PyTorch's "didn't match because ..." lines aside)."""
    lines = message.split("\n")
    return lines[0], [line for line in lines[1:] if line.startswith(" * ")]


@pytest.mark.parametrize("call", list(CALLS))
def test_as_pytorch(call):
    (got, _), (want, _) = outcomes(CALLS[call])
    if isinstance(want, Exception):
        assert type(got).__name__ == type(want).__name__, got
        assert _forms(str(got)) == _forms(str(want))
    else:
        assert not isinstance(got, Exception), got
        assert [t.tolist() for t in got] == [t.tolist() for t in want]
