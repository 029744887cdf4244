"""``ember.nn.attention``: choosing the kernel of ``scaled_dot_product_attention``, as ``torch.nn.attention``.

ember has one attention kernel (NumPy, on the CPU), so the choice changes no result: ``sdpa_kernel``
sets the ``torch.backends.cuda`` switches of the backends given for the ``with`` block and restores
them after it, as PyTorch does, and that is all. Programs written for a GPU (``with
sdpa_kernel(SDPBackend.FLASH_ATTENTION):``) run unchanged.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator

from ..._missing import module_getattr
from ...backends import cuda as _cuda


class SDPBackend(enum.IntEnum):
    """The kernels of ``scaled_dot_product_attention`` PyTorch knows, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    __str__ = enum.Enum.__str__  # "SDPBackend.MATH", as PyTorch prints it


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False) -> Iterator[None]:
    """Within the block, only ``backends`` are enabled (``torch.backends.cuda.flash_sdp_enabled()`` and
    the others read so); the previous switches come back after it. ``set_priority`` (the order to try
    them in) has nothing to order in ember."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends) if isinstance(
        backends, (list, tuple, set)) else None
    if chosen is None or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    with _cuda._sdp_switches({name: b in chosen for b, name in _SWITCH.items()}):
        yield


__getattr__ = module_getattr(__name__)
