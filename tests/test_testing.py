"""ember.testing.assert_close against torch.testing.assert_close: the same verdicts and messages."""

import math

import pytest
import torch

import ember
import ember.testing

CASES = [
 (lambda m: (m.tensor([1.,2.,3.]), m.tensor([1.,2.5,3.])), {}),
 (lambda m: (m.tensor([1.,2.]), m.tensor([1.,2.,3.])), {}),
 (lambda m: (m.tensor([1.,2.]), m.tensor([1.,2.], dtype=m.float64)), {}),
 (lambda m: (m.tensor([1,2]), m.tensor([1,3])), {}),
 (lambda m: (1.0, 1.0 + 1e-9), {}),
 (lambda m: (1.0, 1.1), {}),
 (lambda m: (m.tensor([1.]), 1.0), {}),
 (lambda m: ([m.tensor(1.), m.tensor(2.)], [m.tensor(1.), m.tensor(2.1)]), {}),
 (lambda m: ({'a': m.tensor(1.)}, {'a': m.tensor(1.5)}), {}),
 (lambda m: (m.tensor([float('nan')]), m.tensor([float('nan')])), {}),
 (lambda m: (m.tensor([float('nan'), 1.]), m.tensor([float('nan'), 1.])), {"equal_nan": True}),
 (lambda m: (m.tensor([1.]), m.tensor([1.])), {'rtol': 1e-3}),
 (lambda m: (m.tensor([1.]), m.tensor([1.2])), {'msg': 'custom'}),
 (lambda m: (m.tensor([1.,2.]), m.tensor([1.,2.],dtype=m.float64)), {'check_dtype': False}),
 (lambda m: (m.tensor(True), m.tensor(False)), {}),
 (lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.001, 2.0])), {"rtol": 1e-2, "atol": 0.0}),
 (lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.0, 2.0], [3.0, 5.0]])), {}),
 (lambda m: (m.tensor([math.inf]), m.tensor([math.inf])), {}),
 ((lambda m: ([1, 2], [1, 2, 3])), {}),
 ((lambda m: (3, 4)), {}),
 # check_stride compares stride() after the shape, before the dtype (ember ignored it): a transposed copy, nested,
 # with a shape or a dtype mismatch too
 (lambda m: (m.ones(2, 3).t(), m.ones(3, 2)), {"check_stride": True}),
 (lambda m: (m.ones(2, 3).t(), m.ones(3, 2)), {}),
 (lambda m: (m.ones(3, 2), m.ones(3, 2)), {"check_stride": True}),
 (lambda m: ({"w": [m.ones(4)[::2]]}, {"w": [m.ones(2)]}), {"check_stride": True}),
 (lambda m: (m.ones(2, 3).t(), m.ones(3, 3)), {"check_stride": True}),
 (lambda m: (m.ones(2, 3).t(), m.ones(3, 2, dtype=m.float64)), {"check_stride": True}),
 (lambda m: (m.ones(2, 3).t(), m.ones(3, 2)), {"check_stride": True, "msg": "layout"}),
 (lambda m: (1.0, 1.0), {"check_stride": True}),
]


def _outcome(fn, args, kwargs):
    try:
        fn(*args, **kwargs)
        return "passed", ""
    except (AssertionError, TypeError, ValueError) as e:
        return type(e).__name__, str(e).replace("torch.", "ember.")


@pytest.mark.parametrize("case", range(len(CASES)))
def test_assert_close_as_pytorch(case):
    make, kwargs = CASES[case]
    got = _outcome(ember.testing.assert_close, make(ember), kwargs)
    want = _outcome(torch.testing.assert_close, make(torch), kwargs)
    assert got[0] == want[0]
    if got[0] != "TypeError":  # (the message names the classes: ember's Tensor is not torch's)
        assert got[1] == want[1]


def test_both_tolerances_or_neither():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
            m.testing.assert_close(m.ones(1), m.ones(1), atol=1.0)


def test_assert_allclose_ignores_dtype_and_takes_python_values():
    ember.testing.assert_allclose(ember.ones(2, dtype=ember.float64), [1.0, 1.0])
    ember.testing.assert_allclose(ember.tensor([float("nan")]), ember.tensor([float("nan")]))
    with pytest.raises(AssertionError):
        ember.testing.assert_allclose(ember.ones(2), [1.0, 2.0])


@pytest.mark.parametrize("names", [("float32",), ("float16", "float64"), ("bfloat16", "float32"), ("complex64",),
                                   ("complex128", "float64"), ("int64",), ("bool", "int8"), ("complex32",),
                                   ("float64", "int32", "float16"), ("qint8",), ("quint4x2", "float64")])
def test_default_tolerances_as_torch(names):
    from torch.testing._comparison import default_tolerances as torch_default

    from ember.testing._comparison import default_tolerances

    expected = torch_default(*(getattr(torch, n) for n in names))
    assert default_tolerances(*(getattr(ember, n) for n in names)) == expected
    if not {"complex32", "qint8", "quint4x2"} & set(names):  # tensors, and dtypes, mixed
        tensors = [ember.zeros(1, dtype=getattr(ember, n)) for n in names]
        assert default_tolerances(*tensors[:1], *(getattr(ember, n) for n in names[1:])) == expected


def test_default_tolerances_given_precisions_and_bad_input_as_torch():
    from torch.testing._comparison import default_tolerances as torch_default

    from ember.testing._comparison import default_tolerances

    assert default_tolerances(ember.float32, ember.int8, dtype_precisions={ember.int8: (0.5, 2.0)}) == \
        torch_default(torch.float32, torch.int8, dtype_precisions={torch.int8: (0.5, 2.0)}) == (0.5, 2.0)
    with pytest.raises(TypeError) as t_err:
        torch_default(1.0)
    with pytest.raises(TypeError) as e_err:
        default_tolerances(1.0)
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(ValueError):  # no inputs: max() of nothing, as in PyTorch
        torch_default()
    with pytest.raises(ValueError):
        default_tolerances()


@pytest.mark.parametrize("make", [
    lambda m: (m.tensor([1.000001 + 1j, 2 - 1.000001j], dtype=m.complex64), m.tensor([1 + 1j, 2 - 1j], dtype=m.complex64)),
    lambda m: (m.tensor([1 + 1.1j, 2 - 1j], dtype=m.complex64), m.tensor([1 + 1j, 2 - 1j], dtype=m.complex64)),
    lambda m: (m.tensor(1 + 1j, dtype=m.complex128), m.tensor(1 + 1.5j, dtype=m.complex128)),
    lambda m: (1 + 1j, 1 + 2j), lambda m: (1 + 1j, 1 + 1j + 1e-9j),
])
def test_complex_values_compare_by_the_modulus_of_the_difference_as_torch(make):
    """Complex values within the dtype's tolerance pass; the others fail with PyTorch's message (modulus of
    the difference; the relative one may differ in its last float32 digit)."""
    expected = _outcome(torch.testing.assert_close, make(torch), {})
    got = _outcome(ember.testing.assert_close, make(ember), {})
    assert got[0] == expected[0]
    if expected[0] == "AssertionError":
        assert got[1].splitlines()[:4] == expected[1].splitlines()[:4]
