"""``torch._functorch``: PyTorch's AOT autograd and partitioner; ember has only its ``config`` (flags programs set,
no effect: ember compiles nothing)."""

from __future__ import annotations

from .._missing import module_getattr

__getattr__ = module_getattr(__name__)
