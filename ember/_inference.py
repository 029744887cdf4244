"""Inference tensors, as PyTorch's: a tensor made while ``inference_mode()`` is on (and each view of one) is an
inference tensor. Outside inference mode it cannot be changed in place, saved for backward by a recorded op, or
made to require grad, and it has no version counter to read; out-of-place ops on it make normal tensors.

The mark is the type of the tensor's version counter (``Tensor._vc``, shared by a tensor and its views): an
``InferenceCounter`` instead of a plain list. Normal tensors pay nothing: the counter is made at the same cost
while no thread is in inference mode (one global read), every in-place op bumps a counter (whose ``__setitem__``
refuses outside inference mode) and a recorded op compares its saved counters' type with ``list``.
"""

from __future__ import annotations

import threading

SAVED_FOR_BACKWARD = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)
REQUIRES_GRAD_OUTSIDE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
NO_VERSION = "Inference tensors do not track version counter."


class _ThreadInference(threading.local):
    enabled = False  # inference mode on this thread


state = _ThreadInference()
# How many threads are in inference mode now: while 0, a new tensor's counter is a plain list at once.
active = [0]
_count_lock = threading.Lock()


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread (``torch.is_inference_mode_enabled``)."""
    return state.enabled


def set_enabled(mode: bool) -> bool:
    """Turn inference mode on or off for this thread; returns the previous setting (inference_mode's guard)."""
    prev = state.enabled
    if mode != prev:
        with _count_lock:
            active[0] += 1 if mode else -1
        state.enabled = mode
    return prev


class InferenceCounter(list):
    """The version counter of an inference tensor and its views: changing it (every in-place op bumps it) is
    PyTorch's error outside inference mode."""

    __slots__ = ()

    def __setitem__(self, key, value) -> None:
        if not state.enabled:
            raise RuntimeError(INPLACE_OUTSIDE)
        super().__setitem__(key, value)


class DetachedInferenceCounter(InferenceCounter):
    """The counter of ``.data`` or ``detach()`` of an inference tensor: still an inference tensor, but PyTorch lets
    it change in place outside inference mode (``x.data.add_(1)``, ``copy_``, ``zero_``, ``resize_``, ``t_``);
    a view of it is refused as any view of an inference tensor (``graph`` gives it a strict counter)."""

    __slots__ = ()

    __setitem__ = list.__setitem__


class InferenceView(str):
    """How a view of a normal tensor made in inference mode was made (its ``_view_creation``): equal to
    ``"no_grad"``, as autograd treats it as PyTorch does a view made under no_grad, but told apart by its class
    for PyTorch's wording of the error when it is changed in place outside inference mode."""

    __slots__ = ()


MADE_IN_INFERENCE = InferenceView("no_grad")


def view_creation() -> str:
    """The ``_view_creation`` of a view made with grad mode off: made in inference mode, or under no_grad."""
    return MADE_IN_INFERENCE if active[0] and state.enabled else "no_grad"


def new_counter() -> list:
    """A new tensor's version counter: an inference tensor's in inference mode (checked only while some thread
    is in it)."""
    return InferenceCounter((0,)) if active[0] and state.enabled else [0]


def check_inplace(counter) -> None:
    """PyTorch's error for an inference tensor outside inference mode, for an in-place change that bumps no version
    (``resize_``): as the bump does, after the change, so that the op's own errors come first."""
    if counter.__class__ is InferenceCounter and not state.enabled:
        raise RuntimeError(INPLACE_OUTSIDE)
