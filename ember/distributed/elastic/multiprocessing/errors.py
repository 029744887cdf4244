"""``record``: the decorator torchrun scripts put on their ``main`` (``@record def main(): ...``).

PyTorch's writes the uncaught exception of a rank to the file named by ``TORCHELASTIC_ERROR_FILE`` for torchrun to
report, then re-raises it. Under ember's launcher a failing rank is reported already (its traceback, prefixed
``[ember rank R]``, and the launcher's summary naming the rank that failed first: docs/failures.md), so ``record``
adds nothing to the function: exceptions pass through unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def record(fn: Callable[..., T], error_handler: Any = None) -> Callable[..., T]:
    """``fn`` unchanged in behaviour (``functools.wraps``): ember's launcher reports a rank's failure itself."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return fn(*args, **kwargs)

    return wrapper


__all__ = ["record"]
