"""``torch.fx.Proxy``: the value that flows through ``forward`` while it is traced, recording what is done to it.

Operators on a Proxy (``x + y``, ``x[0]``, ``-x``) record ``call_function`` nodes of ``operator``'s functions;
``x.view(...)`` records a ``call_method`` node and ``x.shape`` a ``getattr`` node; ember's public functions
called with a Proxy among their arguments record ``call_function`` nodes (``ember/fx/_dispatch.py``: PyTorch's
Proxy does this through ``__torch_function__``). Using a Proxy's value in Python control flow (``if``, ``for``,
``len``) cannot be recorded and raises PyTorch's TraceError / RuntimeError.
"""

from __future__ import annotations

import dis
import inspect
import operator
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

from ..return_types import rebuilt
from .graph import Graph, magic_methods, reflectable_magic_methods
from .node import Argument, Node, Target, map_aggregate


class TraceError(ValueError):
    """A traced value was used where tracing cannot follow it (control flow, iteration)."""


def _base_types() -> tuple:
    from .._device import device
    from .._dtype import dtype

    return (str, int, float, bool, complex, dtype, device, type(None), type(Ellipsis), range)


class TracerBase:
    """What Proxies need of a tracer: a graph to record into and ``create_proxy``."""

    graph: Graph

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record a node of ``kind`` whose arguments are ``args``/``kwargs`` (Proxies become their nodes) and
        return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """A value as a node argument: Proxies become their nodes, containers are mapped, constants kept;
        anything else raises NotImplementedError (PyTorch's message)."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            args = tuple(self.create_arg(elem) for elem in a)
            return rebuilt(type(a), args) if hasattr(a, "_fields") else args
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot contain a Node. "
                                       f"Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _base_types()) or callable(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator:
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Any:
        """``**proxy``: the recorded ``keys()`` call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing ``graph`` (for building graphs with Proxies by hand)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}


class Proxy:
    """A node's value while tracing; operations on it record nodes (see the module docstring)."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)
        self.node = node
        if isinstance(self.tracer, GraphAppendingTracer):  # built by hand: what it is given records nodes
            from ._dispatch import hold

            hold(self)

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):  # copy/pickle protocol probes are not tensor attributes
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator:
        # ``a, b = proxy``: the calling frame unpacks a known number of values; record a getitem for each.
        frame = inspect.currentframe()
        calling = frame.f_back if frame is not None else None
        if calling is not None:
            instructions = list(dis.get_instructions(calling.f_code))
            idx = bisect_left(instructions, calling.f_lasti, key=lambda inst: inst.offset)
            if idx < len(instructions) and instructions[idx].opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(instructions[idx].argval))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self) -> Any:
        return self.tracer.keys(self)

    def __deepcopy__(self, memo: dict) -> Proxy:
        return self  # a Proxy names a node of the graph being built; copying it would not copy the node

    __hash__ = object.__hash__


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node, recorded only when used as a value; calling it records a
    ``call_method`` node instead (``x.view(...)``)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _find_tracer(args: Any) -> TracerBase | None:
    found: list[TracerBase] = []
    map_aggregate(args, lambda a: found.append(a.tracer) if isinstance(a, Proxy) and not found else None)
    return found[0] if found else None


def _define_magic(name: str) -> None:
    target = getattr(operator, name)

    def impl(*args: Any) -> Proxy:
        return _find_tracer(args).create_proxy("call_function", target, args, {})

    impl.__name__ = f"__{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


def _define_reflectable(name: str) -> None:
    target = getattr(operator, name)
    method = f"__r{name.strip('_')}__"

    def impl(self: Proxy, rhs: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = method
    setattr(Proxy, method, impl)


# (``div`` is Python 2's: operator has none, and Python 3 never calls __div__.)
for _name in magic_methods:
    if hasattr(operator, _name):
        _define_magic(_name)
for _name in reflectable_magic_methods:
    if _name != "getitem" and hasattr(operator, _name):
        _define_reflectable(_name)
Proxy.__hash__ = object.__hash__  # __eq__ records a node; identity keeps Proxies usable as dict keys
