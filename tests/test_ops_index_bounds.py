"""Indices outside a dimension behave as in PyTorch, never by NumPy's rules.

NumPy wraps -1 to the last element; PyTorch refuses a negative index in gather,
scatter, scatter_add, index_select, index_add and index_copy (and any index past
the end everywhere), and accepts negative ones only in take, take_along_dim,
index_fill, index_put and plain indexing. Each call runs in both libraries on the
same inputs: both fail with the same exception type, or both give the same values.
"""

import warnings

import numpy as np
import pytest
import torch

import ember

OPS = {
    "gather": lambda m, x, i: x.gather(1, i.reshape(1, -1).expand(3, -1)),
    "index_select": lambda m, x, i: x.index_select(1, i),
    "index_select_0": lambda m, x, i: x.T.index_select(0, i),
    "scatter": lambda m, x, i: x.scatter(1, i.reshape(1, -1), m.ones(1, len(i))),
    "scatter_value": lambda m, x, i: x.clone().scatter_(1, i.reshape(1, -1), 2.0),
    "scatter_": lambda m, x, i: x.clone().scatter_(1, i.reshape(1, -1), m.ones(1, len(i))),
    "scatter_add": lambda m, x, i: x.scatter_add(1, i.reshape(1, -1), m.ones(1, len(i))),
    "scatter_add_": lambda m, x, i: x.clone().scatter_add_(1, i.reshape(1, -1), m.ones(1, len(i))),
    "scatter_reduce_add": lambda m, x, i: x.clone().scatter_(1, i.reshape(1, -1), m.ones(1, len(i)), reduce="add"),
    "scatter_reduce_mul": lambda m, x, i: x.clone().scatter_(1, i.reshape(1, -1), m.ones(1, len(i)),
                                                             reduce="multiply"),
    "index_add": lambda m, x, i: x.index_add(1, i, m.ones(3, len(i))),
    "index_add_": lambda m, x, i: x.clone().index_add_(1, i, m.ones(3, len(i))),
    "index_copy": lambda m, x, i: x.index_copy(1, i, m.ones(3, len(i))),
    "index_copy_": lambda m, x, i: x.clone().index_copy_(1, i, m.ones(3, len(i))),
    "index_fill_": lambda m, x, i: x.clone().index_fill_(1, i, 2.0),
    "index_put_": lambda m, x, i: x.clone().index_put_((m.tensor([0]), i), m.tensor(2.0)),
    "take": lambda m, x, i: x.take(i),
    "take_along_dim": lambda m, x, i: m.take_along_dim(x, i.reshape(1, -1), 1),
    "getitem": lambda m, x, i: x[:, i],
    "embedding": lambda m, x, i: m.nn.functional.embedding(i, x.T.contiguous()),
}
INDICES = {"last": [0, -1], "first_negative": [-4, 1], "past_negative": [-5], "end": [4], "far": [0, 10**9],
           "valid": [3, 0, 3]}


def outcome(m, call):
    """call(m)'s values, or the type of the exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch deprecates scatter's reduce= with a tensor src
            return call(m).detach().numpy()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)


def assert_as_in_pytorch(call, what: str) -> None:
    """The same exception type in both libraries, or equal values."""
    expected, got = outcome(torch, call), outcome(ember, call)
    if isinstance(expected, type):
        assert got is expected, f"{what}: ember gave {got}, PyTorch raised {expected.__name__}"
    else:
        assert not isinstance(got, type), f"{what}: ember raised {got.__name__}, PyTorch did not"
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("index", INDICES)
@pytest.mark.parametrize("op", OPS)
def test_indices_out_of_a_dimension_as_in_pytorch(op, index):
    if op == "take_along_dim" and index in ("end", "far", "past_negative"):
        pytest.skip("PyTorch's take_along_dim reads past the dimension unchecked; ember raises an IndexError")
    assert_as_in_pytorch(lambda m: OPS[op](m, m.arange(12.0).reshape(3, 4), m.tensor(INDICES[index])),
                         f"{op}{INDICES[index]}")


def test_messages_name_the_index_and_the_dimension():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        x.gather(1, ember.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.scatter_(1, ember.tensor([[4]]), 1.0)
    with pytest.raises(IndexError, match="index out of range in self.*-1.*dimension 0 with size 3"):
        x.index_select(0, ember.tensor([-1]))
    with pytest.raises(IndexError, match="index_copy_\\(\\): index -1 is out of bounds for dimension 0 with size 3"):
        x.index_copy_(0, ember.tensor([-1]), ember.ones(1, 4))


@pytest.mark.parametrize("index", [(5,), (slice(None), 7), (1, -9)])
def test_plain_indexing_past_the_end_says_dimension_as_pytorch(index):
    for m in (torch, ember):
        x = m.zeros(3, 4)
        with pytest.raises(IndexError) as err:
            x[index]
        with pytest.raises(IndexError) as set_err:
            x[index] = 1.0
        if m is torch:
            theirs, theirs_set = str(err.value), str(set_err.value)
    assert str(err.value) == theirs and str(set_err.value) == theirs_set, (err.value, theirs)


@pytest.mark.parametrize("padding_idx", [-4, -3, 2, 3])
def test_embedding_padding_idx_must_be_a_row(padding_idx):
    def call(m):
        return m.nn.functional.embedding(m.tensor([0, 2]), m.ones(3, 2), padding_idx=padding_idx)

    try:
        expected = call(torch)
    except AssertionError:
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            call(ember)
    else:
        np.testing.assert_array_equal(call(ember).numpy(), expected.numpy())


def test_an_empty_index_is_never_out_of_bounds():
    x = ember.zeros(3, 0)
    assert x.gather(1, ember.zeros(3, 0, dtype=ember.int64)).shape == (3, 0)
    assert x.index_select(1, ember.zeros(0, dtype=ember.int64)).shape == (3, 0)


SHAPES = {
    "gather_index_smaller": lambda m: m.arange(12.0).reshape(3, 4).gather(1, m.tensor([[0, 3]])),
    "gather_index_larger": lambda m: m.arange(12.0).reshape(3, 4).gather(1, m.zeros(4, 1, dtype=m.int64)),
    "gather_3d_smaller": lambda m: m.arange(24.0).reshape(2, 3, 4).gather(2, m.tensor([[[1], [2]]])),
    "scatter_index_smaller": lambda m: m.zeros(3, 4).scatter_(1, m.tensor([[0, 1]]), 1.0),
    "scatter_index_larger": lambda m: m.zeros(3, 4).scatter_(1, m.zeros(4, 1, dtype=m.int64), 1.0),
    "scatter_src_smaller": lambda m: m.zeros(3, 4).scatter(1, m.zeros(3, 2, dtype=m.int64), m.ones(3, 1)),
    "scatter_add_src_smaller": lambda m: m.zeros(3, 4).scatter_add_(1, m.zeros(3, 2, dtype=m.int64), m.ones(3, 1)),
    "scatter_add_src_larger": lambda m: m.zeros(3, 4).scatter_add(1, m.tensor([[0, 1]]), m.ones(3, 4)),
    "index_select_2d_index": lambda m: m.zeros(3).index_select(0, m.zeros(1, 1, dtype=m.int64)),
    "index_add_2d_index": lambda m: m.zeros(3).index_add(0, m.zeros(1, 1, dtype=m.int64), m.ones(1)),
    "index_copy_2d_index": lambda m: m.zeros(3).index_copy(0, m.zeros(1, 1, dtype=m.int64), m.ones(1)),
    "index_fill_2d_index": lambda m: m.zeros(3).index_fill(0, m.zeros(1, 1, dtype=m.int64), 1.0),
    "index_put_accumulate_past_end": lambda m: m.zeros(3).index_put_((m.tensor([3]),), m.tensor(1.0),
                                                                      accumulate=True),
    "index_put_accumulate_negative": lambda m: m.zeros(3).index_put_((m.tensor([-1]),), m.tensor(1.0),
                                                                      accumulate=True),
    "bincount_weights_length": lambda m: m.bincount(m.tensor([0, 1]), weights=m.ones(3)),
}


@pytest.mark.parametrize("case", SHAPES)
def test_index_shapes_as_in_pytorch(case):
    """An index smaller than the input in the other dimensions reads (or writes) that sub-block in PyTorch;
    NumPy would broadcast it (a result of another shape), or broadcast a smaller src."""
    assert_as_in_pytorch(SHAPES[case], case)


def test_gather_of_a_sub_block_has_pytorchs_gradient():
    xs = {m: m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_() for m in (ember, torch)}
    for m, x in xs.items():
        out = x.gather(1, m.tensor([[0, 3, 3], [1, 1, 2]]))
        out.backward(m.arange(6.0, dtype=m.float64).reshape(2, 3))
    np.testing.assert_array_equal(xs[ember].grad.numpy(), xs[torch].grad.numpy())


@pytest.mark.parametrize("index", [0, -1, 2, slice(0, 1), (0,), [0], None, ..., (), True])
def test_indexing_a_zero_dim_tensor_as_in_pytorch(index):
    """Old code's ``loss.data[0]`` gets PyTorch's message pointing at ``.item()``; a slice gets its own."""
    results = []
    for m in (torch, ember):
        try:
            results.append(tuple(m.tensor(3.0)[index].shape))
        except IndexError as err:
            results.append(str(err) if isinstance(index, (int, slice)) else "IndexError")
    assert results[0] == results[1]
