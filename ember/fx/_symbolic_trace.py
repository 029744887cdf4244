"""``torch.fx.symbolic_trace`` and ``Tracer``: run ``forward`` on Proxies and record what it does.

While ``Tracer.trace`` runs: ``nn.Module.__call__`` records ``call_module`` for leaf modules (``is_leaf_module``:
ember.nn's own layers, not ``Sequential``) and runs ``forward`` of the others; ``nn.Module.__getattr__`` turns a
parameter into a ``get_attr`` node; ember's public functions record ``call_function`` and a real tensor's
methods given a Proxy ``call_method`` (``_dispatch.py``); functions named by ``wrap`` and ``math``'s functions
(``math.sqrt``, or imported into the traced code's module) record ``call_function`` instead of running.
Everything is put back when tracing ends, also after an error.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import types
from collections.abc import Callable
from typing import Any

from .. import _assert
from .._tensor import Tensor
from ._dispatch import find_proxy, rebinding, tensor_method_stand_ins
from .graph import Graph, collect_torch_names
from .node import Argument
from .proxy import TracerBase

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

# (id(module globals), name) -> module globals: the functions ``wrap`` registered.
_wrapped_fns_to_patch: dict[tuple[int, str], dict] = {}


_tracing = 0  # traces running (all threads)


def is_fx_tracing() -> bool:
    """Whether ``symbolic_trace`` / ``Tracer.trace`` is running (code may branch on it, as on PyTorch's)."""
    return _tracing > 0


def _assert_is_none(value: Any, msg: str) -> None:
    if value is not None:
        raise AssertionError(msg)


class PHBase:
    """Marks a ``concrete_args`` entry that stays an input (a placeholder) while the others are fixed."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def wrap(fn_or_name: str | Callable) -> Any:
    """Record calls of a module-level function as ``call_function`` nodes instead of tracing into it.

    ``torch.fx.wrap("len")`` or ``@torch.fx.wrap`` at the top level of a module: while tracing, that module's
    global of this name is replaced by a wrapper that records a node when a Proxy is among its arguments.
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


def _recording(orig_fn: Callable, mark_wrapped: bool) -> Callable:
    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        result = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        if mark_wrapped:
            result.node.meta["is_wrapped"] = True
        return result

    return wrapped


class _Patcher:
    """Attribute and dict entries replaced for the length of a trace, restored in reverse order."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def patch_dict(self, d: dict, name: str, value: Any) -> None:
        if name in d:
            old = d[name]
            self._undo.append(lambda: d.__setitem__(name, old))
        else:
            self._undo.append(lambda: d.pop(name, None))
        d[name] = value

    def patch_attr(self, obj: Any, name: str, value: Any) -> None:
        """``obj.name = value`` on a class or object; an inherited attribute is restored by deleting the override."""
        if name in vars(obj):
            old = vars(obj)[name]
            self._undo.append(lambda: setattr(obj, name, old))
        else:
            self._undo.append(lambda: delattr(obj, name))
        setattr(obj, name, value)

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()


def _patch_function(fn: types.FunctionType, nargs: int) -> types.FunctionType:
    """``fn`` with ``*args``/``**kwargs``/keyword-only parameters made plain positional ones (PyTorch's trick,
    so that each can be a single Proxy)."""
    co = fn.__code__
    code = co.replace(co_argcount=nargs, co_kwonlyargcount=0, co_flags=co.co_flags & ~HAS_VARSTUFF)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class Tracer(TracerBase):
    """Records a module's or function's ``forward`` as a Graph (``trace``). Subclass and override
    ``is_leaf_module``, ``create_proxy``, ``create_arg`` or ``call_module`` to change what is recorded.

    ``autowrap_modules``: modules whose functions, imported into the traced code's module, are recorded rather
    than run on Proxies (``math`` by default); ``autowrap_functions``: single functions likewise.
    """

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_function_ids = {id(value) for module in autowrap_modules
                                       for name, value in vars(module).items()
                                       if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.tensor_attrs: dict[int, tuple[Tensor, str]] = {}

    # ------------------------------------------------------------------ what is recorded
    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """Whether ``m`` is recorded as one ``call_module`` node (True for ember.nn's layers, except
        ``Sequential``) rather than traced through."""
        from ..nn import Sequential

        module = type(m).__module__
        return (module.startswith("ember.nn") or module.startswith("torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod) -> str:
        """``mod``'s qualified name in the root module (NameError if it is not one of its submodules)."""
        path = self.submodule_paths.get(mod) if self.submodule_paths is not None else None
        if path is None:
            for name, candidate in self.root.named_modules():
                if candidate is mod:
                    return name
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A leaf module's call becomes a ``call_module`` node; any other runs ``forward`` (traced through)."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A parameter of the root read as an attribute becomes a ``get_attr`` Proxy (one per parameter)."""
        from ..nn import Parameter

        if isinstance(attr_val, Parameter):
            for name, p in self.root.named_parameters():
                if attr_val is p:
                    if name not in parameter_proxy_cache:
                        parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                    return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Argument:
        """Parameters, buffers and tensor attributes of the root become ``get_attr`` nodes; another tensor
        becomes an attribute ``_tensor_constant<i>`` of the root, read by a ``get_attr`` node."""
        from ..nn import Module, Parameter

        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
            known = self.tensor_attrs.get(id(a))
            if known is None or known[0] is not a:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                known = self.tensor_attrs[id(a)] = (a, f"_tensor_constant{i}")
                setattr(self.root, known[1], a)
            return self.create_node("get_attr", known[1], (), {})
        if isinstance(a, Module):
            for name, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("module is not installed as a submodule")
        return super().create_arg(a)

    # ------------------------------------------------------------------ tracing
    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict[str, Any] | tuple | None = None) -> tuple[Callable, list]:
        """Placeholders for ``root_fn``'s parameters (``concrete_args`` fix some of them)."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names = iter(co.co_varnames)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(name, concrete_args, sig) for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names), concrete_args, sig))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names), concrete_args, sig))
            root_fn = _patch_function(fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name: str, concrete_args: dict | None, sig: inspect.Signature) -> Any:
        if concrete_args is not None and name in concrete_args:
            value = concrete_args[name]
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            if isinstance(value, (list, tuple, dict)):
                raise NotImplementedError(
                    f"concrete_args[{name!r}] is a {type(value).__name__}: ember traces concrete arguments that "
                    "are single values (or PH) only; PyTorch also flattens containers of them")
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if isinstance(value, PHBase):
                return out
            if type(value) in (bool, int, float, complex, str):
                self.create_proxy("call_function", _assert, (
                    out == value, f"{name} has been specialized to have value {value} but got another value"), {})
            elif value is None:
                self.create_proxy("call_function", _assert_is_none, (
                    out, f"{name} has been specialized to have value None but got another value"), {})
            else:
                from .._warnings import warn_in

                warn_in("torch.fx._symbolic_trace", f"Was not able to add assertion to guarantee correct input {name} "
                        "to specialized function. It is up to the user to make sure that your inputs match the inputs "
                        "you specialized the function with.")
            return value
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {})

    def trace(self, root, concrete_args: dict[str, Any] | tuple | None = None) -> Graph:
        """Run ``root`` (an ``nn.Module``'s forward, or a function) on Proxies; the Graph of what it did."""
        from ..nn import Module

        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = {mod: name for name, mod in self.root.named_modules()}
        self._collect_tensor_attrs(self.root, [])
        fn_globals = fn.__globals__
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        collect_torch_names()  # while ember's functions are still the originals
        global _tracing
        patcher = _Patcher()
        self._patch(patcher, fn_globals)
        rebinding.enter(extra=(fn_globals,))
        _tracing += 1
        try:
            result = fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get("return", None))
        except Exception as e:
            where = _proxy_in_ember(e.__traceback__)
            if where is not None and hasattr(e, "add_note"):  # Python 3.11+
                e.add_note(f"torch.fx: a Proxy reached {where}, inside ember, which cannot record it. Nodes are "
                           "recorded by ember's public functions called as torch.<name> (or imported into the traced "
                           "code's own module), by Tensor methods and by functions named in torch.fx.wrap: call the "
                           "function so (a helper module's `from torch import relu` is not seen), wrap the helper, "
                           "or keep the layer a leaf module")
            raise
        finally:
            _tracing -= 1
            rebinding.exit()
            patcher.restore()
            self.submodule_paths = None
        return self.graph

    def _collect_tensor_attrs(self, m, prefix: list[str]) -> None:
        """Tensors held as plain attributes of the root's modules: read by ``get_attr`` of their path."""
        for k, v in vars(m).items():
            if isinstance(v, Tensor):
                self.tensor_attrs[id(v)] = (v, ".".join([*prefix, k]))
        for k, child in m.named_children():
            self._collect_tensor_attrs(child, [*prefix, k])

    def _patch(self, patcher: _Patcher, fn_globals: dict) -> None:
        from ..nn import Module

        tracer = self
        cache: dict[str, Any] = {}
        orig_getattr, orig_call = Module.__getattr__, Module.__call__

        def module_getattr_wrapper(mod, attr: str) -> Any:
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        def module_call_wrapper(mod, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            return tracer.call_module(mod, forward, args, kwargs)

        patcher.patch_attr(Module, "__getattr__", module_getattr_wrapper)
        patcher.patch_attr(Module, "__call__", module_call_wrapper)
        for name, stand_in in tensor_method_stand_ins().items():
            patcher.patch_attr(Tensor, name, stand_in)
        # ``from math import sqrt`` in the traced code's module, and ``math.sqrt`` itself
        for namespace in (fn_globals, *(vars(m) for m in self._autowrap_modules)):
            for name, value in list(namespace.items()):
                if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                    patcher.patch_dict(namespace, name, _recording(value, mark_wrapped=True))
        for (_, name), globals_ in _wrapped_fns_to_patch.items():
            orig = globals_[name] if name in globals_ else getattr(builtins, name, None)
            if orig is not None:
                patcher.patch_dict(globals_, name, _recording(orig, mark_wrapped=True))


def _proxy_in_ember(tb) -> str | None:
    """The first ember function (outside ember.fx) in a traceback that holds a Proxy, e.g. ``ember.ops.unary.relu``:
    a plain ember function called on a Proxy."""
    from .proxy import Proxy

    while tb is not None:
        frame = tb.tb_frame
        module = frame.f_globals.get("__name__", "")
        if module.startswith("ember.") and not module.startswith("ember.fx"):
            if any(isinstance(v, Proxy) for v in frame.f_locals.values()):
                return f"{module}.{frame.f_code.co_name}"
        tb = tb.tb_next
    return None


def symbolic_trace(root, concrete_args: dict[str, Any] | tuple | None = None):
    """The GraphModule of ``root`` (an ``nn.Module`` or a function) traced on Proxies (``Tracer``).

    ``concrete_args`` fixes some inputs: their values are used while tracing (so Python control flow on them is
    resolved) and the generated code asserts that later calls pass the same values.
    """
    from ..nn import Module
    from .graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

