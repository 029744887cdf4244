"""torch._check and its kin against PyTorch: silent on True, the error type and message on False (the message a
callable evaluated only then, PyTorch's default without one), PyTorch's TypeErrors for a condition that is not a
bool or a message that is not callable, the tensor form."""

import warnings

import pytest
import torch
from oracle import assert_same_error

import ember


def _lazy_message():
    raise AssertionError("evaluated although the condition held")


@pytest.mark.parametrize("name", ["_check", "_check_index", "_check_value", "_check_type", "_check_not_implemented"])
def test_checks_pass_on_true_and_raise_pytorchs_error_on_false(name):
    for m in (ember, torch):
        assert getattr(m, name)(True, _lazy_message) is None
        assert getattr(m, name)(3 > 2) is None
    assert_same_error(lambda m: getattr(m, name)(False))
    assert_same_error(lambda m: getattr(m, name)(1 > 2, lambda: "size must be positive"))


@pytest.mark.parametrize("fn", [
    lambda m: m._check(1),
    lambda m: m._check(m.tensor(True)),
    lambda m: m._check(False, "a string, not a callable"),
    lambda m: m._check_with(KeyError, False, lambda: "k"),
    lambda m: m._check_with(UserWarning, False),
    lambda m: m._check_tensor_all(m.tensor([True, False])),
    lambda m: m._check_tensor_all(m.tensor([True, False]), lambda: "not all"),
    lambda m: m._check_tensor_all(True),
    lambda m: m._check_tensor_all_with(ValueError, m.tensor([[False]])),
])
def test_check_errors_as_pytorch(fn):
    assert_same_error(fn)


def test_check_tensor_all_of_true_and_of_a_non_bool_tensor():
    for m in (ember, torch):
        assert m._check_tensor_all(m.ones(2, 3, dtype=m.bool)) is None
        with pytest.raises(TypeError, match="cond tensor must have dtype torch.bool, but got"):
            m._check_tensor_all(m.tensor([1]))


def test_check_is_size_as_pytorch_with_its_future_warning():
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert m._check_is_size(3, max=4) is None
            with pytest.raises(RuntimeError, match="Expected cond to be True"):
                m._check_is_size(-1)
            with pytest.raises(RuntimeError, match="too big"):
                m._check_is_size(5, lambda: "too big", max=4)
        assert {(w.category, str(w.message)) for w in seen} == {(FutureWarning, (
            "_check_is_size will be removed in a future PyTorch release along with guard_size_oblivious.     "
            "Use _check(i >= 0) instead."))}
