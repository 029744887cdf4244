"""``torch._subclasses``: of PyTorch's tensor subclasses for tracing, only what libraries ask on their ordinary
paths (``fake_tensor.is_fake``)."""

from .._missing import module_getattr

__getattr__ = module_getattr(__name__)
