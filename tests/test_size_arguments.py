"""Sizes, dims and repeats given to the shape methods as PyTorch takes them: ints and other integers (NumPy
integers, one-element integer tensors) are accepted; a float, a Decimal, a bool or a string is PyTorch's TypeError,
never truncated to an int."""

from decimal import Decimal

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CALLS = {
    "view": lambda x, *a: x.view(*a),
    "reshape": lambda x, *a: x.reshape(*a),
    "expand": lambda x, *a: x.reshape(1, 24).expand(*a),
    "repeat": lambda x, *a: x.repeat(*a),
    "permute": lambda x, *a: x.reshape(2, 3, 4).permute(*a),
}
ARGS = {
    "view": (2, 3, 4), "reshape": (2, 3, 4), "expand": (2, 24), "repeat": (2, 1), "permute": (2, 0, 1),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", ["float", "str", "numpy int", "tensor int", "list", "Decimal", "bool", "numpy bool"])
def test_size_elements_as_pytorch(call, kind):
    outcomes = []
    for lib in (torch, ember):
        args = list(ARGS[call])
        args[1] = {"float": float(args[1]), "str": str(args[1]), "numpy int": np.int64(args[1]),
                   "tensor int": lib.tensor(args[1]), "list": args[1], "Decimal": Decimal(args[1]),
                   "bool": args[1] == 1, "numpy bool": np.bool_(args[1] == 1)}[kind]
        if kind == "list":
            args = [args]
        try:
            outcomes.append(tuple(CALLS[call](lib.arange(24), *args).shape))
        except TypeError:
            outcomes.append(TypeError)
        except RuntimeError:  # (a bool read as 0 or 1: sizes that do not fit)
            outcomes.append(RuntimeError)
    assert outcomes[1] == outcomes[0]


NO_ARG_METHODS = ["view", "reshape", "permute", "expand", "repeat", "tile", "flip", "new_zeros", "new_ones",
                  "new_empty", "resize_"]


@pytest.mark.parametrize("name", NO_ARG_METHODS)
@pytest.mark.parametrize("shape", [(4, 4), (1,)], ids=["4x4", "one element"])
def test_no_sizes_is_pytorchs_type_error(name, shape):
    """``x.view()`` and its kin without any sizes or dims: PyTorch's TypeError, naming the argument (a
    one-element tensor, whose element count an empty shape matches, included); an empty tuple is a 0-d shape."""
    messages = []
    for lib in (torch, ember):
        x = lib.ones(shape)
        with pytest.raises(TypeError) as info:
            getattr(x, name)()
        messages.append(str(info.value).split("\n")[0])
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name", ["reshape", "permute"])
def test_no_sizes_to_the_function_is_a_type_error(name):
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="missing 1 required positional"):
            getattr(lib, name)(lib.ones(4, 4))


@pytest.mark.parametrize("name", ["view", "reshape", "permute", "expand", "repeat", "tile", "new_zeros", "resize_"])
def test_empty_tuple_is_a_0d_shape(name):
    out = [getattr(lib.tensor(1.0), name)(()) for lib in (torch, ember)]
    assert tuple(out[1].shape) == tuple(out[0].shape) == ()


ONE_SIZE_OR_DIM = {
    "view": lambda m, x, v: x.view(v), "reshape": lambda m, x, v: x.reshape(v), "zeros": lambda m, x, v: m.zeros(v),
    "ones": lambda m, x, v: m.ones((v, 2)), "empty": lambda m, x, v: m.empty(2, v), "full": lambda m, x, v: m.full((v,), 1.0),
    "new_zeros": lambda m, x, v: x.new_zeros(v), "sum": lambda m, x, v: x.reshape(2, 3).sum(v),
    "softmax": lambda m, x, v: x.reshape(2, 3).softmax(v), "squeeze": lambda m, x, v: x.reshape(1, 6).squeeze(v),
    "transpose": lambda m, x, v: x.reshape(2, 3).transpose(v, 0), "cumsum": lambda m, x, v: x.cumsum(v),
    "movedim": lambda m, x, v: x.reshape(2, 3).movedim(v, 1), "movedim_to": lambda m, x, v: m.movedim(x, 0, v),
    "tril": lambda m, x, v: x.reshape(2, 3).tril(v), "triu_": lambda m, x, v: x.reshape(2, 3).triu_(v),
    "diagonal": lambda m, x, v: m.diagonal(x.reshape(2, 3), v), "chunk": lambda m, x, v: x.chunk(v)[0],
    "narrow_start": lambda m, x, v: x.narrow(0, v, 1), "narrow_length": lambda m, x, v: x.narrow(0, 0, v),
    "unflatten": lambda m, x, v: m.unflatten(x, 0, (v, -1)),
}


@pytest.mark.parametrize("call", sorted(ONE_SIZE_OR_DIM))
@pytest.mark.parametrize("value", [6, 0, np.int64(0), Decimal(6), Decimal(0), 6.0, 0.0, True, False, np.bool_(False)],
                         ids=repr)
def test_one_size_or_dim_as_pytorch(call, value):
    """``x.view(Decimal(6))`` is PyTorch's TypeError (ember used to return x as it was), ``x.view(np.int64(6))``
    its view; a float, or a bool as a dim or a first size, is refused (PyTorch's parser reads a bool after the first
    size of a list as 0 or 1, a NumPy bool nowhere)."""
    outcomes = []
    for m in (torch, ember):
        try:
            outcomes.append(tuple(ONE_SIZE_OR_DIM[call](m, m.arange(6.0), value).shape))
        except (TypeError, RuntimeError, IndexError) as e:
            outcomes.append(next(c for c in type(e).__mro__ if c.__module__ == "builtins"))
    assert outcomes[1] == outcomes[0]
