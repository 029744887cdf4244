"""``torch.return_types`` objects (``torch.max(x, 0)``, ``sort``, ``topk``, ...) behave as PyTorch's structseqs:
a tuple (indexing, slicing, unpacking, ``isinstance(r, tuple)``, equality with the plain tuple), fields by name and
read-only, PyTorch's repr, pickling by reference, ``n_fields``/``n_sequence_fields``/``n_unnamed_fields``, and the
structseq constructor that takes one sequence (the form PyTorch's own pytree and generic code call), with its
errors. ember's also keeps the named tuple's ``_fields`` (docs/api.md)."""

import pickle

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "max": lambda m, x: m.max(x, 0),
    "sort": lambda m, x: m.sort(x, 1),
    "topk": lambda m, x: m.topk(x, 2),
    "aminmax": lambda m, x: m.aminmax(x),
    "frexp": lambda m, x: m.frexp(x),
    "cummax": lambda m, x: m.cummax(x, 1),
}


def _x(m):
    return m.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])


@pytest.mark.parametrize("op", CALLS)
def test_structseq_behaviour(op):
    for m in (torch, ember):
        r = CALLS[op](m, _x(m))
        cls = type(r)
        assert isinstance(r, tuple) and len(r) == 2
        first, second = r
        assert first is r[0] and second is r[-1] and type(r[0:1]) is tuple
        assert r == (first, second)
        assert (cls.n_fields, cls.n_sequence_fields, cls.n_unnamed_fields) == (2, 2, 0)
        assert repr(r).startswith(f"{m.__name__}.return_types.{op}(\n")
        with pytest.raises(AttributeError):
            r.__setattr__(cls.__match_args__[0], 1)
        rebuilt = cls([second, first])  # the structseq's constructor: one sequence
        assert type(rebuilt) is cls and rebuilt[0] is second and rebuilt[1] is first
        assert cls((first, second), {})[1] is second
        assert cls(iter(r))[0] is first
        loaded = pickle.loads(pickle.dumps(r))
        assert type(loaded) is cls
        np.testing.assert_array_equal(loaded[0].numpy(), first.numpy())


def test_structseq_constructor_errors():
    for m in (torch, ember):
        with pytest.raises(TypeError, match=rf"^{m.__name__}\.return_types\.max\(\) takes a 2-sequence "
                                            r"\(1-sequence given\)$"):
            m.return_types.max([1])
        with pytest.raises(TypeError, match=r"^constructor requires a sequence$"):
            m.return_types.max(5)


@pytest.mark.parametrize("op", CALLS)
def test_structseq_fields_are_readonly_as_pytorchs(op):
    for m in (torch, ember):
        r = CALLS[op](m, _x(m))
        for field in type(r).__match_args__:
            with pytest.raises(AttributeError, match="^readonly attribute$"):
                setattr(r, field, 1)
            with pytest.raises(AttributeError, match="^readonly attribute$"):
                delattr(r, field)
        with pytest.raises(AttributeError, match="object has no attribute 'other'$"):
            r.other = 1
