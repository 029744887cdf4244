"""Functions that take a list of tensors (``cat``, ``stack``, ``hstack`` ... ``linalg.multi_dot``) parse it as
PyTorch's argument parser does: a list or a tuple of Tensors. A Tensor given in its place is PyTorch's TypeError
(ember iterated it along its first dimension: ``torch.cat(h[-2:], dim=-1)`` of a 3-d ``h`` ran, PointerNet's
decoder), and so are a generator, a NumPy array, a range or an element that is not a Tensor."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_error, outcomes

import ember

FUNCTIONS = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
             "linalg.multi_dot"]


def _function(m, name: str):
    for part in name.split("."):
        m = getattr(m, part)
    return m


def _x(m):
    return m.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))


NOT_LISTS = {
    "tensor": lambda m: _x(m),
    "generator": lambda m: (t for t in [_x(m), _x(m)]),
    "int": lambda m: 5,
    "None": lambda m: None,
    "range": lambda m: range(2),
    "ndarray": lambda m: np.ones((2, 3)),
    "deque": lambda m: collections.deque([_x(m), _x(m)]),
}

BAD_ELEMENTS = {
    "int": lambda m: (_x(m), 1),
    "nested list": lambda m: [[_x(m)]],
    "ndarray": lambda m: [_x(m), np.ones((2, 3, 4), dtype=np.float32)],
    "size": lambda m: m.Size([2, 3]),
}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("kind", NOT_LISTS)
def test_what_is_not_a_list_or_tuple_is_refused(name, kind):
    assert_same_error(lambda m: _function(m, name)(NOT_LISTS[kind](m)))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("kind", BAD_ELEMENTS)
def test_an_element_that_is_not_a_tensor_is_refused(name, kind):
    assert_same_error(lambda m: _function(m, name)(BAD_ELEMENTS[kind](m)))


def test_a_tensor_given_with_dim_is_refused():
    # PointerNet: torch.cat(encoder_hidden[0][-2:], dim=-1), where encoder_hidden[0] is a 3-d tensor
    assert_same_error(lambda m: m.cat(_x(m)[-2:], dim=-1))
    assert_same_error(lambda m: m.stack(_x(m), dim=1))


@pytest.mark.parametrize("name", ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                                  "column_stack"])
@pytest.mark.parametrize("empty", [[], ()])
def test_an_empty_list_is_refused_as_pytorch_refuses_it(name, empty):
    (got, _), (want, _) = outcomes(lambda m: _function(m, name)(empty))
    assert isinstance(want, Exception)
    assert type(got) is type(want)
    assert str(got).replace("ember.", "torch.") == str(want)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("container", [list, tuple])
def test_lists_and_tuples_of_tensors_are_taken(name, container):
    def run(m):
        a = m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        b = m.tensor(np.arange(6, 12, dtype=np.float32).reshape((3, 2) if name == "linalg.multi_dot" else (2, 3)))
        return _function(m, name)(container([a, b]))

    assert_close(run(ember), run(torch))


def test_vmap_of_cat_refuses_a_tensor():
    def f(m):
        return m.func.vmap(lambda t: m.cat(t, dim=0))(m.ones(2, 3, 4))

    assert_same_error(f)
