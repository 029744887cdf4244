"""``ember.utils.checkpoint``: activation checkpointing's API, as ``torch.utils.checkpoint``.

PyTorch's checkpointing trades compute for memory: it frees a segment's activations after the forward
and recomputes them in backward. The values and gradients are those of running the segment plainly,
which is what ember does. Difference from PyTorch: no memory is saved (the activations are kept).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._missing import module_getattr

__all__ = ["checkpoint", "checkpoint_sequential"]

_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Callable | None = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, with the same values and gradients as PyTorch's checkpointed call."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return function(*args, **kwargs)


def checkpoint_sequential(functions: Sequence[Callable] | Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """``functions`` (a list or an ``nn.Sequential``) applied in turn to ``input``, in ``segments`` checkpointed
    runs in PyTorch (one plain run here: the same result)."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    for fn in fns:
        input = fn(input)
    return input


__getattr__ = module_getattr(__name__)
