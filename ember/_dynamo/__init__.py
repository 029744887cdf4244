"""``torch._dynamo``: the few names that libraries import from PyTorch's graph compiler.

ember compiles nothing (see ``ember.compile``), so these answer as PyTorch does outside a compiled region:
``is_compiling()`` is False, ``disable`` returns the function as it is, ``reset`` has no caches to clear, and
the tracing markers (``assume_constant_result``, ``allow_in_graph``) return their function; ``config`` keeps the
flags programs set (``recompile_limit``); ``OptimizedModule`` (also ``eval_frame.OptimizedModule``, the same class,
as in PyTorch) is what ``torch.compile(module)`` returns.
"""

from __future__ import annotations

from .._missing import module_getattr
from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset
from . import eval_frame
from .eval_frame import OptimizedModule

__all__ = ["eval_frame", "OptimizedModule", "allow_in_graph", "assume_constant_result", "disable", "is_compiling",
           "reset"]

__getattr__ = module_getattr(__name__)
