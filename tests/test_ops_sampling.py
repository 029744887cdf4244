"""multinomial and bernoulli: the distributions PyTorch draws from (not its random stream), shapes, dtypes, errors."""

import warnings

import numpy as np
import pytest
import torch
from test_data_samplers import raises_like_torch

import ember

W = [1.0, 2.0, 3.0, 4.0]
N = 40000
TOL = 0.012  # about 5 standard deviations of a frequency estimated from N draws


def freqs(samples, n):
    return np.bincount(np.asarray(samples).reshape(-1), minlength=n) / np.asarray(samples).size


def test_with_replacement_frequencies_follow_weights():
    ember.manual_seed(0)
    s = ember.multinomial(ember.tensor(W), N, replacement=True)
    assert s.shape == (N,) and s.dtype == ember.int64
    np.testing.assert_allclose(freqs(s.numpy(), 4), np.array(W) / sum(W), atol=TOL)


def test_rows_are_separate_distributions():
    ember.manual_seed(1)
    probs = ember.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.1, 0.3, 0.6]], dtype=ember.float64)
    s = probs.multinomial(N, replacement=True).numpy()
    assert s.shape == (3, N)
    assert (s[0] == 1).all()
    assert not (s[1] == 1).any()
    np.testing.assert_allclose(freqs(s[1], 3), [0.5, 0, 0.5], atol=TOL)
    np.testing.assert_allclose(freqs(s[2], 3), [0.1, 0.3, 0.6], atol=TOL)


def test_without_replacement_is_sequential_sampling():
    """Without replacement: no repeats in a row; P(first = i) = p_i, P(first = i, second = j) = p_i p_j / (1 - p_i)."""
    ember.manual_seed(2)
    p = np.array(W) / sum(W)
    s = ember.multinomial(ember.tensor([W] * N), 2).numpy()
    assert s.shape == (N, 2)
    assert (s[:, 0] != s[:, 1]).all()
    np.testing.assert_allclose(freqs(s[:, 0], 4), p, atol=TOL)
    pairs = np.zeros((4, 4))
    np.add.at(pairs, (s[:, 0], s[:, 1]), 1 / N)
    expected = p[:, None] * p[None, :] / (1 - p[:, None])
    np.fill_diagonal(expected, 0)
    np.testing.assert_allclose(pairs, expected, atol=TOL)


def test_without_replacement_draws_every_category_once():
    s = ember.multinomial(ember.tensor([[1.0, 5.0, 0.5, 2.0, 0.1]] * 50), 5).numpy()
    assert (np.sort(s, axis=1) == np.arange(5)).all()


def test_zero_weights_come_last_without_replacement_and_never_with():
    ember.manual_seed(3)
    w = ember.tensor([0.0, 2.0, 0.0, 1.0])
    s = ember.multinomial(w.expand(500, 4), 3).numpy()
    assert set(map(tuple, np.sort(s[:, :2], axis=1))) == {(1, 3)}
    assert np.isin(s[:, 2], [0, 2]).all()
    assert set(ember.multinomial(w, 1000, replacement=True).tolist()) <= {1, 3}


def test_one_category_and_tiny_weights():
    assert ember.multinomial(ember.tensor([3.0]), 4, True).tolist() == [0, 0, 0, 0]
    assert ember.multinomial(ember.tensor([1e-30, 0.0]), 1).tolist() == [0]
    assert ember.multinomial(ember.ones(0, 3), 2).shape == (0, 2)
    half = ember.multinomial(ember.tensor([1.0, 1.0], dtype=ember.float16), 2)
    assert sorted(half.tolist()) == [0, 1]


def test_generator_reproducible_and_separate_from_global():
    w = ember.tensor(W)
    a = ember.multinomial(w, 10, True, generator=ember.Generator().manual_seed(7))
    b = ember.multinomial(w, 10, True, generator=ember.Generator().manual_seed(7))
    assert a.tolist() == b.tolist()
    ember.manual_seed(7)
    state = ember.get_rng_state()
    ember.multinomial(w, 10, True, generator=ember.Generator().manual_seed(8))
    assert ember.equal(ember.get_rng_state(), state)  # the global stream was not consumed
    ember.manual_seed(5)
    c = ember.multinomial(w, 3)
    ember.manual_seed(5)
    assert ember.multinomial(w, 3).tolist() == c.tolist()


def test_sampling_a_softmax_keeps_no_graph():
    logits = ember.randn(2, 5, requires_grad=True)
    s = ember.multinomial(ember.softmax(logits, -1), 1)
    assert s.shape == (2, 1) and not s.requires_grad


@pytest.mark.parametrize("make", [
    lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m: m.multinomial(m.ones(3), 0),
    lambda m: m.multinomial(m.ones(3), 4),
    lambda m: m.multinomial(m.tensor([1.0, -1.0, 1.0]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("inf")]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1, True),
    lambda m: m.multinomial(m.zeros(3), 1),
    lambda m: m.multinomial(m.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    lambda m: m.multinomial(m.tensor([1, 1, 1]), 1),
    lambda m: m.multinomial(m.tensor([]), 1),
    lambda m: m.bernoulli(m.tensor([0.5, 1.5])),
    lambda m: m.bernoulli(m.tensor([1, 0])),
])
def test_errors_like_torch(make):
    raises_like_torch(make)


def test_bernoulli_frequencies_and_dtype():
    ember.manual_seed(4)
    p = ember.tensor([0.0, 0.2, 0.7, 1.0], dtype=ember.float64).expand(N, 4)
    s = ember.bernoulli(p)
    assert s.dtype == ember.float64 and s.shape == (N, 4)
    np.testing.assert_allclose(s.numpy().mean(axis=0), [0.0, 0.2, 0.7, 1.0], atol=TOL)
    q = ember.zeros(N).bernoulli(0.3)
    assert q.dtype == ember.float32
    assert abs(q.numpy().mean() - 0.3) < TOL
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    assert ember.equal(ember.bernoulli(p[:10], generator=g1), ember.bernoulli(p[:10], generator=g2))


def test_bernoulli_in_place_with_a_probability_tensor():
    ember.manual_seed(6)
    probs = ember.tensor([0.0, 0.25, 1.0])
    x = ember.zeros(N, 3).bernoulli_(probs)
    np.testing.assert_allclose(x.numpy().mean(axis=0), [0.0, 0.25, 1.0], atol=TOL)


RANDOM_BOUNDS = {"float32": 2**24, "float64": 2**53, "float16": 2**11, "bfloat16": 2**8, "int64": 2**63 - 1,
                 "int32": 2**31 - 1, "int16": 2**15 - 1, "uint8": 255, "int8": 127, "bool": 1}


@pytest.mark.parametrize("name", RANDOM_BOUNDS)
def test_random_without_bounds_spans_the_dtypes_range(name):
    # PyTorch: 0 to 2**mantissa digits for floating types (inclusive), 0 to the largest value for integers
    bound = RANDOM_BOUNDS[name]
    for lib in (torch, ember):
        lib.manual_seed(0)
        values = lib.empty(100000, dtype=getattr(lib, name)).random_().double()
        low, high = values.min().item(), values.max().item()
        assert 0 <= low and high <= bound, lib
        if bound <= 2**12:  # every value is drawn (a value is missed with odds e**-24 or less), the bound too
            assert low == 0 and high == bound, lib
        else:  # (int16's 32768 values: one is missed in 100,000 draws with odds e**-3)
            assert high > 0.99 * bound and low < 0.01 * bound, lib


# (args of random_, {dtype: the inclusive range drawn, or the error PyTorch raises}); dtypes not named draw
# from the default (lo, hi)
_I64 = 2**63 - 1
RANDOM_CASES = [
    ((5,), {"default": (0, 4), "bool": RuntimeError}),  # random_(to)
    ((0,), {"default": RuntimeError}),  # from=0 >= to=0
    ((-3,), {"default": RuntimeError}),
    ((2, 5), {"default": (2, 4), "bool": RuntimeError}),
    ((-3, 3), {"default": (-3, 2), "uint8": RuntimeError, "bool": RuntimeError}),
    ((5, 2), {"default": RuntimeError}),
    ((3, 3), {"default": RuntimeError}),
    ((0, 2), {"default": (0, 1)}),
    ((300,), {"default": (0, 299), "int8": RuntimeError, "uint8": RuntimeError, "bool": RuntimeError,
              "bfloat16": (0, 296)}),  # bfloat16: to moved below 299's rounding up to 300
    ((-128, 128), {"default": (-128, 127), "uint8": RuntimeError, "bool": RuntimeError}),
    ((-129, 0), {"default": (-129, -1), "int8": RuntimeError, "uint8": RuntimeError, "bool": RuntimeError}),
    ((0, 257), {"default": (0, 256), "int8": RuntimeError, "uint8": RuntimeError, "bool": RuntimeError}),
    # random_(from, None): from ``from`` to the dtype's largest value (2**digits for a floating dtype)
    ((5, None), {"int8": (5, 127), "uint8": (5, 255), "int16": (5, 2**15 - 1), "int32": (5, 2**31 - 1), "int64": (5, _I64),
                 "float16": (5, 2**11), "bfloat16": (5, 2**8), "float32": (5, 2**24), "float64": (5, 2**53),
                 "bool": RuntimeError}),
    ((-5, None), {"int8": (-5, 127), "uint8": RuntimeError, "int16": (-5, 2**15 - 1), "int32": (-5, 2**31 - 1),
                  "int64": (-5, _I64),
                  "float16": (-5, 2**11), "bfloat16": (-5, 2**8), "float32": (-5, 2**24), "float64": (-5, 2**53),
                  "bool": RuntimeError}),
    ((2**24, None), {"default": RuntimeError, "int32": (2**24, 2**31 - 1), "int64": (2**24, _I64),
                     "float64": (2**24, 2**53)}),
    ((0, 2**53 + 4), {"default": RuntimeError, "int64": (0, 2**53 + 3), "float32": (0, 2**53 + 4),
                      "float64": (0, 2**53 + 2), "bfloat16": (0, 2**53)}),  # (past 2**digits: a warning)
    ((1, 2**60), {"default": RuntimeError, "int64": (1, 2**60 - 1), "float32": (1, 2**60), "float64": (1, 2**60),
                  "bfloat16": (1, 2**60)}),
    ((1.0,), {"default": TypeError}), ((True,), {"default": TypeError}), ((0, 2.5), {"default": TypeError}),
    ((0, 2**63), {"default": ValueError}), ((2**63,), {"default": ValueError}),
]


def _random_outcome(lib, dtype: str, args):
    """(error type and message, warnings, (min, max) of many draws)."""
    lib.manual_seed(0)
    x = lib.zeros(20000, dtype=getattr(lib, dtype))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            x.random_(*args)
        except (RuntimeError, TypeError, ValueError) as err:
            return type(err), str(err), None
    said = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    values = x.double()
    return None, said, (values.min().item(), values.max().item())


@pytest.mark.parametrize("dtype", list(RANDOM_BOUNDS))
@pytest.mark.parametrize("args,expected", RANDOM_CASES, ids=[repr(c[0]) for c in RANDOM_CASES])
def test_random_from_to_ranges_and_errors_as_pytorch(dtype, args, expected):
    """random_(to), random_(from, to) and random_(from, None): PyTorch's ranges per dtype (not its values), its
    errors for empty or unrepresentable ranges and for arguments that are no int64, its precision warning."""
    want = expected.get(dtype, expected.get("default"))
    e_err, e_said, e_range = _random_outcome(ember, dtype, args)
    t_err, t_said, t_range = _random_outcome(torch, dtype, args)
    if isinstance(want, type):
        assert t_err is want and e_err is want, (t_said, e_said)
        if want is RuntimeError:
            assert e_said == t_said
        else:
            assert e_said.split(" - got")[0] == t_said.split(" - got")[0] if want is TypeError else e_said == t_said
        return
    assert e_err is None and t_err is None, (t_said, e_said)
    assert e_said == t_said  # the precision warning, or none
    lo, hi = want
    for drawn in (e_range, t_range):
        assert lo <= drawn[0] and drawn[1] <= hi
        if hi - lo <= 300:  # 20,000 draws: every value is drawn
            assert drawn == (lo, hi)
        else:
            assert drawn[0] < lo + 0.01 * (hi - lo) and drawn[1] > hi - 0.01 * (hi - lo)


def test_random_from_keyword_needs_to_as_pytorch():
    """``random_(from=k)`` alone matches none of PyTorch's overloads (TypeError); ember took ``k`` as ``to`` and drew
    from 0 to k - 1."""
    for fw in (torch, ember):
        with pytest.raises(TypeError):
            fw.zeros(4).random_(**{"from": 3})
        drawn = fw.zeros(200).random_(**{"from": 3, "to": 6})
        assert drawn.min().item() >= 3 and drawn.max().item() <= 5


def test_random_from_keyword_with_to_none_draws_up_to_the_dtype_bound_as_pytorch():
    """``random_(**{"from": k, "to": None})`` is PyTorch's ``random_(from, None)``: ``k`` up to the dtype's largest
    value (2**24 for float32); ember lost ``to=None`` and refused the call as ``from=`` alone."""
    for fw in (torch, ember):
        drawn = fw.zeros(200).random_(**{"from": 2, "to": None})
        assert drawn.min().item() >= 2 and 1000 < drawn.max().item() <= 2 ** 24, fw.__name__
        assert fw.zeros(200).random_(to=3).max().item() <= 2


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "int64", "uint8", "int8", "bool"])
def test_cauchy_of_a_non_floating_tensor_names_its_cpp_type_as_pytorch(dtype):
    """PyTorch's refusal names the dtype's C++ type (``c10::complex<float>``); a complex tensor was a KeyError."""
    got, expected = raises_like_torch(lambda m: m.zeros(2, dtype=getattr(m, dtype)).cauchy_(), RuntimeError)
    assert got == expected
