"""PyTorch's argument parser names an argument's position in its TypeError only when the argument came by
position: ``full((2,), t)`` is "argument 'fill_value' (position 2)", ``full((2,), fill_value=t)`` "argument
'fill_value'". ember named the position for both; ``torch.add(x, "a")`` had ember's own wording ("unsupported operand
type for a tensor op") and ``arange("a")`` NumPy's ("must be real number"). Each message is checked against torch's.
"""

from decimal import Decimal

import pytest
import torch

import ember


def _message(m, call):
    with pytest.raises(TypeError) as info:
        call(m)
    return str(info.value).splitlines()[0]


def _t(m):
    return m.ones(2)


CALLS = {
    "full_keyword": lambda m: m.full((2,), fill_value=_t(m)),
    "full_positional": lambda m: m.full((2,), _t(m)),
    "full_like_keyword": lambda m: m.full_like(_t(m), fill_value=_t(m)),
    "full_like_positional": lambda m: m.full_like(_t(m), _t(m)),
    "new_full_keyword": lambda m: _t(m).new_full((2,), fill_value=_t(m)),
    "new_full_positional": lambda m: _t(m).new_full((2,), _t(m)),
    "scalar_tensor_keyword": lambda m: m.scalar_tensor(s=_t(m)),
    "dist_keyword": lambda m: m.dist(_t(m), _t(m), p=_t(m)),
    "dist_positional": lambda m: m.dist(_t(m), _t(m), _t(m)),
    "isclose_keyword": lambda m: m.isclose(_t(m), _t(m), rtol=_t(m)),
    "isclose_positional": lambda m: m.isclose(_t(m), _t(m), _t(m)),
    "allclose_keyword": lambda m: m.allclose(_t(m), _t(m), atol=_t(m)),
    "softplus_keyword": lambda m: m.nn.functional.softplus(_t(m), threshold=_t(m)),
    "softplus_positional": lambda m: m.nn.functional.softplus(_t(m), 1, _t(m)),
    "softshrink_keyword": lambda m: m.nn.functional.softshrink(_t(m), lambd=_t(m)),
    "hardshrink_keyword": lambda m: m.nn.functional.hardshrink(_t(m), lambd=_t(m)),
    # PyTorch's functional passes these on by position: "(position 2)" by keyword too
    "leaky_relu_keyword": lambda m: m.nn.functional.leaky_relu(_t(m), negative_slope=_t(m)),
    "add_str": lambda m: m.add(_t(m), "a"),
    "add_none": lambda m: m.add(_t(m), None),
    "add_list": lambda m: m.add(_t(m), [1, 2]),
    "add_first": lambda m: m.add("a", _t(m)),
    "add_keyword": lambda m: m.add(_t(m), other="a"),
    "mul_str": lambda m: m.mul(_t(m), "a"),
    "sub_str": lambda m: m.sub(_t(m), "a"),
    "div_str": lambda m: m.div(_t(m), "a"),
    "method_mul": lambda m: _t(m).mul("a"),
    "method_add_keyword": pytest.param(lambda m: _t(m).add(other="a"), marks=pytest.mark.xfail(
        strict=True, reason="x.add is x.__add__ (no wrapper on the method's path): ember names the position for "
        "the keyword too")),
    "method_add": lambda m: _t(m).add("a"),
    "method_sub_none": lambda m: _t(m).sub(None),
    "method_div_list": lambda m: _t(m).div([1, 2]),
    "method_add_alpha": lambda m: _t(m).add("a", alpha=2),
    "inplace_add_str": lambda m: _t(m).add_("a"),
    "inplace_sub_none": lambda m: _t(m).sub_(None),
    "inplace_mul_str": lambda m: _t(m).mul_("a"),
    "inplace_div_str": lambda m: _t(m).div_("a"),
    "inplace_add_list": lambda m: _t(m).add_([1, 2]),
    "inplace_add_alpha_str": lambda m: _t(m).add_("a", alpha=2),
    "inplace_sub_alpha_str": lambda m: _t(m).sub_("a", alpha=2),
    "inplace_sub_alpha_list": lambda m: _t(m).sub_([1, 2], alpha=0.5),
    "inplace_add_recorded": lambda m: m.ones(2, requires_grad=True).clone().add_("a"),
    "inplace_mul_recorded": lambda m: m.ones(2, requires_grad=True).clone().mul_(None),
    "arange_str": lambda m: m.arange("a"),
    "arange_keyword": lambda m: m.arange(end="a"),
    "arange_none": lambda m: m.arange(None),
    "arange_none_keyword": lambda m: m.arange(end=None),
    "arange_list": lambda m: m.arange([3]),
    # tensor-only operands (require_tensor): by keyword no position; torch.special's functions by their own name
    "atan2_keyword": lambda m: m.atan2(_t(m), other=1.0),
    "atan2_positional": lambda m: m.atan2(_t(m), 1.0),
    "maximum_keyword": lambda m: m.maximum(_t(m), other=1.0),
    "minimum_keyword": lambda m: m.minimum(_t(m), other=1.0),
    "igamma_keyword": lambda m: m.igamma(_t(m), other=1.0),
    "igamma_positional": lambda m: m.igamma(_t(m), 1.0),
    "gammainc_positional": lambda m: m.special.gammainc(_t(m), 1.0),
    "gammainc_keyword": lambda m: m.special.gammainc(_t(m), other=1.0),
    "gammaincc_positional": lambda m: m.special.gammaincc(_t(m), 1.0),
    "hypot_keyword": lambda m: m.hypot(_t(m), other=1.0),
    # a size or dims that is one object, not a sequence: "must be tuple of ints, not T"; an element of one: its pos
    "zeros_decimal": lambda m: m.zeros(Decimal(2)),
    "zeros_decimal_in_list": lambda m: m.zeros([Decimal(2)]),
    "zeros_decimal_second": lambda m: m.zeros(2, Decimal(2)),
    "empty_float": lambda m: m.empty(2.5),
    "zeros_float_in_tuple": lambda m: m.zeros((2, 2.5)),
    "reshape_decimal": lambda m: _t(m).reshape(Decimal(2)),
    "repeat_decimal": lambda m: _t(m).repeat(Decimal(2)),
    "flip_decimal": lambda m: _t(m).flip(Decimal(0)),
    "flip_decimal_in_list": lambda m: _t(m).flip([Decimal(0)]),
    "flip_function_decimal": lambda m: m.flip(_t(m), Decimal(0)),
    "tile_decimal": lambda m: _t(m).tile(Decimal(2)),
    "tile_decimal_in_list": lambda m: _t(m).tile([Decimal(2)]),
    "tile_function_decimal_in_list": lambda m: m.tile(_t(m), [Decimal(2)]),
    "method_atan2_keyword": pytest.param(lambda m: _t(m).atan2(other=1.0), marks=pytest.mark.xfail(
        strict=True, reason="no wrapper on the method's path (one would cost every correct call): ember names the "
        "position for the keyword too")),
}


def _cases():
    for name in sorted(CALLS):
        call = CALLS[name]
        yield pytest.param(call.values[0], marks=call.marks, id=name) if hasattr(call, "marks") else \
            pytest.param(call, id=name)


@pytest.mark.parametrize("call", list(_cases()))
def test_message_as_torchs(call):
    assert _message(ember, call) == _message(torch, call)


@pytest.mark.parametrize("call", [lambda m: m.arange(0, "a"), lambda m: m.arange(0, None),
                                  lambda m: m.arange(0, 5, step="a"), lambda m: m.arange(start=0, end="a")])
def test_arange_non_numbers_among_several_are_no_overload(call):
    for m in (ember, torch):
        assert "received an invalid combination of arguments" in _message(m, call)


def test_numbers_still_taken():
    import numpy as np

    for m in (ember, torch):
        assert m.arange(np.float32(2.5)).tolist() == [0.0, 1.0, 2.0]
        assert m.full((2,), fill_value=m.tensor(3.0)).tolist() == [3.0, 3.0]
        assert m.dist(m.ones(2), m.zeros(2), p=m.tensor(1.0)).item() == 2.0


def _in_place_calls(m):
    """In-place methods with every argument by its keyword: PyTorch's names (each accepted, same result)."""
    i, o = m.tensor([0, 2]), m.ones(3) * 2
    mask = m.tensor([True, False, True])
    return {
        "copy_": lambda x: x.copy_(other=o, non_blocking=False),
        "add_": lambda x: x.add_(other=o, alpha=2), "sub_": lambda x: x.sub_(other=o, alpha=0.5),
        "mul_": lambda x: x.mul_(other=o), "div_": lambda x: x.div_(other=o, rounding_mode="floor"),
        "clamp_": lambda x: x.clamp_(min=0.5, max=1.5), "clamp_min_": lambda x: x.clamp_min_(min=0.5),
        "masked_fill_": lambda x: x.masked_fill_(mask=mask, value=5.0),
        "index_add_": lambda x: x.index_add_(dim=0, index=i, source=m.ones(2), alpha=3),
        "index_copy_": lambda x: x.index_copy_(dim=0, index=i, source=m.ones(2) * 4),
        "index_fill_": lambda x: x.index_fill_(dim=0, index=i, value=3.0),
        "scatter_": lambda x: x.scatter_(dim=0, index=i, src=m.ones(2) * 7),
        "scatter_value_": lambda x: x.scatter_(dim=0, index=i, value=3.0),
        "scatter_add_": lambda x: x.scatter_add_(dim=0, index=i, src=m.ones(2)),
        "fill_": lambda x: x.fill_(value=3.0), "pow_": lambda x: x.pow_(exponent=2),
        "lerp_": lambda x: x.lerp_(end=o, weight=0.25),
        "addcmul_": lambda x: x.addcmul_(tensor1=o, tensor2=o, value=2),
        "masked_scatter_": lambda x: x.masked_scatter_(mask=mask, source=m.ones(3) * 6),
        "put_": lambda x: x.put_(index=i, source=m.ones(2), accumulate=True),
        "index_put_": lambda x: x.index_put_(indices=(i,), values=m.ones(2) * 9),
    }


@pytest.mark.parametrize("name", list(_in_place_calls(torch)))
def test_in_place_methods_take_pytorchs_keywords(name):
    got = _in_place_calls(ember)[name](ember.arange(1.0, 4.0))
    want = _in_place_calls(torch)[name](torch.arange(1.0, 4.0))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("call", [lambda x, o: x.copy_(src=o), lambda x, o: x.add_(input=o),
                                  lambda x, o: x.mul_(value=o), lambda x, o: x.clamp_(lo=0),
                                  lambda x, o: x.index_add_(0, o.long()[:1], src=o[:1])])
def test_in_place_methods_refuse_other_keywords_with_type_error(call):
    """A keyword of another name (``copy_(src=)``, ``index_add_(src=)``): PyTorch's TypeError. (Its words, "missing
    1 required positional arguments", are ``copy_``'s only; elsewhere ember's are Python's "unexpected keyword".)"""
    for m in (torch, ember):
        with pytest.raises(TypeError):
            call(m.ones(3), m.ones(3))
