"""torch.cov and torch.corrcoef against PyTorch: values, gradients (to the input and to aweights), weights,
correction, 1-D input, integer input, errors and the degrees-of-freedom warning."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.cov(x), (3, 7)),
    (lambda m, x: x.cov(correction=0), (4, 5)),
    (lambda m, x: m.cov(x, correction=2), (2, 6)),
    (lambda m, x: m.cov(x), (7,)),  # one variable: a 0-d result
    (lambda m, x: m.cov(x.T), (6, 3)),  # variables in columns, as people pass x.T
    (lambda m, x: m.corrcoef(x), (3, 8)),
    (lambda m, x: x.corrcoef(), (5,)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cov_corrcoef(fn, shape, dtype):
    check(fn, [shape], dtype=dtype)


def test_weights_and_their_gradients():
    r = np.random.default_rng(0)
    x, aw = r.standard_normal((3, 6)), r.random(6) + 0.1
    fw = np.array([1, 2, 0, 3, 1, 1])
    for correction in (0, 1, 3):
        got_x, got_a = ember.tensor(x, requires_grad=True), ember.tensor(aw, requires_grad=True)
        want_x, want_a = torch.tensor(x, requires_grad=True), torch.tensor(aw, requires_grad=True)
        got = ember.cov(got_x, correction=correction, fweights=ember.tensor(fw), aweights=got_a)
        want = torch.cov(want_x, correction=correction, fweights=torch.tensor(fw), aweights=want_a)
        assert_close(got, want, 1e-12, 1e-10)
        g = r.standard_normal((3, 3))
        got.backward(ember.tensor(g))
        want.backward(torch.tensor(g))
        assert_close(got_x.grad, want_x.grad, 1e-12, 1e-10)
        assert_close(got_a.grad, want_a.grad, 1e-12, 1e-10)
    assert_close(ember.cov(ember.tensor(x), fweights=ember.tensor(fw)), torch.cov(torch.tensor(x), fweights=torch.tensor(fw)),
                 1e-12, 1e-10)


def test_integer_input_and_constant_variable():
    x = [[1, 2, 4, 7], [3, 3, 3, 3]]
    got, want = ember.cov(ember.tensor(x)), torch.cov(torch.tensor(x))
    assert got.dtype == ember.float32 and want.dtype == torch.float32
    assert_close(got, want, 0, 1e-6)
    got, want = ember.corrcoef(ember.tensor(x, dtype=ember.float64)), torch.corrcoef(torch.tensor(x, dtype=torch.float64))
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))  # a constant row: NaN
    assert_close(ember.corrcoef(ember.tensor([2.0, 2.0])), torch.corrcoef(torch.tensor([2.0, 2.0])), 0, 0)


@pytest.mark.parametrize("call,match", [
    (lambda m: m.cov(m.zeros(2, 2, 2)), "two or fewer dimensions"),
    (lambda m: m.corrcoef(m.zeros(2, 2, 2)), "two or fewer dimensions"),
    (lambda m: m.cov(m.zeros(2, 3, dtype=m.bool)), "bool dtype is not supported"),
    (lambda m: m.cov(m.zeros(2, 3), fweights=m.ones(3)), "fweights to have integral dtype"),
    (lambda m: m.cov(m.zeros(2, 3), fweights=m.ones(2, dtype=m.long)), "same numel as there are observations"),
    (lambda m: m.cov(m.zeros(2, 3), fweights=m.tensor([1, -1, 1])), "fweights cannot be negative"),
    (lambda m: m.cov(m.zeros(2, 3), aweights=m.ones(3, dtype=m.long)), "aweights to have floating point dtype"),
    (lambda m: m.cov(m.zeros(2, 3), aweights=m.tensor([1.0, -1.0, 1.0])), "aweights cannot be negative"),
    (lambda m: m.cov(m.zeros(2, 3), aweights=m.zeros(3)), "weights sum to zero"),
])
def test_errors(call, match):
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match=match):
            call(m)


def test_too_few_observations_warn_and_divide_by_zero():
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m.cov(m.tensor([[1.0, 2.0]]), correction=2)
        assert any("degrees of freedom is <= 0" in str(w.message) for w in caught)
        assert out.isinf().all()
