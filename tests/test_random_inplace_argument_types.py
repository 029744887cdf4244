"""The random in-place methods' number arguments against PyTorch's argument parser: a string, None, a complex
number, a ``Fraction`` or a ``Decimal`` where PyTorch reads a float is its TypeError ("normal_(): argument 'mean'
(position 1) must be float, not str"), positional or by keyword (then without a position); NumPy scalars, bools and
0-d tensors are numbers. The rule is ``number_parameters``' (``ember/_dtype.py``), so ``renorm``'s and
``nan_to_num``'s number arguments follow it too (``nan=None`` is 0, as PyTorch's)."""

import decimal
import fractions

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "uniform_ from": lambda x, v: x.uniform_(v, 1.0),
    "uniform_ to": lambda x, v: x.uniform_(0.0, v),
    "normal_ mean": lambda x, v: x.normal_(v),
    "normal_ std": lambda x, v: x.normal_(0.0, v),
    "normal_ std keyword": lambda x, v: x.normal_(std=v),
    "exponential_": lambda x, v: x.exponential_(v),
    "exponential_ keyword": lambda x, v: x.exponential_(lambd=v),
    "geometric_": lambda x, v: x.geometric_(v),
    "cauchy_ median": lambda x, v: x.cauchy_(v),
    "cauchy_ sigma": lambda x, v: x.cauchy_(0.0, v),
    "log_normal_ mean": lambda x, v: x.log_normal_(v),
    "log_normal_ std": lambda x, v: x.log_normal_(1.0, v),
    "renorm p": lambda x, v: x.renorm(v, 0, 1.0),
    "nan_to_num nan": lambda x, v: x.nan_to_num(v),
}
NOT_FLOATS = {"str": "s", "None": None, "complex": 1j, "Fraction": fractions.Fraction(1, 2),
              "Decimal": decimal.Decimal("0.5")}


def _message(m, call, value):
    with pytest.raises(TypeError) as err:
        call(m.zeros(3), value)
    return str(err.value)


# nan_to_num's nan is optional (test_nan_to_num_of_none_is_zero); renorm's p is a Number, whose complex value
# PyTorch refuses later, in the op
CASES = [pytest.param(CALLS[c], NOT_FLOATS[v], id=f"{c}-{v}") for c in CALLS for v in NOT_FLOATS
         if (c, v) not in {("nan_to_num nan", "None"), ("renorm p", "complex")}]


@pytest.mark.parametrize("call, value", CASES)
def test_a_number_argument_given_something_else_is_pytorchs_type_error(call, value):
    theirs = _message(torch, call, value)
    assert _message(ember, call, value) == theirs


@pytest.mark.parametrize("value", [np.float32(0.5), np.int64(2), True, 0.25, 3], ids=str)
def test_numpy_scalars_bools_and_numbers_are_floats(value):
    for m in (torch, ember):
        x = m.zeros(4, dtype=m.float64)
        x.normal_(value)
        x.exponential_(1.0 + value)
        x.cauchy_(value)


def test_a_zero_dim_tensor_is_a_float():
    x = ember.zeros(3, dtype=ember.float64)
    ember.manual_seed(0)
    x.uniform_(ember.tensor(2.0), ember.tensor(3.0))
    assert ((x >= 2.0) & (x < 3.0)).all()


def test_nan_to_num_of_none_is_zero():
    values = [float("nan"), float("inf"), 1.0]
    for m in (torch, ember):
        assert m.tensor(values).nan_to_num(None).tolist()[0] == 0.0
        x = m.tensor(values)
        x.nan_to_num_(None)
        assert x.tolist()[0] == 0.0
        assert m.nan_to_num(m.tensor(values), None).tolist()[0] == 0.0


@pytest.mark.parametrize("keywords", [{"a": 0.0}, {"b": 1.0}, {"a": 0.0, "b": 1.0}], ids=str)
def test_uniform_refuses_keywords_pytorch_does_not_take(keywords):
    """PyTorch's uniform_ takes from= and to= (nn.init.uniform_ takes a= and b=, the method does not)."""
    for m in (torch, ember):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(keywords))}'"):
            m.zeros(3).uniform_(**keywords)


def test_uniform_takes_from_and_to_by_keyword():
    for m in (torch, ember):
        x = m.zeros(100, dtype=m.float64)
        x.uniform_(**{"from": 2.0, "to": 3.0})
        assert ((x >= 2.0) & (x < 3.0)).all()
        x.uniform_(to=0.5)
        assert ((x >= 0.0) & (x < 0.5)).all()
    with pytest.raises(TypeError, match=r"^uniform_\(\): argument 'from' must be float, not str$"):
        ember.zeros(3).uniform_(**{"from": "s"})


@pytest.mark.parametrize("call", [
    lambda m: m.index_put_(m.zeros(3), "s", m.tensor(1.0)),
    lambda m: m.nan_to_num_(m.zeros(3), "s"),
    lambda m: m.logit_(m.zeros(3), "s"),
], ids=["index_put_", "nan_to_num_", "logit_"])
def test_the_function_form_counts_the_input_among_positions(call):
    """torch.index_put_(input, indices, values): 'indices' is position 2 (the method's position 1)."""
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as err:
            call(m)
        messages.append(str(err.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("args", [(None,), (None, 5)], ids=str)
def test_random_from_none_is_pytorchs_type_error(args):
    """random_(0, None) draws up to the dtype's largest value; from is an int, never None."""
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as err:
            m.zeros(3, dtype=m.int64).random_(*args)
        messages.append(str(err.value).splitlines()[0])
    assert messages[1].startswith(messages[0].rstrip(":"))
    ember.zeros(3, dtype=ember.int64).random_(0, None)
