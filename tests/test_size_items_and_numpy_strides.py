"""``torch.Size``'s items (integers kept as they are, an integer tensor read as its int; a float or a float tensor is
its TypeError), and the strides of a tensor made from an empty NumPy array (NumPy's own, as PyTorch keeps
them: ``np.empty((0, 3))`` has (0, 0))."""

import numpy as np
import pytest
import torch

import ember
from tests.oracle import outcomes

SIZES = {
    "float": lambda m: m.Size([2.0]),
    "numpy_int_and_bool": lambda m: m.Size([np.int64(2), True]),
    "str": lambda m: m.Size(["a"]),
    "int_tensor": lambda m: m.Size([m.tensor(3)]),
    "one_element_tensor": lambda m: m.Size([m.tensor([3])]),
    "float_tensor": lambda m: m.Size([m.tensor(2.0)]),
    "numpy_float": lambda m: m.Size([np.float64(2)]),
    "none": lambda m: m.Size((2, None)),
    "int": lambda m: m.Size(3),
    "negative": lambda m: m.Size([-1]),
    "past_int64": lambda m: m.Size([2**70]),
    "empty": lambda m: m.Size(),
    "slice": lambda m: m.Size([2, 3, 4])[1:],
    "broadcast_shapes": lambda m: m.broadcast_shapes((2, 1.5)),
}


def _shown(outcome):
    value, _ = outcome
    if isinstance(value, Exception):
        return type(value).__name__, str(value).replace("ember.", "torch.")
    assert type(value).__name__ == "Size"
    return tuple(value), [type(n) for n in value]


@pytest.mark.parametrize("name", SIZES)
def test_size_reads_its_items_as_pytorch(name):
    got, want = outcomes(SIZES[name])
    assert _shown(got) == _shown(want)


def test_a_tensors_shape_is_a_size():
    assert ember.zeros(2, 3).shape == ember.Size([2, 3]) and type(ember.zeros(2).size()) is ember.Size


ARRAYS = {
    "rows": lambda: np.empty((0, 3)),
    "middle": lambda: np.empty((3, 0, 2)),
    "one_dim": lambda: np.empty((0,)),
    "fortran": lambda: np.empty((4, 0), order="F"),
    "sliced": lambda: np.empty((4, 5))[:, :0],
    "four_dims": lambda: np.empty((2, 0, 3, 1), dtype=np.float32),
}
MAKERS = {
    "from_numpy": lambda m, a: m.from_numpy(a),
    "tensor": lambda m, a: m.tensor(a),
    "tensor_float32": lambda m, a: m.tensor(a, dtype=m.float32),
    "as_tensor": lambda m, a: m.as_tensor(a),
    "as_tensor_float32": lambda m, a: m.as_tensor(a, dtype=m.float32),
    "asarray": lambda m, a: m.asarray(a),
    "asarray_copy": lambda m, a: m.asarray(a, copy=True),
}


@pytest.mark.parametrize("array", ARRAYS)
@pytest.mark.parametrize("maker", MAKERS)
def test_an_empty_numpy_arrays_tensor_keeps_its_strides(maker, array):
    got, want = (MAKERS[maker](m, ARRAYS[array]()) for m in (ember, torch))
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.is_contiguous() == want.is_contiguous()
    assert (got + 1).stride() == (want + 1).stride()
