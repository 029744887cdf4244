"""The dispatch hook of symbolic tracing: ember's public functions called with a Proxy record a node.

PyTorch's Proxy implements ``__torch_function__``, which every torch function consults. ember has no such
protocol on its functions, so that the plain path stays free: while ``Tracer.trace`` runs, the public functions'
bindings in ember's modules (and in the traced code's own module globals, for ``from torch import relu``) are
replaced by stand-ins (``ember/_rebind.py``, the mechanism vmap uses). A stand-in looks for a Proxy among its
arguments (through lists, tuples and dicts): with one, it records ``call_function`` with the original function as
the target; without, it calls the original. Tensor's methods are likewise replaced on the class while tracing
(``tensor_method_stand_ins``), so that a real tensor's method given a Proxy (``self.mask.add(x)``,
``buffer * x``) records ``call_method`` as PyTorch does. Outside tracing nothing is rebound, so the cost is zero,
except while a Proxy built by hand lives (``Proxy(node, GraphAppendingTracer(graph))``, PyTorch's idiom for
appending to a graph or inlining a function into one): ``hold`` keeps the stand-ins installed from the first such
Proxy's creation until the last one is freed, so that ``torch.cat([p, q])`` on them records a node as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
import weakref

from .._rebind import Rebinding
from .node import map_aggregate
from .proxy import Proxy


def find_proxy(args: tuple, kwargs: dict) -> Proxy | None:
    """The first Proxy among the arguments, else None."""
    for a in args:
        if isinstance(a, Proxy):
            return a
    found: list[Proxy] = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) and not found else None)
    return found[0] if found else None


def _stand_in(original, key: str):
    def stand_in(*args, **kwargs):
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return original(*args, **kwargs)
        return proxy.tracer.create_proxy("call_function", original, args, kwargs)

    functools.update_wrapper(stand_in, original)
    return stand_in


rebinding = Rebinding(_stand_in)


# Tensor's operators as PyTorch's __torch_function__ names them in a call_method node.
_OPERATOR_METHODS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
                     "__matmul__": "matmul", "__pow__": "pow", "__mod__": "remainder", "__gt__": "gt", "__lt__": "lt",
                     "__ge__": "ge", "__le__": "le", "__eq__": "eq", "__ne__": "ne", "__getitem__": "__getitem__",
                     "__floordiv__": "__floordiv__", "__and__": "__and__", "__or__": "__or__", "__xor__": "__xor__",
                     "__lshift__": "__lshift__", "__rshift__": "__rshift__"}
_tensor_stand_ins: dict[str, object] = {}


def _method_stand_in(original, method_name: str):
    def stand_in(self, *args, **kwargs):
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return original(self, *args, **kwargs)
        return proxy.tracer.create_proxy("call_method", method_name, (self, *args), kwargs)

    functools.update_wrapper(stand_in, original)
    return stand_in


def tensor_method_stand_ins() -> dict[str, object]:
    """{attribute name: stand-in} for Tensor's public methods and operators (built once)."""
    if not _tensor_stand_ins:
        import inspect

        from .._tensor import Tensor
        from .._torch_names import TENSOR

        for name in sorted(TENSOR) + list(_OPERATOR_METHODS):
            original = inspect.getattr_static(Tensor, name, None)
            if inspect.isfunction(original):
                _tensor_stand_ins[name] = _method_stand_in(original, _OPERATOR_METHODS.get(name, name))
    return _tensor_stand_ins


_held = [0, None]  # [hand-built Proxies alive, the Tensor methods replaced for them ({name: original})]
_held_lock = threading.Lock()


def hold(proxy: Proxy) -> None:
    """Keep the stand-ins installed while ``proxy``, built by hand on a GraphAppendingTracer, is alive (see the
    module docstring). Inside a trace they are installed already."""
    from ._symbolic_trace import is_fx_tracing

    if is_fx_tracing():
        return
    with _held_lock:
        _held[0] += 1
        if _held[0] == 1:
            import inspect

            from .._tensor import Tensor

            rebinding.enter()
            stand_ins = tensor_method_stand_ins()
            _held[1] = {name: inspect.getattr_static(Tensor, name) for name in stand_ins}
            for name, stand_in in stand_ins.items():
                setattr(Tensor, name, stand_in)
    weakref.finalize(proxy, _release)


def _release() -> None:
    with _held_lock:
        _held[0] -= 1
        if _held[0] == 0:
            from .._tensor import Tensor

            for name, original in _held[1].items():
                setattr(Tensor, name, original)
            _held[1] = None
            rebinding.exit()
