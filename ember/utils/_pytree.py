"""``ember.utils._pytree``: nested containers as a flat list of leaves and a structure, as
``torch.utils._pytree`` (which programs and libraries import despite the underscore).

A pytree is a leaf or a container node: ``list``, ``tuple``, ``dict``, ``OrderedDict``, ``defaultdict``,
``deque``, a namedtuple, or a type given to ``register_pytree_node``. Anything else (a tensor, a number,
a string, ``None``) is a leaf. ``tree_flatten`` gives the leaves in order and a ``TreeSpec``;
``tree_unflatten`` rebuilds the same structure around new leaves; ``tree_map`` applies a function to
every leaf (of one tree, or of several trees of the same structure, leaf by leaf). ``SUPPORTED_NODES``
(node type -> ``NodeDef``) and ``_get_node_type`` are PyTorch's registry and lookup, which libraries use to walk
trees their own way.
Difference from PyTorch: no key paths (``tree_flatten_with_path``) and no serialisation of specs.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

from .._missing import module_getattr
from ..return_types import rebuilt

PyTree = Any  # PyTorch's annotation names
Context = Any


class NodeDef(NamedTuple):
    """How a container type is taken apart and rebuilt: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x``, and ``flatten_with_keys_fn(x) -> ([(key, child)...], context)``
    where one is given (ember's: dicts only)."""

    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


# node type -> NodeDef, as PyTorch's registry; every namedtuple class is the node type ``collections.namedtuple``
# (``_get_node_type``), whose context is the class
SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable, *,
                         flatten_with_keys_fn: Callable | None = None, **_serialization) -> None:
    """Make ``cls`` a container node: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x``. Registering a type twice is an error, as in PyTorch."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping node, as PyTorch's key paths name it (prints ``[key]``)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping) -> Any:
        return mapping[self.key]


def _dict_flatten_with_keys(d: dict) -> tuple[list[tuple[MappingKey, Any]], list]:
    """A dict's children paired with their keys, and its context (the keys): PyTorch's ``flatten_with_keys_fn``
    for dicts, which libraries pass to ``register_pytree_node`` for their dict-like outputs."""
    keys = list(d)
    return [(MappingKey(k), d[k]) for k in keys], keys


for _kind, _flatten_fn, _unflatten_fn in [
    (list, lambda x: (list(x), None), lambda c, _: list(c)),
    (tuple, lambda x: (list(x), None), lambda c, _: tuple(c)),
    (dict, lambda x: (list(x.values()), list(x)), lambda c, keys: dict(zip(keys, c))),
    (namedtuple, lambda x: (list(x), type(x)), lambda c, cls: rebuilt(cls, c)),  # (a return type: one sequence)
    (OrderedDict, lambda x: (list(x.values()), list(x)), lambda c, keys: OrderedDict(zip(keys, c))),
    (defaultdict, lambda x: (list(x.values()), [x.default_factory, list(x)]),
     lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c))),
    (deque, lambda x: (list(x), x.maxlen), lambda c, maxlen: deque(c, maxlen=maxlen)),
]:
    register_pytree_node(_kind, _flatten_fn, _unflatten_fn,
                         flatten_with_keys_fn=_dict_flatten_with_keys if _kind is dict else None)
del _kind, _flatten_fn, _unflatten_fn


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _get_node_type(tree: Any) -> Any:
    """The key ``tree``'s type has in ``SUPPORTED_NODES``: its type, or ``collections.namedtuple`` for any
    namedtuple (as PyTorch's, which libraries call to walk trees their own way)."""
    return namedtuple if _is_namedtuple(tree) else type(tree)


def _node_type(x):
    kind = _get_node_type(x)
    return kind if kind in SUPPORTED_NODES else None


class TreeSpec:
    """The structure of a pytree: the node's type, its context (keys, class, ...) and its children's specs.
    A leaf's spec has type None (and prints ``*``)."""

    def __init__(self, type: Any, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type, self.context, self.children_specs = type, context, children_specs
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs)
                == (other.type, other.context, other.children_specs))

    def __hash__(self) -> int:
        return hash((self.type, len(self.children_specs)))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = self.type.__name__
        inner = (",\n" + " " * (indent + 2)).join(c.__repr__(indent + 2) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context}, [{inner}])"

    def unflatten(self, leaves) -> Any:
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                             f"refers to a pytree that holds {self.num_leaves} items ({self!r}).")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.is_leaf():
            return next(leaves)
        children = [c._build(leaves) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


def LeafSpec() -> TreeSpec:  # noqa: N802  (PyTorch's name)
    """The spec of a single leaf."""
    return TreeSpec(None, None, [])


def _flatten(tree, is_leaf, leaves: list) -> TreeSpec:
    kind = None if is_leaf is not None and is_leaf(tree) else _node_type(tree)
    if kind is None:
        leaves.append(tree)
        return LeafSpec()
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order (depth first; dicts in insertion order) and its structure.
    ``is_leaf(x)`` True stops the descent at ``x``."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(leaves, treespec: TreeSpec) -> Any:
    """The pytree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but "
                        f"got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


class _Star:
    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """``treespec`` written as the structure it describes, leaves as ``*`` (``(*, [*, *])``), as PyTorch's."""
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``tree`` with every leaf ``x`` replaced by ``func(x, *(the same leaf of each of rests))``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_as(spec, r, is_leaf) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def _leaves_as(spec: TreeSpec, tree, is_leaf) -> list:
    """``tree``'s leaves, where ``tree`` has ``spec``'s structure (it may be deeper below spec's leaves)."""
    if spec.is_leaf():
        return [tree]
    kind = _node_type(tree)
    if kind != spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {kind or type(tree)}.")
    children = SUPPORTED_NODES[kind].flatten_fn(tree)[0]
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    return [leaf for c, s in zip(children, spec.children_specs) for leaf in _leaves_as(s, c, is_leaf)]


__getattr__ = module_getattr(__name__)
