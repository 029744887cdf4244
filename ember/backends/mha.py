"""``ember.backends.mha``: PyTorch's switch for the inference fast path of MultiheadAttention and TransformerEncoder.

ember's attention layers always compute on the general path, whose values PyTorch's fast path shares, with one
visible exception that ember follows: the nested-tensor route of ``TransformerEncoder``, which returns zeros at
padded positions (see ``ember.nn.modules.transformer``). Turning the fast path off turns that route off, as in
PyTorch.
"""

from __future__ import annotations

from .._missing import module_getattr

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path may be taken (True by default); it is taken only where the inputs allow it."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Allow (True) or forbid (False) the fast path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value


__getattr__ = module_getattr(__name__)
