"""``ember.backends.cudnn``: cuDNN's flags, kept and never used (ember has no cuDNN).

The defaults are PyTorch's: ``enabled`` True, ``benchmark`` False,
``deterministic`` False, ``allow_tf32`` True, ``fp32_precision`` "none". ember's results do not depend on
them (NumPy on the CPU is already deterministic).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .._missing import module_getattr

enabled: bool = True
benchmark: bool = False
benchmark_limit: int = 10
deterministic: bool = False
allow_tf32: bool = True
fp32_precision: str = "none"  # (PyTorch 2.9's TF32 switch: "tf32", "ieee" or "none"; read back as set)


def is_available() -> bool:
    """False: ember uses no cuDNN."""
    return False


def version() -> None:
    """None, as PyTorch answers without cuDNN."""
    return None


def is_acceptable(tensor) -> bool:
    """False: no tensor goes to cuDNN."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
          allow_tf32: bool = True) -> Iterator[None]:
    """Set the flags inside a ``with`` block and restore them after, as ``torch.backends.cudnn.flags``."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    values = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    module = globals()
    saved = {n: module[n] for n in names}
    module.update(zip(names, values))
    try:
        yield
    finally:
        module.update(saved)


__getattr__ = module_getattr(__name__)
