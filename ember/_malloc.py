"""Keep large NumPy buffers in the C heap between training steps (glibc only).

A training step allocates and frees the same large arrays every iteration (conv columns,
activations, their gradients). glibc serves allocations above ``M_MMAP_THRESHOLD`` (128 KiB
at start, adapted upwards as blocks are freed) with fresh ``mmap`` pages and returns freed
heap tops above ``M_TRIM_THRESHOLD`` to the OS, so each step pays page faults to map and
zero the same memory again: about a third of a small CNN's step time here. PyTorch avoids
this with its caching allocator; ember asks glibc to keep blocks up to 32 MiB (the most
glibc allows) in its heap and to keep freed memory for reuse. Peak memory is unchanged;
memory freed after the peak stays with the process for the next step instead of going back
to the OS.

Done once at import. Skipped when the user set glibc's own knobs (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``) or ``EMBER_MALLOC_TUNING=0``, and off glibc.
"""

from __future__ import annotations

import ctypes
import os

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's maximum on 64-bit (HEAP_MAX_SIZE / 2)
_TRIM_THRESHOLD = 1024 * 1024 * 1024

_USER_KNOBS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def tune() -> bool:
    """Apply the settings above; True when glibc accepted them."""
    if os.environ.get("EMBER_MALLOC_TUNING", "1") == "0" or any(k in os.environ for k in _USER_KNOBS):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError, TypeError):  # no mallopt (macOS, Windows): nothing to tune
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


tuned = tune()
