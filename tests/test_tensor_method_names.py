"""A Tensor method called with a keyword it does not take is a TypeError that names the method as Tensor's
(``Tensor.sum() got an unexpected keyword argument 'foo'``; PyTorch's names ``sum()``), never the mixin class that
defines it in ember; and a method reached through the class still pickles by reference."""

import inspect
import pickle
import re

import pytest
import torch

import ember


def _methods_without_var_keywords():
    names = []
    for name in dir(ember.Tensor):
        function = inspect.getattr_static(ember.Tensor, name)
        if not inspect.isfunction(function) or (name.startswith("__") and name != "__abs__"):
            continue
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            continue
        if all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters):
            names.append(name)
    return names


def test_every_method_is_named_as_tensors_in_its_keyword_error():
    names = _methods_without_var_keywords()
    assert {"sum", "add", "view", "exp", "matmul", "softmax", "abs", "reshape"} <= set(names)
    x = ember.ones(2, 3)
    wrong = []
    for name in names:
        try:
            getattr(x, name)(surely_not_a_parameter=1)
        except TypeError as e:
            found = re.search(r"(\S+)\(\) got an unexpected keyword argument", str(e))
            if found and "Methods." in found.group(1):
                wrong.append(str(e))
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("name", ["sum", "add", "exp", "matmul", "softmax", "view", "abs"])
def test_unknown_keyword_names_the_method(name):
    with pytest.raises(TypeError) as pytorchs:
        getattr(torch.ones(2, 2), name)(foo=1)
    with pytest.raises(TypeError, match=rf"^Tensor\.{name}\(\) got an unexpected keyword argument 'foo'$"):
        getattr(ember.ones(2, 2), name)(foo=1)
    assert name in str(pytorchs.value)


@pytest.mark.parametrize("name", ["sum", "add", "abs", "__abs__", "view", "exp", "matmul"])
def test_methods_pickle_by_reference(name):
    method = getattr(ember.Tensor, name)
    assert pickle.loads(pickle.dumps(method)) is method
    bound = pickle.loads(pickle.dumps(getattr(ember.ones(2), name)))
    assert bound.__name__ == method.__name__
