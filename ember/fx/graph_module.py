"""``torch.fx.GraphModule``: an ``nn.Module`` whose ``forward`` is the Python code of a Graph.

It holds the submodules, parameters, buffers and constants the graph's ``call_module``/``get_attr`` nodes name
(copied by reference from the root, at the same dotted paths, so ``state_dict()`` has the root's keys for what the
graph uses). ``recompile()`` regenerates ``forward`` after the graph changed; assigning ``gm.graph`` does it too.
"""

from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any

from .._tensor import Tensor
from ..nn import Module, Parameter
from .graph import Graph, PythonCode

_counter = itertools.count()


def _forward_from_src(src: str, globals_: dict) -> Any:
    """Execute ``src`` and return its ``forward``; the source is registered with linecache, so tracebacks
    through the generated code show its lines."""
    key = f"<eval_with_key>.{next(_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    namespace = dict(globals_)
    exec(compile(src, key, "exec"), namespace)  # noqa: S102 - the code FX generated from the graph
    return namespace["forward"]


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """``to_module.<target> = from_module.<target>``, creating empty intermediate modules along the path."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # the whole submodule is already installed
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    # A tensor that is not a parameter (a buffer, a plain tensor attribute, a traced constant) becomes a buffer,
    # as in PyTorch (a non-persistent buffer of the root becomes a persistent one).
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    setattr(to_module, field, from_obj)


class GraphModule(Module):
    """``GraphModule(root, graph, class_name="GraphModule")``: ``root`` is the module the graph was traced from
    (or a dict of the objects the targets name); ``type(gm).__name__`` is ``class_name``."""

    def __new__(cls, *args: Any, **kwargs: Any):
        # Each instance gets its own class, so that recompile() can set ``forward`` on it (as PyTorch does).
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):  # type: ignore[valid-type, misc]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           "provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.__dict__["meta"] = getattr(root, "meta", {}) if isinstance(root, Module) else {}
        self._tracer_cls = graph._tracer_cls
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph ``forward`` was generated from; assigning one regenerates ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``."""
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from ``self.graph`` (after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(python_code.src, python_code.globals)
        return python_code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at dotted path ``target``, creating empty intermediate modules; False if a part of the
        path exists and is not a Module."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module`` or ``get_attr`` node reaches (their ancestors are kept)."""
        used: set[str] = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":  # a called module needs all it holds
                    used.update(f"{node.target}.{name}" for name, _ in self.get_submodule(node.target)
                                .named_modules() if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The module as a class with its generated ``forward`` (printed unless ``print_output`` is False)."""
        body = "\n".join("    " + line if line else line for line in self._code.strip("\n").split("\n"))
        text = f"class {type(self).__name__}(torch.nn.Module):\n{body.rstrip()}\n"
        if print_output:
            print(text)
        return text

    def __repr__(self) -> str:
        return "\n".join([super().__repr__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def _attributes(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code", "meta")}

    def __deepcopy__(self, memo: dict) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        holder = Module()
        holder.__dict__.update(copy.deepcopy(self._attributes(), memo))
        res.__init__(holder, copy.deepcopy(self._graph), type(self).__name__)
        return res

    def __reduce__(self):
        # The per-instance class cannot be pickled by name: pickle the attributes and the graph, and rebuild.
        return _rebuild_graph_module, (self._attributes(), self._graph, type(self).__name__)

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self._graph)
        res.__dict__["meta"] = getattr(self, "meta", {})
        return res


def _rebuild_graph_module(attributes: dict[str, Any], graph: Graph, class_name: str) -> GraphModule:
    """The GraphModule that ``GraphModule.__reduce__`` pickled."""
    holder = Module()
    holder.__dict__.update(attributes)
    return GraphModule(holder, graph, class_name)
