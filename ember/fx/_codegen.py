"""A Graph's Python code, written as PyTorch writes it (``Graph.python_code``)."""

from __future__ import annotations

import builtins
import math
from typing import Any

from .graph import _CUSTOM_BUILTINS, Graph, PythonCode, _Namespace, magic_methods, torch_name
from .node import Node, map_arg, qualified_name

inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}", "imod": "{} %= {}",
    "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}", "irshift": "{} >>= {}",
    "isub": "{} -= {}", "itruediv": "{} /= {}", "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


def format_target(base: str, target: str) -> str:
    """``self.layer1.conv`` for a dotted target, ``getattr(self, "0")`` for atoms that are not identifiers."""
    r = base
    for atom in target.split("."):
        r = f'{r}.{atom}' if atom.isidentifier() else f'getattr({r}, "{atom}")'
    return r


class _Writer:
    """The globals the code reads, and how each value is written."""

    def __init__(self) -> None:
        import ember

        self.namespace = _Namespace()
        self.globals: dict[str, Any] = {"torch": ember, **_CUSTOM_BUILTINS}

    def add_global(self, name_hint: str, obj: Any) -> str:
        import ember

        known = torch_name(obj)
        if known is not None:
            return known
        if getattr(ember, getattr(obj, "__name__", ""), None) is obj:  # torch._assert
            return f"torch.{obj.__name__}"
        if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
            return obj.__name__
        name = self.namespace.create_name(name_hint.replace(".", "_"), obj)
        self.globals[name] = obj
        return name

    def repr(self, arg: Any) -> str:
        from .._device import device
        from .._dtype import dtype

        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            cls = self.add_global(type(arg).__name__, type(arg))
            return f"{cls}({', '.join(self.repr(a) for a in arg)})"
        if isinstance(arg, tuple):
            items = ", ".join(self.repr(a) for a in arg)
            return f"({items},)" if len(arg) == 1 else f"({items})"
        if isinstance(arg, list):
            return f"[{', '.join(self.repr(a) for a in arg)}]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{self.repr(k)}: {self.repr(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({self.repr(arg.start)}, {self.repr(arg.stop)}, {self.repr(arg.step)})"
        if isinstance(arg, float) and (math.isinf(arg) or math.isnan(arg)):
            return "nan" if math.isnan(arg) else ("inf" if arg > 0 else "-inf")
        if isinstance(arg, dtype):
            return "torch." + str(arg).rpartition(".")[2]
        if isinstance(arg, device):
            return f"{self.add_global('device', device)}({str(arg)!r})"
        if callable(arg) and not isinstance(arg, (int, float, complex, str, bool)):
            return self.add_global(getattr(arg, "__name__", "fn"), arg)
        return repr(arg)

    def args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.repr(a) for a in args] + [f"{k} = {self.repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)


def _last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """{user: the nodes whose last use it is}, for the ``name = None`` that frees them."""
    seen: set[Node] = set()
    last: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        def register(n: Node, user: Node = node) -> None:
            if n not in seen:
                seen.add(n)
                last.setdefault(user, []).append(n)
        map_arg(node.args, register)
        map_arg(node.kwargs, register)
    return last


def _statement(node: Node, w: _Writer, root_module: str, wrapped: dict[str, None]) -> str:
    name = node.name
    if node.op == "call_method":
        return f"{name} = {format_target(w.repr(node.args[0]), node.target)}({w.args(node.args[1:], node.kwargs)})"
    if node.op == "call_module":
        return f"{name} = {format_target(root_module, node.target)}({w.args(node.args, node.kwargs)})"
    if node.op == "get_attr":
        return f"{name} = {format_target(root_module, node.target)}"
    if node.op == "output":
        return f"return {w.repr(node.args[0])}"
    target = node.target
    op_name = getattr(target, "__name__", "")
    if getattr(target, "__module__", "") == "_operator" and op_name in magic_methods and not node.kwargs:
        return f"{name} = {magic_methods[op_name].format(*(w.repr(a) for a in node.args))}"
    if getattr(target, "__module__", "") == "_operator" and op_name in inplace_methods and not node.kwargs:
        return f"{inplace_methods[op_name].format(*(w.repr(a) for a in node.args))};  {name} = {w.repr(node.args[0])}"
    global_name = w.add_global(qualified_name(target), target)
    if (global_name == "getattr" and len(node.args) == 2 and isinstance(node.args[1], str)
            and node.args[1].isidentifier()):
        return f"{name} = {format_target(w.repr(node.args[0]), node.args[1])}"
    if node.meta.get("is_wrapped", False):
        wrapped.setdefault(global_name)
    return f"{name} = {global_name}({w.args(node.args, node.kwargs)})"


def generate(graph: Graph, root_module: str) -> PythonCode:
    """``forward``'s source and globals."""
    w = _Writer()
    for node in graph.nodes:  # node names are taken first, so globals never shadow them
        w.namespace.create_name(node.name, node)
    last_uses = _last_uses(graph)
    free_vars = [root_module]
    body: list[str] = []
    wrapped: dict[str, None] = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            default = f" = {w.repr(node.args[0])}" if node.args else ""
            free_vars.append(f"{node.target}{default}")
            raw_name = node.target.replace("*", "")
            if raw_name != node.name:
                body.append(f"{node.name} = {raw_name}\n")
            continue
        body.append(_statement(node, w, root_module, wrapped))
        if node.op == "output":
            body.append("\n")
            continue
        to_delete = list(last_uses.get(node, []))
        if not node.users:
            to_delete.append(node)
        body.append(f";  {' = '.join([n.name for n in to_delete] + ['None'])}\n" if to_delete else "\n")
    if not body:
        body = ["pass\n"]
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    wrap_stmts = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")' for name in wrapped)
    src = f"\n{wrap_stmts}\n\ndef forward({', '.join(free_vars)}):\n{code}"
    return PythonCode(src, w.globals)
