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


@pytest.mark.parametrize("build", [
    lambda cls, r: cls(r[0], r[1]),  # the values one by one: a named tuple's constructor, not a structseq's
    lambda cls, r: cls(values=r[0], indices=r[1]),
    lambda cls, r: cls(r, None),
    lambda cls, r: cls(r, {}, 3),
    lambda cls, r: cls(sequence=r),
    lambda cls, r: cls(r, dict={}),
    lambda cls, r: cls(),
])
def test_structseq_constructor_takes_one_sequence_as_pytorchs(build):
    """PyTorch's structseq takes one sequence (and an optional dict): two positional values are its TypeError, as
    is any field given by name; ember's ops, its pytree, collate, vmap and fx still build their results."""
    outcomes = []
    for m in (torch, ember):
        r = m.max(_x(m), 0)
        try:
            built = build(type(r), r)
            outcomes.append(("ok", [t.tolist() for t in built]))
        except TypeError as e:
            outcomes.append(("TypeError", str(e).replace("torch.", "").replace("ember.", "")))
    assert outcomes[0] == outcomes[1]


def test_ember_rebuilds_its_structseqs_through_pytree_collate_and_vmap():
    from ember.utils import _pytree
    from ember.utils.data import default_collate

    r = ember.max(_x(ember), 0)
    leaves, spec = _pytree.tree_flatten(r)
    assert type(_pytree.tree_unflatten(leaves, spec)) is type(r)
    batch = default_collate([r, r])
    assert type(batch) is type(r) and tuple(batch.values.shape) == (2, 3)
    out = ember.func.vmap(lambda t: ember.max(t, 0))(ember.stack([_x(ember), _x(ember)]))
    assert type(out) is type(r) and tuple(out.indices.shape) == (2, 3)
