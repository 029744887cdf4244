"""``torch.overrides``: torch function modes (``TorchFunctionMode``), for the functions public programs intercept.

A mode entered with ``with Mode():`` sees, through its ``__torch_function__(func, types, args, kwargs)``, the calls
made inside the block to ember's tensor factories (``MODE_FACTORIES``: ``torch.empty``, ``zeros``, ``ones``,
``full``, ``rand``, ``randn``, ``randint``, ``arange``, ``tensor``, the ``*_like`` ones, ...) and to the
``torch.nn.init`` functions PyTorch itself dispatches (``uniform_``, ``normal_``, ``constant_``,
``kaiming_uniform_``, with their arguments as keywords, as PyTorch's). Inside ``__torch_function__`` the mode is
off (calling ``func`` runs it, or hands it to the mode entered before); modes nest and are per thread.

Differences from PyTorch: no other function, Tensor method or operator is dispatched to a mode (ember's ops do
not go through ``__torch_function__``), and neither are the factories ember's own layers call internally (an
``nn.Linear`` builds its parameters without passing through the mode, where PyTorch shows the mode its
``torch.empty`` calls; its ``kaiming_uniform_`` and ``uniform_`` calls are shown, as PyTorch's).
``func.__module__`` names ember's module (``ember.nn.init``), where PyTorch's names ``torch.nn.init``.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ._missing import module_getattr

__all__ = ["TorchFunctionMode"]

_F = TypeVar("_F", bound=Callable[..., Any])

# the public factories a mode sees (the names in ember's namespace, wrapped by ``dispatch_factories``)
MODE_FACTORIES = ("empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
                  "logspace", "eye", "tensor", "as_tensor", "empty_like", "zeros_like", "ones_like", "full_like",
                  "rand_like", "randn_like", "randint_like", "empty_strided", "scalar_tensor")

_local = threading.local()
_entered = [0]  # modes entered in any thread: the factories' fast path reads this alone


def _stack() -> list[TorchFunctionMode]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _handled(func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` handed to this thread's innermost mode, which is off while it handles it; ``func``
    itself where no mode is entered in this thread. A call without keywords hands the mode ``kwargs=None``, as
    PyTorch's (a mode may test ``kwargs is None``)."""
    stack = _stack()
    if not stack:
        return func(*args, **kwargs)
    mode = stack.pop()
    try:
        result = mode.__torch_function__(func, types, args, kwargs or None)
    finally:
        stack.append(mode)
    if result is NotImplemented:
        raise TypeError(f"no implementation found for '{func.__module__}.{func.__name__}' on types that implement "
                        f"__torch_function__: {list(types)}")
    return result


def dispatched_to_modes(func: _F) -> _F:
    """``func`` (a factory) handed to the innermost entered mode, with its arguments as given; the mode is given
    this wrapper as its ``func``, which hands a call made while it handles one to the mode entered before."""

    @functools.wraps(func)
    def dispatching(*args: Any, **kwargs: Any) -> Any:
        if not _entered[0] or not _stack():
            return func(*args, **kwargs)
        return _handled(dispatching, (), args, kwargs)

    return dispatching  # type: ignore[return-value]


def dispatched_by_keyword(func: _F) -> _F:
    """``func`` (an ``nn.init`` function whose first parameter is ``tensor``) handed to the innermost entered mode
    with every argument as a keyword, and ``types`` the plain tensor's type (a Parameter's: none), as PyTorch's
    ``handle_torch_function`` calls from ``torch.nn.init``."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def dispatching(*args: Any, **kwargs: Any) -> Any:
        if not _entered[0] or not _stack():
            return func(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        from ._tensor import Tensor

        tensor = bound.arguments.get("tensor")
        types = (Tensor,) if type(tensor) is Tensor else ()
        return _handled(dispatching, types, (), dict(bound.arguments))

    return dispatching  # type: ignore[return-value]


def dispatch_factories(namespace: dict) -> None:
    """Wrap the ``MODE_FACTORIES`` of ember's top-level ``namespace`` with ``dispatched_to_modes``, each named where
    it is installed (pickle finds a function by that name)."""
    from ._arg_aliases import _named_where_reachable

    for name in MODE_FACTORIES:
        namespace[name] = dispatched_to_modes(namespace[name])
        _named_where_reachable(namespace[name], namespace["__name__"], name)


class TorchFunctionMode:
    """A context manager whose ``__torch_function__`` is called for the torch functions run inside it that ember
    dispatches to modes (this module's docstring lists them; PyTorch dispatches every torch function)."""

    def __init__(self) -> None:
        self.inner = None

    def __torch_function__(self, func, types, args=(), kwargs=None) -> Any:
        raise NotImplementedError  # PyTorch's base class does the same: subclasses override it

    def __enter__(self) -> TorchFunctionMode:
        _stack().append(self)
        _entered[0] += 1
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
            _entered[0] -= 1
        return None

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        return cls(*args, **kwargs).__enter__()


__getattr__ = module_getattr(__name__)
