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
