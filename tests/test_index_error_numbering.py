"""An index PyTorch refuses gets its error: an int names its position in the index (``...`` one position), an
index tensor its place among the index tensors (a k-dimensional mask counting k), a mask of the wrong shape the
shapes; too many indices, its message. NumPy's axis numbers differ from all of these."""

import pytest

from tests.oracle import assert_same_error


def _z(m):
    return m.zeros(3, 4, 5)


def _mask(m, *shape):
    return m.ones(*shape, dtype=m.bool)


INDICES = {
    "all_tensors": lambda m: ([0], [0], [7]),
    "second_dim": lambda m: (slice(None), [9]),
    "third_dim_tensor": lambda m: (slice(None), slice(None), m.tensor([9])),
    "after_an_int": lambda m: (0, slice(None), [9]),
    "first": lambda m: ([5],),
    "negative": lambda m: ([-5],),
    "two_second_bad": lambda m: ([0], [9]),
    "two_first_bad": lambda m: ([9], [0]),
    "separated": lambda m: ([0], slice(None), [9]),
    "after_none": lambda m: (None, slice(None), [9]),
    "after_ellipsis": lambda m: (Ellipsis, [9]),
    "two_dim_index": lambda m: (slice(None), [[0, 9]]),
    "int": lambda m: (slice(None), 9),
    "int_after_int": lambda m: (0, 9),
    "int_after_none": lambda m: (None, 9),
    "int_after_ellipsis": lambda m: (Ellipsis, 9),
    "int_between": lambda m: (0, Ellipsis, 9),
    "int_beside_tensor": lambda m: ([0], 9),
    "zero_d_tensor": lambda m: (slice(None), m.tensor(9)),
    "after_a_mask": lambda m: (_mask(m, 3), [9]),
    "after_a_2d_mask": lambda m: (_mask(m, 3, 4), [9]),
    "mask_shape": lambda m: (_mask(m, 4),),
    "mask_second_dim": lambda m: (slice(None), _mask(m, 5)),
    "mask_2d_shape": lambda m: (_mask(m, 3, 5),),
    "mask_after_int": lambda m: (0, _mask(m, 5)),
    "mask_after_tensor": lambda m: ([0], m.tensor([True, False, True])),
    "too_many": lambda m: (0, 0, 0, 0),
    "too_many_tensors": lambda m: ([0], [0], [0], [0]),
    "too_many_with_ellipsis": lambda m: (Ellipsis, 0, 0, 0, 0),
}


@pytest.mark.parametrize("index", INDICES)
def test_reading_a_refused_index_is_pytorchs_error(index):
    assert_same_error(lambda m: _z(m)[INDICES[index](m)])


@pytest.mark.parametrize("index", ["all_tensors", "second_dim", "after_an_int", "separated", "int_after_none",
                                   "mask_shape", "mask_after_int", "too_many"])
def test_writing_a_refused_index_is_pytorchs_error(index):
    assert_same_error(lambda m: _z(m).__setitem__(INDICES[index](m), 1.0))


def test_index_put_and_a_recorded_read_number_as_plain_indexing():
    assert_same_error(lambda m: _z(m).index_put((m.tensor([0]), m.tensor([9])), m.tensor(1.0)))
    assert_same_error(lambda m: m.zeros(3, 4, requires_grad=True)[:, [9]])
