"""``ember.autograd.profiler``: the older spelling of ``ember.profiler`` (``record_function``, ``profile``)."""

from __future__ import annotations

from .._missing import module_getattr
from ..profiler import profile, record_function

__all__ = ["profile", "record_function"]

__getattr__ = module_getattr(__name__)
