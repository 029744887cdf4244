"""ember.utils._pytree against torch.utils._pytree: the same leaves, structures and rebuilt trees."""

from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch.utils._pytree as tp

import ember
import ember.utils._pytree as ep

Point = namedtuple("Point", "x y")
TREES = [
    None, 3, "leaf", [1, [2, (3, None)]], {"b": 1, "a": [2, {"c": 3}]}, (), [],
    [Point(1, 2), OrderedDict(z=3, y=4), "s", 4.5], defaultdict(list, a=1, b=[2]), deque([1, (2, 3)], maxlen=4),
    {"w": ember.ones(2), "opt": (ember.zeros(1), 5)},
]


def _same_structure(e_spec, t_spec):
    assert e_spec.num_leaves == t_spec.num_leaves
    assert repr(e_spec) == repr(t_spec)


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_and_unflatten_as_pytorch(tree):
    e_leaves, e_spec = ep.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert all(a is b for a, b in zip(e_leaves, t_leaves)) and len(e_leaves) == len(t_leaves)
    _same_structure(e_spec, t_spec)
    new = list(range(len(e_leaves)))
    rebuilt = ep.tree_unflatten(new, e_spec)
    assert rebuilt == tp.tree_unflatten(new, t_spec) and type(rebuilt) is type(tp.tree_unflatten(new, t_spec))
    assert ep.tree_structure(tree) == ep.tree_structure(ep.tree_unflatten(new, e_spec))


def test_tree_map_one_and_several_trees():
    tree = {"a": (1, [2]), "b": Point(3, 4)}
    assert ep.tree_map(lambda x: x * 2, tree) == tp.tree_map(lambda x: x * 2, tree)
    assert ep.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert ep.tree_map(lambda x, y: (x, y), [1, 2], [[5], 6]) == tp.tree_map(lambda x, y: (x, y), [1, 2], [[5], 6])


def test_is_leaf_stops_the_descent():
    stop = lambda x: isinstance(x, list)  # noqa: E731
    e, t = ep.tree_flatten([1, [2]], is_leaf=stop), tp.tree_flatten([1, [2]], is_leaf=stop)
    assert e[0] == t[0]
    _same_structure(e[1], t[1])


def test_errors_as_pytorch():
    _, spec = ep.tree_flatten([1, 2, 3])
    with pytest.raises(ValueError, match="has length 1 but the spec refers to a pytree that holds 3 items"):
        ep.tree_unflatten([1], spec)
    with pytest.raises(ValueError, match="arity mismatch"):
        ep.tree_map(lambda a, b: a, [1, 2], [1])
    for p in (ep, tp):
        with pytest.raises(TypeError):
            p.tree_unflatten([1], [1])


def test_register_pytree_node():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ep.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    leaves, spec = ep.tree_flatten([Pair(1, [2, 3])])
    assert leaves == [1, 2, 3]
    out = ep.tree_unflatten([4, 5, 6], spec)[0]
    assert (out.a, out.b) == (4, [5, 6])
    with pytest.raises(ValueError, match="already registered"):
        ep.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: Pair(0, 0))


def test_dict_flatten_with_keys_as_pytorch():
    d = {"b": 1, "a": [2, 3]}
    ours, theirs = ep._dict_flatten_with_keys(d), tp._dict_flatten_with_keys(d)
    assert ours[1] == theirs[1] and [v for _, v in ours[0]] == [v for _, v in theirs[0]]
    assert [str(k) for k, _ in ours[0]] == [str(k) for k, _ in theirs[0]] == ["['b']", "['a']"]
    assert [k.get(d) for k, _ in ours[0]] == [1, [2, 3]]
