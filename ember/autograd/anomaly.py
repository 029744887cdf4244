"""Anomaly detection: name the first op whose backward produced NaN or inf.

With ``set_detect_anomaly(True)`` every node remembers the stack where forward
created it, and backward checks each gradient it computes. Costly: for
debugging only, as in PyTorch.
"""

from __future__ import annotations

import traceback

from .._backend import xp
from .._dtype import np_kind
from .grad_mode import _GradState, _ThreadGradState


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self._mode = check_nan

    def __enter__(self) -> None:
        self._prev = _GradState.anomaly
        _ThreadGradState.anomaly = self._mode  # process-wide, as PyTorch's

    def __exit__(self, *exc) -> None:
        _ThreadGradState.anomaly = self._prev

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with detect_anomaly(self._mode):
                return fn(*args, **kwargs)

        return wrapper


def set_detect_anomaly(mode: bool) -> None:
    """Turn anomaly detection on or off for the whole process."""
    _ThreadGradState.anomaly = bool(mode)


def is_anomaly_enabled() -> bool:
    return _GradState.anomaly


def record_creation(node) -> None:
    node._trace = "".join(traceback.format_stack()[:-3])


def check_grads(node, input_grads) -> None:
    for i, g in enumerate(input_grads):
        if g is not None and np_kind(g.dtype) == "f" and not xp.isfinite(getattr(g, "values", g)).all():
            where = node._trace or "  (created before anomaly detection was enabled)\n"
            raise RuntimeError(
                f"Function '{node.name()}' returned nan or inf values in its {i}th output.\n"
                f"The forward call that created it:\n{where}"
            )
