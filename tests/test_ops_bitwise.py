"""Bitwise ops and shifts (`&` `|` `^` `~` `<<` `>>`, their functions and in-place forms) against PyTorch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INTS = [np.array([0, 1, 2, -8, 127, -128, 5]), np.array([3, 0, 1, 2, 7, 1, 63])]


def _pair(dtype):
    a, b = (x.astype(dtype) if dtype != "bool" else (x % 2).astype(bool) for x in INTS)
    return a, b


def _same(e, t):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


SHIFT_COUNTS = np.array([0, 1, 7, 8, 63, 64, -1])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "int16"])
@pytest.mark.parametrize("op", ["__lshift__", "__rshift__"])
def test_shifts_match_pytorch_including_out_of_range_counts(dtype, op):
    values = np.array([1, 2, -8, 127, -128, 5, 100]).astype(dtype)
    counts = SHIFT_COUNTS.astype("int64")
    e = getattr(ember.tensor(values), op)(ember.tensor(counts))
    t = getattr(torch.tensor(values), op)(torch.tensor(counts))
    _same(e, t)
    for scalar in (0, 1, 3, 64, 200, -1, -300):  # Python counts outside the dtype's range too
        _same(getattr(ember.tensor(values), op)(scalar), getattr(torch.tensor(values), op)(scalar))


def test_shift_functions_and_reflected_forms():
    a = np.array([1, 2, 3, 9])
    _same(ember.bitwise_left_shift(ember.tensor(a), 2), torch.bitwise_left_shift(torch.tensor(a), 2))
    _same(ember.bitwise_right_shift(ember.tensor(a), 1), torch.bitwise_right_shift(torch.tensor(a), 1))
    _same(1 << ember.tensor(a), 1 << torch.tensor(a))
    _same(256 >> ember.tensor(a), 256 >> torch.tensor(a))
    _same(ember.tensor(a).bitwise_left_shift(1), torch.tensor(a).bitwise_left_shift(1))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
@pytest.mark.parametrize("op", ["__and__", "__or__", "__xor__"])
def test_bitwise_binary_and_reflected(dtype, op):
    a, b = _pair(dtype)
    _same(getattr(ember.tensor(a), op)(ember.tensor(b)), getattr(torch.tensor(a), op)(torch.tensor(b)))
    scalar = True if dtype == "bool" else 6
    reflected = op.replace("__", "__r", 1)
    _same(getattr(ember.tensor(a), reflected)(scalar), getattr(torch.tensor(a), reflected)(scalar))


@pytest.mark.parametrize("statement", ["x &= y", "x |= y", "x ^= y", "x <<= 2", "x >>= 1",
                                       "x.bitwise_and_(y)", "x.bitwise_or_(y)", "x.bitwise_xor_(y)",
                                       "x.bitwise_left_shift_(y)", "x.bitwise_right_shift_(1)"])
def test_inplace_forms_write_through_views(statement):
    """`x &= y` on a view changes the base tensor (PyTorch writes in place; rebinding would leave it)."""
    results = []
    for lib in (ember, torch):
        base = lib.tensor(INTS[0].copy())
        x, y = base[1:5], lib.tensor(INTS[1][1:5].copy())
        exec(statement, {}, {"x": x, "y": y})
        results.append(base)
    _same(*results)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1.5]) << 1,
    lambda lib: lib.tensor([4]) >> lib.tensor([1.0]),
    lambda lib: lib.tensor([True]) << lib.tensor([True]),
    lambda lib: lib.tensor([1]) << 1.5,
    lambda lib: lib.tensor([1.0], dtype=lib.float64) << 1.5,  # (the promoted dtype: Double)
    lambda lib: lib.tensor([1]) << 1j,
    lambda lib: lib.tensor([1]) >> 1j,
    lambda lib: lib.bitwise_left_shift(lib.tensor([1]), 1j),
    lambda lib: lib.bitwise_right_shift(lib.tensor([1]), 2.5),
    lambda lib: lib.tensor([1]) << np.float32(1.0),
])
def test_shifts_of_non_integers_raise_pytorchs_error(call):
    with pytest.raises(NotImplementedError) as expected:
        call(torch)
    with pytest.raises(NotImplementedError) as got:
        call(ember)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int8"])
def test_inplace_integer_results_narrow_into_the_tensor(dtype):
    """PyTorch writes an int64 result into a narrower integer tensor (x &= long_tensor on uint8 x)."""
    results = []
    for lib in (ember, torch):
        x = lib.tensor([1, 2, 100], dtype=getattr(lib, dtype))
        x &= lib.tensor([3, 300, 1000])
        x += lib.tensor([1, 1, 1])
        results.append(x)
    _same(*results)


@pytest.mark.parametrize("statement", ["x |= y_int", "x += y_int", "i += y_float", "i.mul_(y_complex)",
                                       "f.add_(y_complex)", "i <<= 1j", "i.bitwise_left_shift_(1.5)",
                                       "i.bitwise_and_(1.5)", "i ^= y_float", "x &= 2", "i >>= 1.5"])
def test_inplace_results_pytorch_refuses_to_cast_back(statement):
    messages = []
    for lib in (torch, ember):
        names = {"x": lib.tensor([True, False]), "i": lib.tensor([1, 2]), "f": lib.tensor([1.0, 2.0]),
                 "y_int": lib.tensor([3, 4]), "y_float": lib.tensor([0.5, 1.5]),
                 "y_complex": lib.tensor([1j, 2j])}
        with pytest.raises(RuntimeError) as caught:
            exec(statement, {}, names)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
