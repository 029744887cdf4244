"""Grad mode: whether ops record the graph.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` work as
context managers and as decorators, like PyTorch's.

The flag is per thread, as PyTorch's: ``no_grad()`` in one thread leaves the others
recording, and every new thread starts with recording on. Anomaly mode is process-wide,
as PyTorch's.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar, overload

from .. import _inference

_F = TypeVar("_F", bound=Callable[..., Any])
_Mode = TypeVar("_Mode", bound="_BareDecoratable")


class _ThreadGradState(threading.local):
    """Grad mode per thread: a thread reads the class's values until it sets its own."""

    enabled = True
    # Grad mode turned on inside inference mode (``enable_grad()`` there): ``is_grad_enabled()`` says True, as
    # PyTorch's, but ops record nothing (``enabled`` stays False), as inference mode excludes autograd in PyTorch.
    requested = False
    # True while a create_graph backward runs on this thread: gradients are recorded tensors (recorded.py).
    higher_order = False
    # Process-wide (set on the class by ember.autograd.set_detect_anomaly, read through any thread's state).
    anomaly = False
    anomaly_check_nan = True  # with anomaly on: backward checks each gradient for NaN/inf


_GradState = _ThreadGradState()


def is_grad_enabled() -> bool:
    """Whether grad mode is on (ops record the autograd graph, except inside inference mode)."""
    return _GradState.enabled or _GradState.requested


def _set_grad_mode(mode: bool) -> tuple[bool, bool]:
    """Set grad mode on this thread; returns the previous state for ``_restore_grad_mode``. Inside inference mode,
    turning it on is only reported (``is_grad_enabled``): ops still record nothing, as PyTorch's."""
    prev = _GradState.enabled, _GradState.requested
    if mode and _inference.state.enabled:
        _GradState.enabled, _GradState.requested = False, True
    else:
        _GradState.enabled, _GradState.requested = mode, False
    return prev


def _restore_grad_mode(prev: tuple[bool, bool]) -> None:
    _GradState.enabled, _GradState.requested = prev


def _decorated(fn: _F, mode: Callable[[], Any]) -> _F:
    """``fn`` run inside the context manager ``mode()`` makes, as PyTorch's grad-mode decorators: a generator
    function's body runs inside it at each step (each ``next``, ``send``, ``throw`` and ``close``), between
    steps the caller's mode holds."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def stepped(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with mode():
                    value = gen.send(None)
                while True:
                    try:
                        sent = yield value
                    except GeneratorExit:
                        with mode():
                            gen.close()
                        raise
                    except BaseException as err:  # (thrown into this generator: passed on to fn's)
                        with mode():
                            value = gen.throw(err)
                    else:
                        with mode():
                            value = gen.send(sent)
            except StopIteration as stop:
                return stop.value

        return stepped  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mode():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _ModeBlock:
    """Grad mode set to ``target`` for a ``with`` block (what a decorator enters at each call)."""

    __slots__ = ("_target", "_prev")

    def __init__(self, target: bool) -> None:
        self._target = target

    def __enter__(self) -> None:
        self._prev = _set_grad_mode(self._target)

    def __exit__(self, *exc: Any) -> None:
        _restore_grad_mode(self._prev)


class _GradModeContext:
    """Base for the grad-mode context managers; also usable as a decorator (of a generator function too)."""

    _target = True

    def __enter__(self) -> None:
        self._prev = _set_grad_mode(self._target)

    def __exit__(self, *exc: Any) -> None:
        _restore_grad_mode(self._prev)

    def __call__(self, fn: _F) -> _F:
        target = self._target
        return _decorated(fn, lambda: _ModeBlock(target))


class _BareDecoratable(_GradModeContext):
    """Allows ``@no_grad`` without parentheses, as PyTorch does."""

    @overload
    def __new__(cls: type[_Mode], orig_func: None = None) -> _Mode: ...

    @overload
    def __new__(cls, orig_func: _F) -> _F: ...

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        self = super().__new__(cls)
        return self(orig_func) if orig_func is not None else self

    def __init__(self, orig_func: Callable | None = None) -> None:
        pass


class no_grad(_BareDecoratable):
    """Disable graph recording: results have ``requires_grad=False`` and no ``grad_fn``."""

    _target = False


class enable_grad(_BareDecoratable):
    """Re-enable graph recording inside a ``no_grad`` region."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``. Takes effect at once (as in PyTorch) and restores on exit."""

    def __init__(self, mode: bool) -> None:
        self._target = bool(mode)
        self._prev = _set_grad_mode(self._target)

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: _F) -> _F:
        # as a decorator, the mode set at once by ``__init__`` is undone: it applies inside ``fn`` only (PyTorch's)
        _restore_grad_mode(self._prev)
        return super().__call__(fn)


class inference_mode(_GradModeContext):
    """PyTorch's inference mode: grad mode off, and every tensor made inside is an inference tensor
    (``Tensor.is_inference()``; ember/_inference.py), which outside inference mode cannot be changed in place,
    saved for backward or made to require grad. ``mode=False`` turns both off for its block: grad mode on, new
    tensors normal. A context manager and a decorator (also bare, ``@inference_mode``), as PyTorch's."""

    def __new__(cls, mode: bool | Callable = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):  # @inference_mode without parentheses
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode: bool | Callable = True) -> None:
        self.mode = bool(mode) if not callable(mode) else True
        self._target = not self.mode

    def __enter__(self) -> None:
        self._prev = (_GradState.enabled, _GradState.requested, _inference.set_enabled(self.mode))
        _GradState.enabled, _GradState.requested = self._target, False

    def __exit__(self, *exc: Any) -> None:
        _GradState.enabled, _GradState.requested = self._prev[0], self._prev[1]
        _inference.set_enabled(self._prev[2])

    def __call__(self, fn: _F) -> _F:
        mode = self.mode
        return _decorated(fn, lambda: inference_mode(mode))


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread."""
    return _inference.state.enabled


def is_inference(input: Any) -> bool:
    """``input.is_inference()``: whether ``input`` is an inference tensor (made under ``inference_mode()``)."""
    from .._tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()
