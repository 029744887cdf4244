"""``torch.tensor``/``as_tensor`` of objects that are no number, NumPy scalar or array, tensor or sequence: PyTorch
infers a dtype only from those, so an object NumPy would convert through ``__array__`` or ``__array_interface__``
(a PIL image too) is "Could not infer dtype of ..."; with a dtype given, each such object is read as that kind of
number (``__float__``, ``__index__``) or refused with Python's TypeError. NumPy scalars and 0-d arrays convert,
but a 0-d array first in a list is read as a sequence ("len() of unsized object")."""

import decimal
import fractions

import numpy as np
import pytest
import torch

import ember


class WithArray:
    def __array__(self, dtype=None, copy=None):
        return np.arange(3.0)


class WithInterface:
    def __init__(self):
        self.a = np.arange(3.0)
        self.__array_interface__ = self.a.__array_interface__


class Number:
    def __float__(self):
        return 1.5

    def __index__(self):
        return 2


class Sequence:  # (has __array__, but a sequence: read element by element, as PyTorch)
    def __array__(self, dtype=None, copy=None):
        return np.zeros(3)

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return float(i) * 10


OBJECTS = {
    "__array__": WithArray, "__array_interface__": WithInterface, "__float__ and __index__": Number,
    "Fraction": lambda: fractions.Fraction(1, 2), "Decimal": lambda: decimal.Decimal("1.5"), "None": lambda: None,
    "list of __array__": lambda: [WithArray()], "number, then __array__": lambda: [1.0, WithArray()],
    "list of __float__": lambda: [Number(), Number()], "nested": lambda: [[Number()], [2.0]],
    "sequence with __array__": Sequence, "bytearray": lambda: bytearray(b"ab"), "numpy str": lambda: np.str_("a"),
    "numpy float32": lambda: np.float32(1.5), "numpy int64": lambda: np.int64(3), "numpy bool": lambda: np.bool_(1),
    "numpy complex64": lambda: np.complex64(1 + 2j), "0-d array": lambda: np.array(2.5),
    "0-d float32 array": lambda: np.array(2.5, dtype=np.float32), "list of 0-d arrays": lambda: [np.array(3.0)],
    "0-d array nested first": lambda: [[np.array(3)], [np.array(4)]], "0-d array after a number": lambda: [1.0, np.array(2.0)],
    "list of numpy scalars": lambda: [np.float32(1.5), np.float32(2)],
    "numpy float64": lambda: np.float64(2.5), "list of numpy float64": lambda: [np.float64(1.5), np.float64(-2.5)],
    "numpy complex128": lambda: np.complex128(1.5), "list of numpy int32": lambda: [np.int32(3)],
    "complex": lambda: 1 + 2j, "list with a complex": lambda: [1.0, 2j], "list of numpy complex128": lambda: [np.complex128(1)],
}
DTYPES = [None, "float64", "int64", "bool", "complex64"]


def _outcome(m, make, dtype, factory="tensor"):
    kwargs = {} if dtype is None else {"dtype": getattr(m, dtype)}
    try:
        r = getattr(m, factory)(make(), **kwargs)
    except (RuntimeError, TypeError, ValueError) as e:
        return type(e).__name__, str(e)
    return r.tolist(), str(r.dtype).split(".")[-1]


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy.ndarrays")
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # (NumPy's, in both: float() of a complex64)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", OBJECTS)
def test_objects_as_torch(name, dtype):
    assert _outcome(ember, OBJECTS[name], dtype) == _outcome(torch, OBJECTS[name], dtype)


@pytest.mark.parametrize("name", ["__array__", "__array_interface__", "list of __float__", "0-d array"])
def test_as_tensor_as_torch(name):
    for dtype in (None, "float64"):
        assert _outcome(ember, OBJECTS[name], dtype, "as_tensor") == _outcome(torch, OBJECTS[name], dtype,
                                                                                "as_tensor")


def test_pil_image_refused_as_torch():
    image = pytest.importorskip("PIL.Image")
    for mode, color in (("RGB", (1, 2, 3)), ("L", 7)):
        picture = image.new(mode, (2, 3), color)
        for factory in ("tensor", "as_tensor"):
            want = _outcome(torch, lambda p=picture: p, None, factory)
            assert want[0] == "RuntimeError" and "Could not infer dtype of Image" in want[1]
            assert _outcome(ember, lambda p=picture: p, None, factory) == want
        # (through NumPy, as PyTorch's users convert one)
        assert ember.tensor(np.asarray(picture)).tolist() == torch.tensor(np.asarray(picture)).tolist()
