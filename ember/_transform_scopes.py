"""The ``torch.func`` transforms' scopes running on this thread, innermost last (``ember/func/_scope.py``).

Kept apart, with no imports of ember's, so that ``Tensor.requires_grad``'s setter can tell the innermost scope
about a leaf made inside it (PyTorch's factories make such a tensor at the transform's level, so that it is none of
the caller's: ``grad``'s result does not depend on it outside)."""

from __future__ import annotations

import threading


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # (per thread: another thread's transform leaves this thread's leaves alone)


scopes = _Scopes()
