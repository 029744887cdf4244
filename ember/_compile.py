"""``compile``: PyTorch's graph compiler. ember has none: a compiled function is the function itself, a compiled
module the module wrapped as PyTorch wraps it (``OptimizedModule``), running as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable | None = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False, **kwargs: Any):
    """A function: the function itself (a decorator doing the same when ``model`` is None). An ``nn.Module``: an
    ``OptimizedModule`` holding it as ``_orig_mod``, as in PyTorch (``state_dict`` keys start with ``_orig_mod.``,
    other attributes are the module's own; ``model.compile()`` compiles in place and keeps the keys).

    Difference from PyTorch: nothing is compiled (ember runs the Python code as written, with the same results).
    """
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a callable (an nn.Module or a function), got "
                           f"{type(model).__name__}")
    from .nn.modules.module import Module

    if isinstance(model, Module):
        from ._dynamo.eval_frame import OptimizedModule

        return OptimizedModule(model)
    return model
