"""Grad mode: whether ops record the graph.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` work as
context managers and as decorators, like PyTorch's.

Difference from PyTorch: the flag is process-wide, not thread-local. ember runs
no computation on background threads (DDP's all-reduces are nonblocking MPI
calls that backward's own hooks progress), so a plain global keeps every op's
check to one attribute read.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, overload

_F = TypeVar("_F", bound=Callable[..., Any])
_Mode = TypeVar("_Mode", bound="_BareDecoratable")


class _GradState:
    enabled = True
    anomaly = False  # set by ember.autograd.set_detect_anomaly
    # True while a backward runs that writes leaves' .grad (not autograd.grad / inputs=): an op's backward may
    # then put a leaf's first gradient straight into its gradient home (graph.leaf_home_to_fill)
    fill_homes = False


def is_grad_enabled() -> bool:
    """True when ops record the autograd graph."""
    return _GradState.enabled


class _GradModeContext:
    """Base for the grad-mode context managers; also usable as a decorator."""

    _target = True

    def __enter__(self) -> None:
        self._prev = _GradState.enabled
        _GradState.enabled = self._target

    def __exit__(self, *exc: Any) -> None:
        _GradState.enabled = self._prev

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _GradState.enabled
            _GradState.enabled = self._target
            try:
                return fn(*args, **kwargs)
            finally:
                _GradState.enabled = prev

        return wrapper


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
        self._prev = _GradState.enabled
        _GradState.enabled = self._target

    def __enter__(self) -> None:
        pass


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (ember has no separate inference tensors). ``mode=False`` enables grad."""

    def __init__(self, mode: bool = True) -> None:
        self._target = not mode
