"""``compile``: PyTorch's graph compiler. ember has none, so compiling returns the model unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable | None = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False, **kwargs: Any):
    """Return ``model`` itself (a decorator doing the same when ``model`` is None).

    Differences from PyTorch: nothing is compiled (ember runs the Python code as written, with the same
    results), and a compiled ``nn.Module`` is the module itself, so its ``state_dict`` keys have no
    ``_orig_mod.`` prefix.
    """
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a callable (an nn.Module or a function), got "
                           f"{type(model).__name__}")
    return model
