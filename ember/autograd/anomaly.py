"""Anomaly detection: name the first op whose backward produced NaN (inf passes, as in PyTorch).

With ``set_detect_anomaly(True)`` every node remembers the stack where forward
created it, and backward checks each gradient it computes. Costly: for
debugging only, as in PyTorch. As PyTorch's, ``detect_anomaly()`` warns that it is
on, and a node whose backward fails (NaN, a saved tensor changed in place, any
error) warns with the traceback of the forward call that made it before its
error propagates (``warn_failure``).
"""

from __future__ import annotations

import os
import warnings

from .._backend import xp
from .._dtype import np_kind
from .grad_mode import _GradState, _ThreadGradState


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside it: each node records the forward
    stack that created it, and, with ``check_nan=True`` (the default), backward raises at the first gradient with
    NaN (real or complex; inf is no anomaly, as in PyTorch). ``check_nan=False`` keeps the traces (they appear in
    other autograd errors) without the check."""

    def __init__(self, check_nan: bool = True) -> None:
        self._check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self._prev = (_GradState.anomaly, _GradState.anomaly_check_nan)
        _set(True, self._check_nan)

    def __exit__(self, *exc) -> None:
        _set(*self._prev)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):  # (the warning came once, when the decorator was made)
            prev = (_GradState.anomaly, _GradState.anomaly_check_nan)
            _set(True, self._check_nan)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(*prev)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off for the whole process (``check_nan`` as in :class:`detect_anomaly`).
    Takes effect when called; used as a context manager, the previous setting comes back at its end."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (_GradState.anomaly, _GradState.anomaly_check_nan)
        _set(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set(*self._prev)


def _set(mode: bool, check_nan: bool) -> None:
    # process-wide, as PyTorch's: set on the class, read through any thread's state
    _ThreadGradState.anomaly, _ThreadGradState.anomaly_check_nan = mode, check_nan


def is_anomaly_enabled() -> bool:
    return _GradState.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether backward checks gradients for NaN while anomaly detection is on."""
    return _GradState.anomaly_check_nan


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record_creation(node) -> None:
    """Keep the forward call's traceback with ``node``: the caller's frames, without ember's own at its end (the
    op's internals, which PyTorch runs in C++) nor the compat runner's at its start."""
    import traceback  # (here: only anomaly mode needs it)

    from ..compat import is_runner_file

    stack = traceback.extract_stack()
    while stack and os.path.abspath(stack[-1].filename).startswith(_EMBER_DIR + os.sep):
        stack.pop()
    # nor the frames of ``python -m ember.compat`` above the program's first: PyTorch's traceback of
    # ``python script.py`` starts at the script
    start = 0
    while start < len(stack) - 1 and is_runner_file(stack[start].filename):
        start += 1
    stack = stack[start:]
    node._trace = "".join(traceback.format_list(stack))


def warn_failure(node) -> None:
    """PyTorch's warning for a node whose backward failed under anomaly mode: its forward call's traceback."""
    trace = getattr(node, "_trace", None)
    if trace is None:
        detail = "No forward pass information available. Enable detect anomaly during forward pass for more " \
                 "information."
    else:
        detail = f"Traceback of forward call that caused the error:\n{trace}"
    warnings.warn(f"Error detected in {node.name()}. {detail}", UserWarning, stacklevel=2)  # (its full name)


def check_grads(node, input_grads) -> None:
    for i, g in enumerate(input_grads):
        if g is not None and np_kind(g.dtype) in ("f", "c") and xp.isnan(getattr(g, "values", g)).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
