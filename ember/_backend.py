"""The one array-module handle, and the floating-point error state ember computes in.

Every piece of array math in ember comes from ``xp``. Today it is NumPy; a GPU
array library with NumPy's interface (CuPy) can replace it here without any op
changing.

Floating-point errors: PyTorch computes inf/nan silently (``log(0) = -inf``, ``0/0 = nan``),
and so does ember, in its own computations only. NumPy's error state is a context variable,
so ember sets "ignore" around the op dispatch (``Node.apply``), backward, the optimizer step
and its worker threads (``quiet_enter`` / ``quiet_exit``, ``quiet``) and leaves
``numpy.geterr()`` of the user's own code as it was.

Before NumPy loads, its OpenBLAS is told to let idle worker threads sleep at once
(``OPENBLAS_THREAD_TIMEOUT=4``) instead of spinning for about 0.1 s after every
threaded matrix multiply: a spinning worker takes half of the core that ember's own
kernel threads (``ember._parallel``) need next. Only when NumPy is not imported yet
and the variable is unset; ``EMBER_BLAS_TUNING=0`` turns it off. (docs/api.md,
"Process-wide settings", lists every setting of this kind.)
"""

import contextvars
import functools
import os
import sys

blas_tuned = "numpy" not in sys.modules and os.environ.get("EMBER_BLAS_TUNING", "1") != "0" \
    and "OPENBLAS_THREAD_TIMEOUT" not in os.environ
if blas_tuned:
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"

import numpy as xp  # noqa: E402 (after the OpenBLAS setting above, which it reads as it loads)

try:  # NumPy >= 2: the error state is one context variable; setting it to a prepared value costs ~0.1 µs
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    # quiet_enter(): start ignoring floating-point errors in this context; returns the token for ``quiet_exit``.
    # (A partial, not a def: every recorded op calls it, and a C call costs no Python frame.)
    quiet_enter = functools.partial(_extobj_contextvar.set, _make_extobj(all="ignore"))
    quiet_exit = _extobj_contextvar.reset
    # quiet_set(QUIET) is quiet_enter() without the partial's layer: the per-op paths (graph.apply, apply_same,
    # apply_one) call it so, about 25 ns of a recorded ``x + y``'s 2 µs
    quiet_set = _extobj_contextvar.set
    QUIET = quiet_enter.args[0]
except ImportError:  # another array module or NumPy layout: the public context manager (~1 µs)
    def quiet_enter():
        """Start ignoring floating-point errors in this context; returns the token for ``quiet_exit``."""
        state = xp.errstate(all="ignore")
        state.__enter__()
        return state

    def quiet_exit(token) -> None:
        token.__exit__(None, None, None)

    def quiet_set(_state) -> object:
        """``quiet_enter()`` (its argument, ``QUIET``, is NumPy's prepared error state where there is one)."""
        return quiet_enter()

    QUIET = None


def quiet_call(function, *args):
    """``function(*args)`` with floating-point errors ignored (``quiet_enter`` and ``quiet_exit`` around it)."""
    token = quiet_set(QUIET)
    try:
        return function(*args)
    finally:
        quiet_exit(token)


if QUIET is not None:
    # quiet_run(f, *args): ``quiet_call``'s answer, computed inside a context of its own whose error state is
    # "ignore" (``Context.run``: about 0.1 µs less than setting and resetting the variable, and NumPy then finds
    # the state without a lookup in a context just changed). For NumPy's own operators on arrays (``apply_same``):
    # a function that reads other context variables would find their defaults there. A context is entered by one
    # caller at a time: another thread inside it (a large op releases the GIL) or a finalizer run inside it makes
    # ``run`` raise RuntimeError before calling anything, and the caller then takes ``quiet_call``.
    _quiet_context = contextvars.Context()
    _quiet_context.run(quiet_set, QUIET)
    quiet_run = _quiet_context.run
else:
    quiet_run = quiet_call


class quiet:
    """``with quiet():`` computes with floating-point errors ignored (inf/nan silently), as PyTorch does.

    ``numpy.errstate(all="ignore")`` in a quarter of its cost (for the paths that do not go through
    ``Node.apply``: in-place updates, comparisons, casts at creation, the optimizer step).
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = quiet_enter()

    def __exit__(self, *exc) -> None:
        quiet_exit(self._token)


def _ufunc_out_ellipsis() -> bool:
    """Whether ufuncs take ``out=...`` (NumPy 2.3 on): a full reduction then answers a 0-d array, not a scalar."""
    try:
        xp.add.reduce(xp.zeros(1), None, None, keepdims=False, out=...)
    except TypeError:
        return False
    return True


ufunc_out_ellipsis = _ufunc_out_ellipsis()

__all__ = ["xp", "ufunc_out_ellipsis"]
