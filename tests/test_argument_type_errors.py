"""Arguments of the wrong type, against PyTorch's argument parser, word for word: a ``normalized_shape`` that is no
sequence of ints, a Fraction or a Decimal as ``dist``'s ``p``, a NumPy array as ``aminmax``'s ``dim``, a size
that is no int (its op and position named, method and function), a number as ``igamma``'s ``other``, a
``decimals`` of ``round`` that is no int."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch

import ember

CASES = {
    "layer_norm_float": lambda m, t: m.nn.functional.layer_norm(t, 2.5),
    "layer_norm_str": lambda m, t: m.nn.functional.layer_norm(t, "ab"),
    "layer_norm_none": lambda m, t: m.nn.functional.layer_norm(t, None),
    "layer_norm_tensor": lambda m, t: m.nn.functional.layer_norm(t, m.tensor([2])),
    "layer_norm_element": lambda m, t: m.nn.functional.layer_norm(t, [2.5]),
    "rms_norm_element": lambda m, t: m.nn.functional.rms_norm(t, (2, Decimal(2))),
    "dist_decimal": lambda m, t: m.dist(t, t, Decimal(2)),
    "dist_fraction_keyword": lambda m, t: m.dist(t, t, p=Fraction(1, 2)),
    "dist_method": lambda m, t: t.dist(t, Decimal(2)),
    "aminmax_array": lambda m, t: m.aminmax(t, dim=np.array(0)),
    "aminmax_bool": lambda m, t: t.aminmax(dim=np.bool_(False)),
    "aminmax_float_tensor": lambda m, t: m.aminmax(t, dim=m.tensor(0.0)),
    "reshape_method": lambda m, t: t.reshape([Decimal(2), 2]),
    "reshape_function": lambda m, t: m.reshape(t, [Decimal(4)]),
    "reshape_float": lambda m, t: t.reshape((4.0,)),
    "permute_method": lambda m, t: t.permute([Decimal(0), 1]),
    "permute_function": lambda m, t: m.permute(t, [1, 0.0]),
    "expand": lambda m, t: t.expand([Decimal(2), 2]),
    "repeat": lambda m, t: t.repeat([1, 2.0]),
    "igamma": lambda m, t: m.igamma(t, 1),
    "igammac": lambda m, t: m.igammac(t, 2.0),
    # round's decimals: the function matches neither overload (both listed), the methods name the argument
    "round_decimals_str": lambda m, t: m.round(t, decimals="x"),
    "round_decimals_float": lambda m, t: m.round(t, decimals=1.5),
    "round_decimals_bool": lambda m, t: m.round(t, decimals=True),
    "round_decimals_none": lambda m, t: m.round(t, decimals=None),
    "round_decimals_array": lambda m, t: m.round(t, decimals=np.array(1)),
    "round_method_str": lambda m, t: t.round(decimals="x"),
    "round_method_float": lambda m, t: t.round(decimals=1.5),
    "round_inplace_str": lambda m, t: t.round_(decimals="x"),
    "round_inplace_none": lambda m, t: t.round_(decimals=None),
}


@pytest.mark.parametrize("case", CASES)
def test_pytorchs_type_error(case):
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            CASES[case](m, m.ones(2, 2))
        messages.append(str(caught.value))
    assert messages[1] == messages[0]


def test_what_pytorch_takes_is_still_taken():
    t = ember.ones(2, 2)
    assert ember.dist(t, t, np.float32(3)).item() == 0 and ember.dist(t, t, True).item() == 0
    assert ember.aminmax(t, dim=np.int32(1)).min.shape == (2,) and ember.aminmax(t, dim=ember.tensor(0)).max.shape == (2,)
    assert ember.nn.functional.layer_norm(t, ember.Size([2])).shape == (2, 2)
    assert t.reshape([np.int64(4)]).shape == (4,)
    assert np.allclose(ember.round(t * 1.25, decimals=np.int64(1)).numpy(), 1.2)


@pytest.mark.parametrize("call", [
    lambda m, t: m.arange(Decimal(3)),
    lambda m, t: m._foreach_pow(Decimal(2), [t]),
    lambda m, t: m.addmm(Fraction(1), t, t, t),
])
def test_a_fraction_or_decimal_is_no_number_to_the_parser(call):
    """Refused as PyTorch refuses them (ember took them as numbers); a TypeError both, and arange's words."""
    for m in (torch, ember):
        with pytest.raises(TypeError):
            call(m, m.ones(2, 2))
    with pytest.raises(TypeError, match=r"arange\(\): argument 'end' \(position 1\) must be Number, not "
                                        r"decimal\.Decimal"):
        ember.arange(Decimal(3))
