"""Warnings that point at the user's line, not at ember's own frames (``warn_in``: one that PyTorch issues from its
own module's code also names that module, for the filters programs write).

A warning raised deep inside ember (a backward hook, an optimizer step) is about a line of the
user's program: ``loss.backward()``, ``optimizer.step()``. ``warn`` walks up the stack past every
frame whose code lives under the ``ember`` package and warns with that stack level, so the
message carries the user's file and line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator

_EMBER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel(skip: int = 1) -> int:
    """The ``stacklevel`` that makes ``warnings.warn`` point at the first frame outside ember, when it is
    called from the function ``skip`` frames up (1: the caller of this function)."""
    frame, level = sys._getframe(skip), 1
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the user's line that led into ember."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


def warn_in(module: str, message: str, category: type[Warning] = UserWarning) -> None:
    """``warn``, the warning naming PyTorch's Python module ``module`` (``"torch.jit._script"``) that issues it from
    its own code, where ``warnings.warn`` would name the user's module: its file and line are the user's, as
    ``warn``'s, while the filters programs write for PyTorch's warnings (``filterwarnings("ignore",
    module="torch")``, pytest's ``ignore:...:DeprecationWarning:torch``) apply to it, and a DeprecationWarning is
    hidden by default as PyTorch's is (Python shows those of ``__main__`` only)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        frame = frame.f_back
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno, module, registry)


_warned_once: set[str] = set()
_muted = threading.local()  # .messages: the frozenset of messages ``warn_once`` skips on this thread


@contextlib.contextmanager
def muted(message: str) -> Iterator[None]:
    """Within, on this thread, ``warn_once(message)`` neither warns nor uses up its once: for ember's own stand-ins
    of PyTorch's tensors (a transform's inputs made to require grad where PyTorch's see none) on which PyTorch
    would not warn."""
    saved = getattr(_muted, "messages", frozenset())
    _muted.messages = saved | {message}
    try:
        yield
    finally:
        _muted.messages = saved


def warn_once(message: str, category: type[Warning] = UserWarning, module: str | None = None) -> None:
    """``warn``, the first time ``message`` is warned in this process only (PyTorch's ``TORCH_WARN_ONCE``,
    whatever the warning filters did with that first one). ``module``: PyTorch's Python module that issues it from
    its own code (``warn_in``), where PyTorch's warning names that module rather than the user's line."""
    if message not in _warned_once and message not in getattr(_muted, "messages", ()):
        _warned_once.add(message)
        if module is not None:
            warn_in(module, message, category)
        else:
            warnings.warn(message, category, stacklevel=user_stacklevel())
