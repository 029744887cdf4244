"""Gradient memory: where a parameter's gradient lives. The one place that decides it.

A parameter may have a *home*: a view into one contiguous ``GradBuffer`` shared with the
parameters laid out next to it. ``AccumulateGrad`` (``graph.add_to_grad``) writes a leaf's
first gradient into its home, when the home is free, instead of into a fresh copy — the same
one copy either way — so the gradients arrive concatenated, and the optimizer's ``step``,
``clip_grad_norm_`` and DDP's all-reduce each work on one array (``flat_grads``) instead of
one per parameter.

Who lays the homes out (``lay_out``): the first that needs them, and only once.
``DistributedDataParallel`` does it at construction, in registration order, so each bucket is
a stretch of the buffer and is reduced in place from the first step on; otherwise an
optimizer's flat fast path (``ember/optim/_flat.py``) does it at its first step. Whoever
comes later uses the homes that exist (``flat_grads``) and never moves them.

A home is free when nothing outside this buffer holds its memory: no tensor or array (the
``.grad`` of an earlier step, ``p.grad.detach()``, ``p.grad.numpy()``) refers to the home's
view, and no other view of the buffer exists. Both are read from CPython's reference counts,
compared with the counts measured when the buffer was made, the way PyTorch's AccumulateGrad
checks a gradient's use count before stealing it. A buffer whose home is held elsewhere is
left to its holder: the optimizer makes a new one.
"""

from __future__ import annotations

import sys

from .._backend import xp


class GradBuffer:
    """One contiguous gradient buffer (``flat``) and its per-parameter views (``views``)."""

    __slots__ = ("flat", "views", "_free_counts")

    def __init__(self, shapes: list, dtype) -> None:
        self.flat = xp.empty(sum(_numel(s) for s in shapes), dtype)
        self.views = split(self.flat, shapes)
        self._free_counts = self._counts(0) if shapes else None

    def _counts(self, i: int) -> tuple[int, int]:
        return sys.getrefcount(self.views[i]), sys.getrefcount(self.flat)

    def free(self, i: int) -> bool:
        """Whether home ``i`` may be overwritten: nothing outside this buffer refers to its memory.

        The caller must not hold a reference to ``views[i]`` itself (it would count as outside).
        """
        return self._counts(i) == self._free_counts

    def adopt(self, params: list) -> None:
        """Make view i the home of ``params[i]``'s gradient."""
        for i, p in enumerate(params):
            p._grad_home = (self, i)

    def holds_grads_of(self, params: list, start: int = 0) -> bool:
        """Whether the ``.grad`` of ``params`` are exactly this buffer's views ``start``, ``start + 1``, ..."""
        if start + len(params) > len(self.views):
            return False
        for p, v in zip(params, self.views[start:]):
            g = p._grad
            if g is None or g._data is not v:
                return False
        return True


def split(flat, shapes: list) -> list:
    """Views of consecutive pieces of 1-D ``flat`` with the given shapes."""
    views, start = [], 0
    for shape in shapes:
        n = _numel(shape)
        views.append(flat[start:start + n].reshape(shape))
        start += n
    return views


def _numel(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def lay_out(params: list) -> GradBuffer | None:
    """Give ``params`` (one dtype) homes in one new buffer, in this order; None (nothing changes) when one
    of them already has a home: its owner keeps it."""
    if not params or any(p._grad_home is not None for p in params):
        return None
    buffer = GradBuffer([p._data.shape for p in params], params[0]._data.dtype)
    buffer.adopt(params)
    return buffer


def take_home(var, grad):
    """``grad`` copied into ``var``'s gradient home (which it has) if that is free: the home array, else None.

    ``grad`` that is the home array itself (an op's backward wrote it there, see ``home_to_fill``) is taken
    as it is, without a copy.
    """
    buf, i = var._grad_home
    view = buf.views[i]
    if grad is view:
        return view
    del view  # (free() must not count this function's reference)
    if not buf.free(i):
        return None
    view = buf.views[i]
    xp.copyto(view, grad)
    return view


def home_refs(var, grad):
    """The reference counts of ``var``'s home when ``grad`` is that home array, else None: compared before and
    after code that may keep the array (a gradient hook), they tell whether it did."""
    home = var._grad_home
    if home is None or grad is not home[0].views[home[1]]:
        return None
    return home[0]._counts(home[1])


def home_to_fill(var):
    """``var``'s home array, for a backward to write ``var``'s first gradient into directly (and return it as
    that gradient) instead of into a new array that ``take_home`` would then copy: when ``var`` has a home,
    no gradient yet, and the home is free. Otherwise None. The caller must overwrite every element."""
    home = var._grad_home
    if home is None or var._grad is not None:
        return None
    buf, i = home
    return buf.views[i] if buf.free(i) else None


def zeroed_home(var):
    """``var``'s home filled with zeros, when it is ``var``'s gradient already or free; else None (and nothing
    is written). For a parameter that must contribute zeros where its gradient would lie (DDP, unused)."""
    home = var._grad_home
    if home is None:
        return None
    buf, i = home
    g = var._grad
    if g is not None:
        if g._data is not buf.views[i]:
            return None
    elif not buf.free(i):  # (checked before this function holds the view itself)
        return None
    view = buf.views[i]
    view[...] = 0
    return view


def flat_grads(params: list):
    """The one stretch of a gradient buffer whose consecutive views are the ``.grad`` of ``params``, in
    order (the whole buffer when they are all of its views); or None."""
    home = params[0]._grad_home if params else None
    if home is None:
        return None
    buf, start = home
    if not buf.holds_grads_of(params, start):
        return None
    if start == 0 and len(params) == len(buf.views):
        return buf.flat
    begin = sum(v.size for v in buf.views[:start])
    return buf.flat[begin:begin + sum(v.size for v in buf.views[start:start + len(params)])]
