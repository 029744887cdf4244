"""Warnings that point at the user's line, not at ember's own frames (``warn_named``, ``warn``'s ``through``: one
that PyTorch issues from a frame of its own module's code also names that module, for the filters programs write by
module: ``filterwarnings("ignore", module="torch")``, ``-W ignore::UserWarning:torch.nn.modules.loss``), except
those ``warn_in`` issues: from ember's frame that stands for PyTorch's own, once per process as PyTorch's.

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
from collections.abc import Iterator, Mapping

_EMBER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel(skip: int = 1) -> int:
    """The ``stacklevel`` that makes ``warnings.warn`` point at the first frame outside ember, when it is
    called from the function ``skip`` frames up (1: the caller of this function)."""
    frame, level = sys._getframe(skip), 1
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str, category: type[Warning] = UserWarning, through: Mapping[str, str] | None = None) -> None:
    """``warnings.warn(message, category)`` attributed to the user's line that led into ember.

    ``through``: where PyTorch's own Python code issues the warning from a frame of its own (its ``stacklevel``
    stops short of the user's line), the module that frame names for the filters (``warn_named``), by the path the
    call took: {ember module (a prefix of its ``__name__``) the call came through: PyTorch's module}, the first
    met going up from the warning wins; key ``""``: PyTorch's module when none is met (without it, the user's
    module). ``{"ember.nn.modules.loss": "torch.nn.modules.loss"}``: PyTorch's warning names its loss modules'
    module when a loss module's forward called the functional, the user's line when the user called it."""
    frame, level = sys._getframe(1), 2  # warnings.warn's stacklevel 2: this function's caller
    module = None
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        if through and module is None:
            name = frame.f_globals.get("__name__", "")
            module = next((torch for prefix, torch in through.items() if prefix and name.startswith(prefix)), None)
        frame, level = frame.f_back, level + 1
    module = through.get("") if through and module is None else module
    if module is None:
        warnings.warn(message, category, stacklevel=level)
    else:
        warn_named(module, message, category)


def warn_above_caller(message: str, category: type[Warning], levels: int, through: Mapping[str, str]) -> None:
    """``warnings.warn(message, category, stacklevel=levels + 3)`` issued, as PyTorch's helpers issue it, from a
    helper of a public function (this function's caller's caller, ``F.softmax`` for ``_implicit_dim``): PyTorch's
    warning names the frame ``levels`` frames above that function's caller (``levels`` 0: the caller's line;
    ``nn.Softmax.forward`` passes ``_stacklevel=5``, 2: the line that called ``forward``, the caller of that line
    when ``forward`` is called directly). ember's argument-alias wrapper frames do not count. Where the climb meets
    a frame of a module in ``through`` (ember's ``Module.__call__``, where PyTorch's frame is its own), or ends on
    ember's own code, it is ``warn``'s: the user's line, ``through``'s module."""
    frame, level = sys._getframe(3), 4  # the public function's caller, and warnings.warn's stacklevel for it
    while frame is not None and frame.f_code.co_filename == _ALIASES_FILE:
        frame, level = frame.f_back, level + 1
    for _ in range(levels):
        if frame is None or any(frame.f_globals.get("__name__", "").startswith(m) for m in through if m):
            break
        frame, level = frame.f_back, level + 1
    else:
        if frame is not None and not frame.f_code.co_filename.startswith(_EMBER_DIR):
            warnings.warn(message, category, stacklevel=level)
            return
    warn(message, category, through=through)


_ALIASES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_arg_aliases.py")


def warn_in(module: str, message: str, category: type[Warning] = UserWarning, stacklevel: int = 1) -> None:
    """``warn``, the warning issued as PyTorch issues it from its own code (``warnings.warn`` at stacklevel 1, or
    its C++ warning raised in its own Python frame): from the frame of ember that calls this, its file and line
    ember's as PyTorch's name its own, named after PyTorch's module ``module`` (``"torch.jit._script"``). So the
    filters programs write for PyTorch's warnings (``filterwarnings("ignore", module="torch")``, pytest's
    ``ignore:...:DeprecationWarning:torch``) apply to it, a DeprecationWarning is hidden by default as PyTorch's is
    (Python shows those of ``__main__`` only), and the ``default`` action shows it once per process, as PyTorch's
    (at the user's line it showed once per line of the program that called). ``stacklevel`` 2: from the frame
    that called this function's caller, as PyTorch's ``stacklevel=2`` in a base class's ``__init__`` names its
    subclass's ``super().__init__`` line (once per subclass); a frame outside ember (the base class made
    directly) is the user's line, named after its own module."""
    frame = sys._getframe(stacklevel)
    if not frame.f_code.co_filename.startswith(_EMBER_DIR):
        module = frame.f_globals.get("__name__", "__main__")
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno, module, registry)


def warn_named(module: str, message: str, category: type[Warning] = UserWarning) -> None:
    """``warn`` at the user's line, named after PyTorch's module ``module`` for the filters (``warn``'s ``through``
    and ``warn_once``'s ``module``: warnings whose frequency is decided otherwise, by the path the call took or
    once per process)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        frame = frame.f_back
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno, module, registry)


@contextlib.contextmanager
def keeping_registries() -> Iterator[None]:
    """Within, a change of the warning filters does not make warnings already shown show again.

    Python forgets, at every change of its filters, which warnings each module has shown (so that a new filter
    applies to them): a library that adds a filter as it is imported (SciPy's ``ignore`` of a NumPy message) in
    the middle of a run makes the warnings PyTorch shows once per line ("default") show a second time. ember's
    lazy imports (numba's, which imports SciPy, on the first compiled kernel) run within this, so a program's
    warnings show as often as under PyTorch, which imports those libraries at no such point."""
    # Entered from several threads at once (ember's pool compiles kernels on its workers) and left in any order:
    # the first entry swaps the hooks out, the last exit puts them back (a thread that saved another's stand-in
    # would otherwise restore it, leaving the registries kept for good).
    global _keeping_depth
    module = sys.modules[warnings.filterwarnings.__module__]  # (``warnings`` itself up to Python 3.13)
    with _keeping_lock:
        if _keeping_depth == 0:
            _kept_hooks.update({n: getattr(module, n) for n in ("_filters_mutated", "_filters_mutated_lock_held")
                                if hasattr(module, n)})
            for n in _kept_hooks:
                setattr(module, n, _no_op)
        _keeping_depth += 1
    try:
        yield
    finally:
        with _keeping_lock:
            _keeping_depth -= 1
            if _keeping_depth == 0:
                for n, fn in _kept_hooks.items():
                    setattr(module, n, fn)
                _kept_hooks.clear()


_keeping_lock = threading.Lock()
_keeping_depth = 0
_kept_hooks: dict = {}  # the warnings module's hooks while ``keeping_registries`` holds them


def _no_op() -> None:
    pass


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


def warn_once(message: str, category: type[Warning] = UserWarning,
              module: str | Mapping[str, str] | None = None) -> None:
    """``warn``, the first time ``message`` is warned in this process only (PyTorch's ``TORCH_WARN_ONCE``,
    whatever the warning filters did with that first one). ``module``: PyTorch's Python module that issues it from
    its own code (``warn_named``), where PyTorch's warning names that module rather than the user's line; or, by the
    path the call took, ``warn``'s ``through``."""
    if message not in _warned_once and message not in getattr(_muted, "messages", ()):
        _warned_once.add(message)
        if isinstance(module, str):
            warn_named(module, message, category)
        else:
            warn(message, category, through=module)
