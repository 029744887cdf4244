"""``torch.autograd.graph.register_multi_grad_hook``: one hook over the gradients of several tensors.

``mode="all"``: ``fn`` is called once per backward with a list of the tensors' gradients, once every gradient that
backward computes for them is ready; a tensor the backward does not reach (or, with ``inputs`` given, does not need)
gets None. ``mode="any"``: ``fn`` is called with the first of their gradients a backward computes, once per
backward. As PyTorch's, it is built on the tensors' own hooks (so each tensor must require grad) and ``fn``'s result
is ignored; the returned handle removes all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor

__all__ = ["register_multi_grad_hook"]


class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` (or leaving a ``with`` block) removes each tensor's hook."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _node_of(t: Tensor):
    """The node that computes ``t``'s gradient: its grad_fn, or a leaf's accumulator (None before any op used it)."""
    return t.grad_fn if t.grad_fn is not None else t._grad_accumulator


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., Any], *,
                             mode: str = "all") -> _MultiHandle:
    """Register ``fn`` over the gradients of ``tensors`` (see the module docstring)."""
    from .engine import current_walk, will_run  # (the engine imports the graph module, which exports this)

    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        last = [None]  # the backward that called fn last (its serial number)

        def first_only(grad):
            walk = current_walk()
            serial = None if walk is None else walk.serial
            if serial is None or last[0] != serial:
                last[0] = serial
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors))

    pending: dict[int, list] = {}  # per backward (its serial number): [the gradients so far, how many to come]

    def collecting(i: int):
        def hook(grad):
            walk = current_walk()
            serial = None if walk is None else walk.serial
            entry = pending.get(serial)
            if entry is None:
                expected = len(tensors) if walk is None else sum(will_run(walk, _node_of(t)) for t in tensors)
                if expected == 0:  # (over the root of a backward from one gradient alone: never called, as
                    return  # PyTorch's, whose count of the nodes to come leaves that root out, ``will_run``)
                entry = pending[serial] = [[None] * len(tensors), expected]
            entry[0][i] = grad
            entry[1] -= 1
            if entry[1] <= 0:
                del pending[serial]
                fn(entry[0])

        return hook

    return _MultiHandle(tuple(t.register_hook(collecting(i)) for i, t in enumerate(tensors)))
