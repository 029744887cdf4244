"""``torch._functorch``: PyTorch's AOT autograd and partitioner; ember has its ``config`` (flags programs set,
no effect: ember compiles nothing) and what the legacy ``functorch`` package is made of (``make_functional``,
``deprecated``, ``legacy_package``: ``import functorch`` under ``python -m ember.compat``)."""

from __future__ import annotations

from .._missing import module_getattr

__getattr__ = module_getattr(__name__)
