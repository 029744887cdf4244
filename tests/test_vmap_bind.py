"""vmap's rules bind an op's arguments as ``inspect.Signature.bind`` + ``apply_defaults`` do (``_rules_nn._bind``),
with a cached reading of the signature: the same arguments, ``args`` and ``kwargs``, and inspect's errors."""

import inspect

import pytest

import ember
import ember.nn.functional as F
from ember.func import _rules_nn


def _inspect_bind(op, args, kwargs):
    bound = inspect.signature(op).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


def _keyword_only(input, weight, *, stride=2, scale=None):  # noqa: A002 - PyTorch's argument name
    return input


X, W = ember.zeros(2, 3, 4, 4), ember.zeros(5, 3, 3, 3)


@pytest.mark.parametrize("op,args,kwargs", [
    (F.conv2d, (X, W), {}),
    (F.conv2d, (X, W, None, 1, 1), {"groups": 1}),
    (F.conv2d, (X,), {"weight": W, "padding": "same"}),
    (F.conv2d, (), {"input": X, "weight": W, "dilation": 2}),
    (F.cross_entropy, (X, W), {"reduction": "none", "label_smoothing": 0.1}),
    (F.batch_norm, (X, None, None), {"training": True}),
    (_keyword_only, (X, W), {"scale": 3}),
    (_keyword_only, (X,), {"weight": W}),
])
def test_bind_is_inspects(op, args, kwargs):
    ours, theirs = _rules_nn._bind(op, args, kwargs), _inspect_bind(op, args, kwargs)
    assert type(ours) is _rules_nn._Bound  # the cached path, not inspect's
    assert list(ours.arguments.items()) == list(theirs.arguments.items())
    assert ours.args == theirs.args and ours.kwargs == theirs.kwargs
    ours.arguments["input"] = W  # a rule's change of an argument reaches args (or kwargs), as inspect's does
    theirs.arguments["input"] = W
    assert ours.args == theirs.args and ours.kwargs == theirs.kwargs


@pytest.mark.parametrize("args,kwargs", [
    ((X,), {}),                                   # missing
    ((X, W), {"bogus": 1}),                       # unknown
    ((X, W), {"weight": W}),                      # given twice
    ((X, W, None, 1, 1, 1, 1, 1), {}),            # too many
    ((X,), {"bogus": 1}),                         # one missing, one unknown: as many names as the signature's
])
def test_bind_refuses_as_inspect(args, kwargs):
    with pytest.raises(TypeError) as theirs:
        _inspect_bind(F.conv2d, args, kwargs)
    with pytest.raises(TypeError, match=str(theirs.value)):
        _rules_nn._bind(F.conv2d, args, kwargs)


def test_bind_of_other_signatures_is_inspects():
    def star(input, *rest, **options):  # noqa: A002
        return input

    bound = _rules_nn._bind(star, (X, 1, 2), {"k": 3})
    assert isinstance(bound, inspect.BoundArguments)
    assert bound.args == (X, 1, 2) and bound.kwargs == {"k": 3}
