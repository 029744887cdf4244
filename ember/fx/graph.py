"""``torch.fx.Graph``: the nodes of a traced program in order, and the Python code they stand for.

``python_code()`` writes ``forward`` as PyTorch does: one line per node, infix operators for ``operator``'s
functions, ``torch.<name>`` for ember's public functions (``torch`` is ember in the generated code's globals), and
``name = None`` after a value's last use so memory is freed as early as in the traced code.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import inspect
import keyword
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .node import Argument, Node, Target, map_arg

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
    "pos": "+{}", "neg": "-{}", "invert": "~{}", **reflectable_magic_methods,
}

# Names the generated code reads as globals, bound to these objects (PyTorch's custom builtins).
_CUSTOM_BUILTINS = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}
_illegal_names: dict[str, object] = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_names.update(_CUSTOM_BUILTINS)
_illegal_names["torch"] = object()
_NAME = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_ILLEGAL_CHARS = re.compile("[^0-9a-zA-Z_]+")
_TORCH_PREFIX = {"": "torch.", "F.": "torch.nn.functional.", "special.": "torch.special.",
                 "linalg.": "torch.linalg.", "fft.": "torch.fft."}


_direct_names: dict[int, tuple[object, str]] = {}


def collect_torch_names() -> None:
    """Learn the public functions' names (once; before tracing rebinds them to stand-ins)."""
    import importlib

    from .._rebind import NAMESPACES, public_functions

    if not _direct_names:
        public_functions()
        for module_name, prefix in NAMESPACES:
            for name, obj in vars(importlib.import_module(module_name)).items():
                if not name.startswith("_") and callable(obj) and not isinstance(obj, type):
                    _direct_names.setdefault(id(obj), (obj, prefix + name))


def torch_name(fn: Any) -> str | None:
    """``torch.relu`` / ``torch.nn.functional.softmax`` for ember's public functions, else None. A function
    bound in a namespace under its own name is named there (``F.softmax``, although ``torch.softmax`` wraps the
    same function); a function only wrapped by a public one takes the wrapper's name."""
    from .._rebind import public_functions

    collect_torch_names()
    hit = _direct_names.get(id(fn))
    if hit is None or hit[0] is not fn:
        hit = public_functions().get(id(fn))
    if hit is None or hit[0] is not fn:
        return None
    prefix, _, name = hit[1].rpartition(".")
    return _TORCH_PREFIX[prefix + "." if prefix else ""] + name


def _node_base_name(known: str) -> str:
    """The name PyTorch gives a node calling the function named ``known`` (``torch.relu``): its ``__name__``, which
    for the bindings of torch.linalg, torch.fft and torch.special is the ATen op's (``linalg_inv``)."""
    space, _, name = known.rpartition(".")
    return f"{space[6:]}_{name}" if space in ("torch.linalg", "torch.fft", "torch.special") else name


def _snake_case(s: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


class _Namespace:
    """Unique Python names for nodes and globals: PyTorch's ``name``, ``name_1``, ``name_2`` scheme."""

    def __init__(self) -> None:
        self._obj_to_name: dict[Any, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: Any) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _NAME.match(candidate)
        if match is None:
            candidate = _ILLEGAL_CHARS.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _NAME.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate


@dataclass
class PythonCode:
    """``src``: the source of ``forward``; ``globals``: the names it reads."""

    src: str
    globals: dict[str, Any]


class _NodeList:
    """``graph.nodes``: iterable (erasing the current node while iterating is allowed), sized, reversible."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self._graph, self._direction = graph, direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._direction)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))


class Graph:
    """The nodes of a program, in execution order (``torch.fx.Graph``)."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._insert = self._root.prepend

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target | None = None) -> list[Node]:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ------------------------------------------------------------------ building
    def create_node(self, op: str, target: Target, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """A new node at the insertion point (the end of the graph, or as ``inserting_before/after`` set)."""
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, tuple(args or ()), dict(kwargs or {}), type_expr)
        self._graph_namespace._obj_to_name[n] = name
        self._insert(n)
        self._len += 1
        return n

    def _target_to_str(self, target: Target) -> str:
        if callable(target):
            known = torch_name(target)
            op = _node_base_name(known) if known else target.__name__
        else:
            op = target  # "*args" becomes "_args", as in PyTorch
            if op.startswith("__") and op.endswith("__") and len(op) > 4:  # __getitem__ -> getitem
                op = op[2:-2]
            op = op.replace(".", "_")
        return _snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None, default_value: Any = inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None, kwargs: dict | None = None,
                      type_expr: Any = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) here, its Node arguments mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False):
        """Copy ``g``'s nodes (all but its output) into this graph; ``val_map`` maps old nodes to new (and may
        start filled, to substitute placeholders); returns what ``g``'s output returns, as new nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __getstate__(self) -> dict:
        # The owning module is the GraphModule being pickled (it re-owns the graph when rebuilt); the insertion
        # point is reset to the end.
        state = dict(self.__dict__)
        state["_owning_module"] = None
        del state["_insert"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._insert = self._root.prepend

    def __deepcopy__(self, memo: dict) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        if output_vals is not None:
            result, old_output = output_vals
            g.output(result, type_expr=old_output.type)
        return g

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None):
        """New nodes go before ``n`` (the start of the graph if None) inside the ``with`` block."""
        saved = self._insert
        self._insert = n.prepend if n is not None else self._root.append  # None: the start
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None):
        """New nodes go right after ``n`` (each before the previous one, as in PyTorch; the end of the graph if
        None) inside the ``with`` block."""
        saved = self._insert
        self._insert = n.append if n is not None else self._root.prepend
        try:
            yield
        finally:
            self._insert = saved

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node no other node uses (RuntimeError otherwise, as PyTorch)."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in the "
                               f"graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase, last to first, every node whose value nothing uses and that has no side effect; whether any was."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: each node's inputs are in this graph and come before it, names are
        unique, get_attr/call_module targets exist in the owning module."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                                       "used as an argument! If you are copying nodes from another graph, make sure to "
                                       "use ``arg_transform`` on node_copy() to remap values")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
            module = self.owning_module
            if module is not None and node.op in ("get_attr", "call_module"):
                obj = module
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        kind = "call_module" if node.op == "call_module" else "get_attr"
                        raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                           f"{'.'.join(node.target.split('.')[:i + 1])} of {kind} root")
                    obj = getattr(obj, atom)

    # ------------------------------------------------------------------ printing and code
    def __str__(self) -> str:
        lines = [f"    {node.format_node()}" for node in self.nodes]
        return "\n".join(["graph():", *lines])

    def print_tabular(self) -> None:
        """One row per node: opcode, name, target, args, kwargs (a plain-text table; PyTorch uses tabulate)."""
        from .node import qualified_name

        rows = [["opcode", "name", "target", "args", "kwargs"]]
        rows += [[n.op, n.name, n.target if isinstance(n.target, str) else qualified_name(n.target), str(n.args),
                  str(n.kwargs)] for n in self.nodes]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        rule = "  ".join("-" * w for w in widths)
        out = ["  ".join(c.ljust(w) for c, w in zip(rows[0], widths)).rstrip(), rule]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows[1:]]
        print("\n".join(out))

    def python_code(self, root_module: str = "self") -> PythonCode:
        from ._codegen import generate

        return generate(self, root_module)
