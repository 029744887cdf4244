"""``torch._dynamo``: the few names that libraries import from PyTorch's graph compiler.

ember compiles nothing (see ``ember.compile``), so these answer as PyTorch does outside a compiled region:
``is_compiling()`` is False, ``disable`` returns the function as it is, ``reset`` has no caches to clear, and
the tracing markers (``assume_constant_result``, ``allow_in_graph``) return their function.
"""

from __future__ import annotations

from collections.abc import Callable

from .._missing import module_getattr
from ..compiler import disable, is_compiling, reset

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling", "reset"]


def assume_constant_result(fn: Callable) -> Callable:
    """Mark ``fn``'s result as a constant for tracing: ``fn`` itself, as PyTorch runs it eagerly."""
    return fn


def allow_in_graph(fn: Callable) -> Callable:
    """Let tracing put ``fn`` into the graph uninspected: ``fn`` itself, as PyTorch runs it eagerly."""
    return fn

__getattr__ = module_getattr(__name__)
