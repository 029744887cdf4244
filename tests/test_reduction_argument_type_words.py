"""Arguments of the wrong type to the reductions and to add's alpha, as PyTorch's parser refuses them: a TypeError
(never another error, nor a result) whose message names the argument and the type PyTorch wants ("argument 'alpha'
must be Number, not str", "argument 'keepdim' must be bool, not str", "tuple of ints" for a dim list); where
PyTorch's message is one argument's, its words exactly."""

import re

import numpy as np
import pytest
from oracle import outcomes

import ember

# (call, the words both messages hold, whether ember's message is PyTorch's own)
CASES = {
    "add alpha str": (lambda m, x: m.add(x, x, alpha="x"), "argument 'alpha' must be Number, not str", True),
    "add alpha None": (lambda m, x: m.add(x, x, alpha=None), "argument 'alpha' must be Number, not NoneType", True),
    "add alpha list": (lambda m, x: m.add(x, x, alpha=[1]), "argument 'alpha' must be Number, not list", True),
    "sub alpha str": (lambda m, x: m.sub(x, x, alpha="x"), "argument 'alpha' must be Number, not str", True),
    "method add alpha": (lambda m, x: x.add(x, alpha="x"), "argument 'alpha' must be Number, not str", True),
    "add_ alpha": (lambda m, x: x.clone().add_(x, alpha="x"), "argument 'alpha' must be Number, not str", True),
    "sub_ alpha": (lambda m, x: x.clone().sub_(x, alpha="x"), "argument 'alpha' must be Number, not str", True),
    "addcmul value": (lambda m, x: x.addcmul(x, x, value="x"), "argument 'value' must be Number, not str", True),
    "addcdiv_ value": (lambda m, x: x.clone().addcdiv_(x, x, value=None), "argument 'value' must be Number", True),
    "sum keepdim str": (lambda m, x: x.sum(1, keepdim="x"), "argument 'keepdim' must be bool, not str", True),
    "sum keepdim int": (lambda m, x: x.sum(1, keepdim=1), "argument 'keepdim' must be bool, not int", True),
    "sum keepdim None": (lambda m, x: x.sum(1, keepdim=None), "argument 'keepdim' must be bool, not NoneType", True),
    "mean keepdim str": (lambda m, x: x.mean(1, keepdim="x"), "argument 'keepdim' must be bool, not str", True),
    "prod keepdim str": (lambda m, x: x.prod(1, keepdim="x"), "argument 'keepdim' must be bool, not str", True),
    "argmax keepdim str": (lambda m, x: x.argmax(1, keepdim="x"), "argument 'keepdim' must be bool, not str", True),
    "amax keepdim str": (lambda m, x: x.amax(1, keepdim="x"), "argument 'keepdim' must be bool", False),
    "var keepdim str": (lambda m, x: x.var(1, keepdim="x"), "keepdim", False),
    "sum keepdim numpy bool": (lambda m, x: x.sum(1, keepdim=np.True_), "argument 'keepdim' must be bool, not numpy.bool",
                               True),
    "mean keepdim numpy bool": (lambda m, x: x.mean(1, keepdim=np.False_), "argument 'keepdim' must be bool", False),
    "prod keepdim numpy bool": (lambda m, x: x.prod(1, keepdim=np.True_), "argument 'keepdim' must be bool", False),
    "argmax keepdim numpy bool": (lambda m, x: x.argmax(1, keepdim=np.True_), "argument 'keepdim' must be bool",
                                  False),
    "amax keepdim numpy bool": (lambda m, x: x.amax(1, keepdim=np.True_), "argument 'keepdim' must be bool", False),
    "var keepdim numpy bool": (lambda m, x: x.var(1, keepdim=np.True_), "keepdim", False),
    "mean keepdim no dim": (lambda m, x: x.mean(keepdim="x"), "got (keepdim=str, )", False),
    "sum keepdim no dim": (lambda m, x: m.sum(x, keepdim="x"), "keepdim=str", False),
    "sum dim str": (lambda m, x: x.sum(dim="x"), "tuple of ints", False),
    "sum dim float": (lambda m, x: x.sum(dim=1.5), "tuple of ints", False),
    "mean dim str": (lambda m, x: m.mean(x, dim="x"), "tuple of ints", False),
    "amax dim str": (lambda m, x: x.amax(dim="x"), "argument 'dim' must be tuple of ints, not str", False),
    "logsumexp dim str": (lambda m, x: x.logsumexp(dim="x"), "argument 'dim' must be tuple of ints, not str", False),
    "nansum dim str": (lambda m, x: x.nansum(dim="x"), "argument 'dim' must be tuple of ints, not str", False),
    "sum dim list": (lambda m, x: x.sum(dim=[0, "a"]),
                     "argument 'dim' failed to unpack the object at pos 2 with error \"type must be tuple of ints,"
                     "but got str\"", False),
    "argmax dim str": (lambda m, x: x.argmax(dim="x"), "argument 'dim' must be int, not str", False),
    "sum dtype str": (lambda m, x: x.sum(dtype="x"), "dtype", False),
    "mean dtype str": (lambda m, x: x.mean(dtype="x"), "dtype", False),
    "lerp weight str": (lambda m, x: x.lerp(x, "x"), "lerp() received an invalid combination of arguments - got "
                        "(Tensor, str)", False),
}


@pytest.mark.parametrize("name", CASES)
def test_wrong_argument_type_is_pytorchs_type_error(name):
    call, words, exact = CASES[name]
    (got, _), (want, _) = outcomes(lambda m: call(m, m.ones(2, 3)))
    assert type(want) is TypeError and type(got) is TypeError, (got, want)
    assert words in str(want) and words in str(got), (str(got), str(want))
    if exact:
        assert str(got) == str(want)


def test_the_type_named_is_the_arguments():
    for kind, value in (("str", "x"), ("list", [1]), ("dict", {}), ("NoneType", None)):
        with pytest.raises(TypeError, match=re.escape(f"must be Number, not {kind}")):
            ember.add(ember.ones(2), ember.ones(2), alpha=value)
