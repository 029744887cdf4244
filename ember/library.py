"""``torch.library``: operators defined in Python, as ``torch.library.custom_op`` defines them.

``custom_op("ns::name", fn, mutates_args=...)`` returns a callable operator, also reachable as
``torch.ops.ns.name``. Calling it runs ``fn`` eagerly. Its gradient is the one given to ``register_autograd``
(``backward(ctx, *grads)`` after ``setup_context(ctx, inputs, output)`` has saved what backward needs); without
one, backward through the operator raises a RuntimeError, as in PyTorch. ``register_fake`` records the
shape-only implementation that PyTorch's tracing uses; ember runs every op eagerly and never calls it.
Differences from PyTorch: the ``schema`` and ``mutates_args`` are recorded, not checked, and
``device_types`` is accepted (ember has one device).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._missing import module_getattr
from .autograd.function import Function

__all__ = ["CustomOpDef", "custom_op", "register_autograd", "register_fake"]

_OPS: dict[str, CustomOpDef] = {}  # "ns::name" -> operator


class CustomOpDef:
    """An operator made by ``custom_op``: call it like its function."""

    def __init__(self, qualname: str, fn: Callable, mutates_args: Iterable[str] | str, schema: str | None) -> None:
        namespace, sep, name = qualname.partition("::")
        if not sep or not namespace or not name:
            raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator name should look "
                             "something like ns::foo")
        self._qualname, self._namespace, self._name = qualname, namespace, name
        self._init_fn, self._mutates_args, self._schema = fn, mutates_args, schema
        self._backward_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        self._abstract_fn: Callable | None = None
        self._function = self._autograd_function()

    def _autograd_function(self) -> type[Function]:
        op = self

        def forward(ctx, *args):
            output = op._init_fn(*args)
            if op._setup_context_fn is not None:
                op._setup_context_fn(ctx, args, output)
            return output

        def backward(ctx, *grads):
            if op._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {op._namespace}.{op._name}.default but no autograd "
                                   "formula was registered. Please use register_autograd to add one.")
            return op._backward_fn(ctx, *grads)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function.apply(*args, *kwargs.values())

    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """The operator's gradient: ``backward(ctx, *grad_outputs)`` returns one gradient (or None) per input."""
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_fake(self, fn: Callable, /) -> Callable:
        """Record the shape-only implementation (PyTorch's tracing uses it; ember never does)."""
        self._abstract_fn = fn
        return fn

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: Iterable[str] | str,
              device_types: str | Iterable[str] | None = None, schema: str | None = None) -> Any:
    """Make ``fn`` the operator ``name`` ("namespace::op"); without ``fn``, a decorator that does so."""
    def make(f: Callable) -> CustomOpDef:
        op = CustomOpDef(name, f, mutates_args, schema)
        _OPS[name] = op
        return op

    return make if fn is None else make(fn)


def _op(op: str | CustomOpDef) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if op not in _OPS:
        raise RuntimeError(f"operator {op} does not exist (ember has the operators made by custom_op)")
    return _OPS[op]


def register_autograd(op: str | CustomOpDef, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib: Any = None) -> None:
    """Register the gradient of an operator made by ``custom_op`` (see ``CustomOpDef.register_autograd``)."""
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_fake(op: str | CustomOpDef, fn: Callable | None = None, /, *, lib: Any = None,
                  _stacklevel: int = 1) -> Any:
    """Register the shape-only implementation of an operator; without ``fn``, a decorator that does so."""
    return _op(op).register_fake if fn is None else _op(op).register_fake(fn)


class _Namespace:
    """``torch.ops.<namespace>``: the operators of one namespace made by ``custom_op``."""

    def __init__(self, namespace: str) -> None:
        self._namespace = namespace

    def __getattr__(self, name: str) -> CustomOpDef:
        op = _OPS.get(f"{self._namespace}::{name}")
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._namespace}' object has no attribute '{name}'")
        return op


class _OpPacket:
    """``torch.ops.aten.<name>``: one of ember's built-in ops, callable, with its ``overloads()``; an overload
    (``.Scalar``, ``.default``) is the same op (ember dispatches on the arguments)."""

    def __init__(self, name: str, fn: Callable, overloads: list[str]) -> None:
        self._name, self._fn, self._overloads = name, fn, overloads

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, overload: str) -> Callable:
        if overload.startswith("_") or overload not in self._overloads:
            raise AttributeError(f"The underlying op of 'aten.{self._name}' has no overload name '{overload}'")
        return self._fn

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._name}')>"


class _Aten:
    """``torch.ops.aten``: of PyTorch's built-in operators, the ``_foreach_*`` ones (optimizers reach them here)."""

    def __getattr__(self, name: str) -> _OpPacket:
        from .ops import foreach

        if name in foreach.FUNCTIONS:
            return _OpPacket(name, foreach.FUNCTIONS[name], foreach.overloads(name))
        if name.startswith("__"):
            raise AttributeError(name)
        from ._missing import missing

        raise missing("'_OpNamespace' 'aten' object", f"torch.ops.aten.{name}")


def namespace(name: str) -> _Namespace | _Aten | None:
    """``torch.ops.<name>`` if ``custom_op`` made an operator in that namespace (or it is ``aten``), else None."""
    if name == "aten":
        return _Aten()
    return _Namespace(name) if any(q.partition("::")[0] == name for q in _OPS) else None


__getattr__ = module_getattr(__name__)
