"""``ember.testing``: ``assert_close``, as ``torch.testing`` (``_comparison`` holds it, as in PyTorch)."""

from .._missing import module_getattr
from ._comparison import assert_allclose, assert_close

__all__ = ["assert_close", "assert_allclose"]

__getattr__ = module_getattr(__name__)
