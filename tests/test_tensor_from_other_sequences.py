"""Tensor constructors read a sequence that is no list or tuple (a pandas Series, a DataFrame, a range, a deque)
as PyTorch does: the shape from ``len`` and ``x[0]`` (a Series indexes by label), the dtype from ``x[i]`` (a
Series of float64 numbers gives float64 NumPy scalars), the values iterated where a dtype is given. pandas is not
a test dependency: ``LabelSeries`` and ``LabelFrame`` behave as pandas 3's Series and DataFrame do here (label
lookup, iteration of Python numbers, of column labels)."""

import array
import collections

import numpy as np
import pytest
import torch

import ember


class LabelSeries:
    """A Series: ``s[label]`` a NumPy scalar (KeyError for a missing label), iteration Python numbers."""

    def __init__(self, values, labels=None):
        self.values = np.asarray(values)
        self.labels = list(range(len(self.values))) if labels is None else list(labels)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, label):
        return self.values[self.labels.index(label)] if label in self.labels else self._missing(label)

    def _missing(self, label):
        raise KeyError(label)

    def __iter__(self):
        return iter(self.values.tolist())

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


class LabelFrame:
    """A DataFrame: ``len`` its rows, ``df[label]`` a column, iteration its column labels."""

    def __init__(self, columns):
        self.columns = columns

    def __len__(self):
        return len(next(iter(self.columns.values())))

    def __getitem__(self, label):
        return self.columns[label]

    def __iter__(self):
        return iter(self.columns)

    def __array__(self, dtype=None, copy=None):
        return np.stack([c.values for c in self.columns.values()], 1)


def both(make):
    """``make(m)`` under torch and ember: (value or exception) for each."""
    out = []
    for m in (torch, ember):
        try:
            out.append(make(m))
        except Exception as e:  # noqa: BLE001 - the outcome compared
            out.append(e)
    return out


def assert_same_tensor(want, got):
    assert not isinstance(want, Exception), want
    assert not isinstance(got, Exception), got
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    assert got.tolist() == want.tolist()


SERIES = [np.array([1.5, -2.25, 3.0]), np.array([1, 2, 3], np.int32), np.array([True, False]),
          np.array([4, 5], np.int64), np.array([0.5, 1.5], np.float32)]


@pytest.mark.parametrize("values", SERIES, ids=lambda v: str(v.dtype))
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_a_series_keeps_its_numpy_dtype(values, factory):
    # a float64 column gave float32 (read as an array of Python floats); PyTorch keeps each NumPy scalar's dtype
    want, got = both(lambda m: getattr(m, factory)(LabelSeries(values)))
    assert_same_tensor(want, got)
    assert str(want.dtype) == f"torch.{values.dtype}"


def test_a_series_with_a_dtype_stores_its_iterated_values():
    want, got = both(lambda m: m.tensor(LabelSeries([1.5, 2.5]), dtype=m.float16))
    assert_same_tensor(want, got)


def test_a_list_of_series_is_read_element_by_element():
    want, got = both(lambda m: m.tensor([LabelSeries([1.0, 2.0]), LabelSeries([3.0, 4.0])]))
    assert_same_tensor(want, got)
    assert want.dtype == torch.float64 and got.dtype == ember.float64


def test_a_series_of_lists_is_nested():
    s = LabelSeries(np.empty(2, object))
    s.values[0], s.values[1] = [1, 2], [3, 4]
    want, got = both(lambda m: m.tensor(s))
    assert_same_tensor(want, got)


@pytest.mark.parametrize("name", ["Tensor", "FloatTensor", "LongTensor", "DoubleTensor"])
def test_legacy_constructors_read_a_series(name):
    # ember refused it ("data must be a sequence"): PyTorch's legacy constructors take any sequence
    want, got = both(lambda m: getattr(m, name)(LabelSeries([1.0, 2.0, 7.0])))
    assert_same_tensor(want, got)


@pytest.mark.parametrize("make", [lambda m: m.tensor(LabelSeries([1.0, 2.0], ["a", "b"])),
                                  lambda m: m.tensor(LabelSeries([1.0, 2.0], [5, 3]), dtype=m.float32),
                                  lambda m: m.as_tensor(LabelSeries([1.0, 2.0], ["a", "b"])),
                                  lambda m: m.Tensor(LabelSeries([1.0, 2.0], ["x", "y"])),
                                  lambda m: m.tensor(LabelFrame({"a": LabelSeries([1.0, 2.0]),
                                                                 "b": LabelSeries([3.0, 4.0])}))],
                         ids=["str-labels", "labels-without-0", "as_tensor", "legacy", "frame"])
def test_a_series_without_label_0_has_no_shape_as_in_pytorch(make):
    # ember read it through NumPy (its values, whatever the labels); PyTorch looks up x[0] for the shape
    want, got = both(make)
    assert isinstance(want, ValueError) and isinstance(got, ValueError)
    assert str(got) == str(want)
    assert "could not determine the shape of object type" in str(got)


class LabelsOnlyAt0(LabelSeries):
    """x[0] found, x[1] a KeyError; iteration finds all (a Series whose labels are 0 and 7)."""

    def __init__(self, iterated):
        super().__init__([1.5, 2.5], [0, 7])
        self.iterated = iterated

    def __iter__(self):
        return iter(self.iterated)


def test_inference_indexes_each_element_a_given_dtype_iterates():
    want, got = both(lambda m: m.tensor(LabelsOnlyAt0([1.0, 2.0])))
    assert isinstance(want, KeyError) and isinstance(got, KeyError)
    want, got = both(lambda m: m.tensor(LabelsOnlyAt0([1.0, 2.0]), dtype=m.float32))
    assert_same_tensor(want, got)


def test_an_iteration_longer_than_the_length_is_pytorchs_error():
    want, got = both(lambda m: m.tensor(LabelsOnlyAt0([1.0, 2.0, 3.0]), dtype=m.float32))
    assert isinstance(want, ValueError) and isinstance(got, ValueError)
    assert str(got) == str(want) == "expected sequence of length 2 at dim 0 (got 3)"


@pytest.mark.parametrize("make", [lambda: range(4), lambda: collections.deque([1, 2]),
                                  lambda: array.array("d", [1.0, 2.5]), lambda: array.array("i", [3, 4])],
                         ids=["range", "deque", "array-d", "array-i"])
def test_other_builtin_sequences(make):
    want, got = both(lambda m: m.tensor(make()))
    assert_same_tensor(want, got)
