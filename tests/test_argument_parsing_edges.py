"""Arguments at the edges of PyTorch's parser, against PyTorch: a NumPy array for ``roll``'s shifts (a 0-d one is
its parser's RuntimeError, a 1-d one its TypeError), for ``resize_``'s sizes (a 0-d one read as its int), a 0-d
bool tensor's ``kthvalue`` (its own value, before the kernel's dtype check), and ``index_put``/``index_put_``
indices that hold anything but tensors (a slice, None, an int, Ellipsis: its TypeError), the random in-place
methods' numbers given as tensors."""

import numpy as np
import pytest
import torch

import ember


def _outcome(lib, fn):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type, and the message where PyTorch's is not an internal assert)
        return (isinstance(e, TypeError) and "TypeError" or isinstance(e, RuntimeError) and "RuntimeError"
                or type(e).__name__), str(e) if "INTERNAL ASSERT" not in str(e) else None
    return "ok", [t.tolist() for t in out] if isinstance(out, tuple) else (out.tolist(), tuple(out.shape))


def _seeded(lib):
    lib.manual_seed(0)
    return lib


def _same(fn):
    got, want = _outcome(ember, fn), _outcome(torch, fn)
    if want[1] is None:  # (PyTorch's internal assert: its type)
        got = got[0], None
    assert got == want


CASES = {
    "roll 0-d array": lambda m: m.roll(m.arange(4), np.array(1)),
    "roll method 0-d array": lambda m: m.arange(4).roll(np.array(1)),
    "roll 1-d array": lambda m: m.roll(m.arange(4), np.array([1])),
    "roll method 1-d array": lambda m: m.arange(4).roll(np.array([1])),
    "roll int": lambda m: m.roll(m.arange(4), 1),
    "resize_ 0-d array": lambda m: m.arange(4.0).resize_(np.array(2)),
    "resize_ two 0-d arrays": lambda m: m.arange(4.0).resize_(np.array(2), np.array(2)),
    "resize_ 1-d array": lambda m: m.arange(4.0).resize_(np.array([2])),
    "resize_ int and 1-d array": lambda m: m.arange(4.0).resize_(2, np.array([2])),
    "kthvalue 0-d bool": lambda m: m.tensor(True).kthvalue(1),
    "kthvalue 0-d bool dim": lambda m: m.kthvalue(m.tensor(False), 1, 0, True),
    "kthvalue 1-d bool": lambda m: m.tensor([True]).kthvalue(1),
    "kthvalue 0-d bool k=2": lambda m: m.tensor(True).kthvalue(2),
    "index_put_ slice": lambda m: m.zeros(3, 3).index_put_((slice(None), m.tensor([0])), m.tensor(1.0)),
    "index_put_ None": lambda m: m.zeros(3, 3).index_put_((None, m.tensor([0])), m.tensor(1.0)),
    "index_put_ later slice": lambda m: m.zeros(3, 3).index_put_((m.tensor([0]), slice(None)), m.tensor(1.0)),
    "index_put_ int": lambda m: m.zeros(3, 3).index_put_([m.tensor([0]), 1], m.tensor(1.0)),
    "index_put_ ellipsis": lambda m: m.zeros(3).index_put_((Ellipsis,), m.tensor(1.0)),
    "index_put slice": lambda m: m.zeros(3).index_put((slice(None),), m.tensor(1.0)),
    "index_put_ a tensor": lambda m: m.zeros(3).index_put_(m.tensor([0]), m.tensor(1.0)),
    "index_put_ tensors": lambda m: m.zeros(3, 3).index_put_((m.tensor([0, 2]), m.tensor([1, 1])), m.tensor(5.0)),
    # the random in-place methods given tensors for their numbers: a 0-d one is its number (the same draws), any
    # other PyTorch's TypeError naming the argument as PyTorch does (uniform_'s ``from`` and ``to``)
    "uniform_ 0-d tensors": lambda m: _seeded(m).empty(4).uniform_(m.tensor(-1.0), m.tensor(2.0)),
    "uniform_ two elements": lambda m: m.empty(3).uniform_(m.tensor([0.0, 1.0]), m.tensor(2.0)),
    "uniform_ 1-d to": lambda m: m.empty(3).uniform_(0.0, m.tensor([2.0])),
    "uniform_ to= 1-d": lambda m: m.empty(3).uniform_(to=m.tensor([2.0])),
    "normal_ 0-d tensors": lambda m: _seeded(m).empty(4).normal_(m.tensor(1.0), m.tensor(2.0)),
    "normal_ two elements": lambda m: m.empty(3).normal_(m.tensor([0.0, 1.0])),
    "cauchy_ 0-d tensors": lambda m: _seeded(m).empty(4).cauchy_(m.tensor(1.0), m.tensor(2.0)),
    "cauchy_ two elements": lambda m: m.empty(3).cauchy_(m.tensor(0.0), m.tensor([1.0, 2.0])),
    "log_normal_ two elements": lambda m: m.empty(3).log_normal_(m.tensor([0.0, 1.0])),
    "exponential_ 0-d tensor": lambda m: _seeded(m).empty(4).exponential_(m.tensor(2.0)),
    "exponential_ two elements": lambda m: m.empty(3).exponential_(m.tensor([1.0, 2.0])),
    "geometric_ 0-d tensor": lambda m: _seeded(m).empty(4).geometric_(m.tensor(0.25)),
    "geometric_ two elements": lambda m: m.empty(3).geometric_(m.tensor([0.5, 0.2])),
    "random_ 0-d tensors": lambda m: _seeded(m).empty(4).random_(m.tensor(2), m.tensor(9)),
    # the function torch.index_put: its indices are argument 1, and tensors only as the methods'
    "function index_put slice": lambda m: m.index_put(m.zeros(5), (slice(0, 2),), m.tensor(1.0)),
    "function index_put later int": lambda m: m.index_put(m.zeros(3, 3), [m.tensor([0]), 1], m.tensor(1.0)),
    "function index_put None": lambda m: m.index_put(m.zeros(3), (None,), m.tensor(1.0)),
    "function index_put a tensor": lambda m: m.index_put(m.zeros(3), m.tensor([0]), m.tensor(1.0)),
    "function index_put tensors": lambda m: m.index_put(m.zeros(3, 3), [m.tensor([0, 2]), m.tensor([1, 1])],
                                                        m.tensor(5.0), accumulate=True),
}


@pytest.mark.parametrize("case", CASES)
def test_argument_edges_are_pytorchs(case):
    _same(CASES[case])
