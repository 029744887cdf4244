"""torch.save / torch.load of sets, frozensets and defaultdicts, against torch: pickle keeps them (GraphSAGE's model
holds its adjacency lists as a defaultdict(set) and is saved whole); PyTorch's weights-only loader takes a set and
refuses the other two."""

import collections
import io
import pickle
import warnings

import pytest
import torch

import ember


def _roundtrip(lib, obj, weights_only):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ember's note that it wrote its own format
        lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf, weights_only=weights_only)


CASES = {
    "set": lambda: {"s": {1, 2, "a"}},
    "frozenset": lambda: {"f": frozenset({3, (4, 5)})},
    "defaultdict(set)": lambda: {"d": collections.defaultdict(set, {1: {2, 3}, 4: set()})},
    "defaultdict(None)": lambda: {"d": collections.defaultdict(None, {1: 2})},
    "nested": lambda: [collections.defaultdict(list, {"k": [{1}, frozenset()]})],
}


@pytest.mark.parametrize("case", list(CASES))
def test_loaded_back_as_the_same_type_like_torch(case):
    t, e = _roundtrip(torch, CASES[case](), False), _roundtrip(ember, CASES[case](), False)
    assert t == e == CASES[case]()
    tv, ev = (t[0], e[0]) if isinstance(t, list) else (t[next(iter(t))], e[next(iter(e))])
    assert type(ev) is type(tv)
    assert getattr(ev, "default_factory", "-") == getattr(tv, "default_factory", "-")


@pytest.mark.parametrize("case", list(CASES))
def test_weights_only_takes_sets_and_refuses_the_others_like_torch(case):
    try:
        expected = _roundtrip(torch, CASES[case](), True)
    except pickle.UnpicklingError:
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            _roundtrip(ember, CASES[case](), True)
    else:
        assert _roundtrip(ember, CASES[case](), True) == expected


class Sage(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(2, 2)
        self.adj_lists = collections.defaultdict(set, {0: {1, 2}, 1: {0}})
        self.seen = frozenset({0, 1})


def test_a_module_holding_a_set_and_a_defaultdict_saves_whole():
    (m,) = _roundtrip(ember, [Sage()], False)
    assert m.adj_lists == {0: {1, 2}, 1: {0}} and m.adj_lists.default_factory is set
    assert m.adj_lists[5] == set()  # still a defaultdict
    assert m.seen == frozenset({0, 1}) and isinstance(m.seen, frozenset)


@pytest.mark.parametrize("case", ["set", "frozenset"])
def test_pytorchs_format_holds_sets_and_frozensets(case):
    # what ember writes in PyTorch's format (torch.save under python -m ember.compat) PyTorch loads the same,
    # under the same weights-only rule
    buf = io.BytesIO()
    ember.save(CASES[case](), buf, format="torch")
    for weights_only in (False, True):
        buf.seek(0)
        try:
            expected = torch.load(buf, weights_only=weights_only)
        except pickle.UnpicklingError:
            buf.seek(0)
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
                ember.load(buf, weights_only=weights_only)
        else:
            assert expected == CASES[case]()
            buf.seek(0)
            assert ember.load(buf, weights_only=weights_only) == expected


@pytest.mark.parametrize("case", [c for c in CASES if "defaultdict" in c])
def test_pytorchs_format_holds_a_defaultdict_as_pytorchs_pickle_does(case):
    # (ember's writer of PyTorch's format refused one, where torch.save pickles it with its factory)
    buf, theirs = io.BytesIO(), io.BytesIO()
    ember.save(CASES[case](), buf, format="torch")
    torch.save(CASES[case](), theirs)
    for data in (buf, theirs):
        for lib in (torch, ember):
            data.seek(0)
            got = lib.load(data, weights_only=False)
            expected = CASES[case]()
            assert got == expected
            d, want = (got[0], expected[0]) if isinstance(got, list) else (got["d"], expected["d"])
            assert type(d) is collections.defaultdict and d.default_factory is want.default_factory
            data.seek(0)
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
                lib.load(data, weights_only=True)


def test_a_defaultdict_whose_factory_has_no_name_is_refused_as_pytorch_refuses_it():
    with pytest.raises((pickle.PicklingError, AttributeError)):  # (AttributeError for a local lambda)
        torch.save(collections.defaultdict(lambda: 0), io.BytesIO())
    with pytest.raises(TypeError, match="cannot be imported again by name"):
        ember.save(collections.defaultdict(lambda: 0), io.BytesIO(), format="torch")
