"""``ember.compiler``: the names of ``torch.compiler`` that model code uses.

ember compiles nothing (see ``ember.compile``): ``disable`` returns the function as it is, and
``is_compiling()`` is always False, as in PyTorch outside a compiled region.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._compile import compile
from ._missing import module_getattr

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "disable", "is_compiling", "is_dynamo_compiling",
           "reset"]


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Keep ``fn`` out of compilation: ``fn`` itself (a decorator doing the same when ``fn`` is None)."""
    return (lambda f: f) if fn is None else fn


def is_compiling() -> bool:
    """False: ember never traces code for compilation."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def assume_constant_result(fn: Callable) -> Callable:
    """Mark ``fn``'s result as a constant for tracing: ``fn`` itself, as PyTorch runs it eagerly."""
    return fn


def allow_in_graph(fn: Callable) -> Callable:
    """Let tracing put ``fn`` into the graph uninspected: ``fn`` itself, as PyTorch runs it eagerly."""
    return fn


def reset() -> None:
    """Clear compilation caches: ember has none."""


__getattr__ = module_getattr(__name__)
