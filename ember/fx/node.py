"""``torch.fx.Node``: one operation of a Graph, and ``map_arg`` / ``map_aggregate`` over nested arguments.

A node's ``op`` is one of ``placeholder`` (a forward input), ``get_attr`` (a parameter, buffer or constant of the
module), ``call_function`` (``target`` is the function), ``call_method`` (``target`` names a method of the first
argument), ``call_module`` (``target`` is a submodule's qualified name) and ``output`` (the returned value).
``args``/``kwargs`` hold other Nodes, nested in tuples, lists, dicts and slices; ``users`` is kept up to date as
they change.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

from ..return_types import rebuilt

Target = Any  # a callable for call_function, else a string
Argument = Any  # a Node, a constant, or tuples/lists/dicts/slices of Arguments

OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """``fn`` applied to every leaf of ``a`` (through tuples, namedtuples, lists, dicts and slices)."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return rebuilt(type(a), mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """``fn`` applied to every Node in ``a``; other leaves unchanged."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


# Functions whose calls dead-code elimination keeps although nothing uses their value (``has_side_effect``);
# the asserts of concrete_args join on first use.
_side_effectful_functions: set[Callable] = set()


def has_side_effect(fn: Callable) -> Callable:
    """Mark ``fn`` as having a side effect: ``eliminate_dead_code`` keeps its calls. Returns ``fn``."""
    _side_effectful_functions.add(fn)
    return fn


def _side_effectful() -> set:
    from ._symbolic_trace import _assert, _assert_is_none

    return _side_effectful_functions | {_assert, _assert_is_none}


def qualified_name(target: Any) -> str:
    """How a call_function target prints: ``torch.relu``, ``operator.add``, ``builtins.getattr``, ``mod.fn``."""
    from .graph import torch_name

    known = torch_name(target)
    if known is not None:
        return known
    if getattr(builtins, getattr(target, "__name__", ""), None) is target:
        return f"builtins.{target.__name__}"
    if getattr(operator, getattr(target, "__name__", ""), None) is target:
        return f"operator.{target.__name__}"
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', repr(target)))}".lstrip(".")


def _format_arg(arg: Any) -> str:
    """An argument as Graph's printout shows it: ``%name`` for Nodes, strings bare."""
    if isinstance(arg, list):
        return f"[{', '.join(_format_arg(a) for a in arg)}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return f"%{arg}"
    return str(arg)


class Node:
    """One operation of a ``Graph`` (see the module docstring for ``op``). ``meta``: a dict for passes
    (ShapeProp writes ``meta['tensor_meta']``)."""

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in OPS:
            raise ValueError(f"Node op must be one of {OPS[:-1]}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} "
                             "but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self._next = self
        self._erased = False
        self.meta: dict[str, Any] = {}
        self.stack_trace: str | None = None
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------------ arguments
    @property
    def args(self) -> tuple:
        """The positional arguments (assigning updates ``users``)."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments (assigning updates ``users``)."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        self._args = tuple(map_aggregate(tuple(new_args), lambda x: x))
        self._kwargs = dict(new_kwargs)
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        map_arg((self._args, self._kwargs), lambda n: self._input_nodes.setdefault(n))
        for new in self._input_nodes:
            new.users.setdefault(self)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    @property
    def all_input_nodes(self) -> list[Node]:
        """The Nodes this one reads, in the order its args and kwargs name them, each once."""
        return list(self._input_nodes)

    # ------------------------------------------------------------------ position in the graph
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ------------------------------------------------------------------ rewriting
    def replace_all_uses_with(self, replace_with: Node, delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node (for which ``delete_user_cb`` is true) read ``replace_with`` instead;
        returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Every use of ``old_input`` in this node's arguments becomes ``new_input``."""
        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep this node although nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful()
        if self.op == "call_module":
            module = self.graph.owning_module
            target = module.get_submodule(self.target) if module is not None else None
            return bool(getattr(target, "_is_impure", False))
        return False

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        return self.name

    def format_node(self) -> str:
        """The node's line in ``print(graph)``."""
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        target = qualified_name(self.target) if self.op == "call_function" else self.target
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")
