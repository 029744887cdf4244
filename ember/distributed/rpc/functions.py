"""``torch.distributed.rpc.functions``: ``async_execution``, a function whose RPC reply waits on the Future it
returns."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ...futures import Future


def async_execution(fn: Callable) -> Callable:
    """Mark ``fn`` as returning a ``Future``: run through RPC (``rpc_sync``, ``rpc_async``, ``remote``), the
    caller receives the Future's value once it completes (its exception, if it fails), as PyTorch's
    ``@rpc.functions.async_execution``. Called directly, ``fn`` returns the Future as it is.

    Difference from PyTorch: the serving worker thread waits for the Future (PyTorch frees it until the Future
    completes), so a chain of such calls holds one of the worker's ``num_worker_threads`` per link."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    wrapper._wrapped_async_rpc_function = fn  # type: ignore[attr-defined]
    return wrapper


def result_of(func: Callable, value: Any) -> Any:
    """What an RPC of ``func`` replies with, given what it returned: for an ``async_execution`` function, the
    value of its Future."""
    if getattr(func, "_wrapped_async_rpc_function", None) is None:
        return value
    if not isinstance(value, Future):
        raise RuntimeError(f"{getattr(func, '__qualname__', func)!s} is decorated with "
                           f"@rpc.functions.async_execution and must return a torch.futures.Future, "
                           f"got {type(value).__name__}")
    return value.wait()


__all__ = ["async_execution"]
