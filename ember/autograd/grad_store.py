"""Gradient memory: one explicit store per set of parameters, and the one place a dense ``.grad`` is set.

A ``GradStore`` covers a fixed list of parameters of one dtype, in a known order, and each of them
knows its slot (``p._grad_slot = (store, index)``). Their gradients lie end to end in one flat
buffer (each slot laid out as its parameter: a channels-last or transposed weight gets a gradient with its
strides, as PyTorch's AccumulateGrad and DDP's bucket views lay them out), so DDP all-reduces a bucket (a run
of consecutive slots) in place, and ``clip_grad_norm_`` measures all gradients with one call. Who builds it:
``DistributedDataParallel`` at construction (registration order, its buckets are contiguous slices), otherwise
the optimizer at construction (its parameters in group order). Parameters without a store get a fresh array per
gradient, as in PyTorch. Nothing is decided by reference counts and nothing is process-wide.

The mode is fixed at construction (PyTorch's ``gradient_as_bucket_view``):

``"separate"`` (the default): a ``.grad`` the user holds from an earlier step never changes after
``zero_grad()``, as in PyTorch. The store hands out *generations*: each slot of the current flat
buffer is free, lent (to a backward that builds the gradient directly in it, ``slot_to_fill``) or
issued (it became a ``.grad``). The first gradient of a slot that was already issued starts a new
flat buffer (a new generation: ``np.empty``, as PyTorch allocates fresh gradients each step); an old
buffer is freed by Python once nobody refers to it. ``zero_grad()`` (set_to_none) drops the store's
own reference to the generation when every ``.grad`` of the store is cleared, so the next backward
reuses the freed memory and peak memory is one buffer. ``zero_grad(set_to_none=False)`` zeroes in
place and keeps the generation; a second backward adds into ``.grad`` in place.

``"view"`` (DDP with ``gradient_as_bucket_view=True``): the buffer lives as long as the store and
``.grad`` is always a view of it: a ``.grad`` held across ``zero_grad()`` sees the next step's values,
as in PyTorch.

A ``.grad`` the user assigned (``p.grad = t``) is foreign: backward adds into it in place; DDP copies it
into a bucket to reduce it and back (PyTorch copies too). When gradients are recorded tensors
(``create_graph=True``), they are to bypass the store: ``set_first_grad`` takes plain arrays only.

Who sets ``.grad`` (besides the user): ``set_first_grad`` (backward's first gradient, and DDP's rare path),
``GradStore.issue_zeros`` / ``GradStore.retract`` / ``GradStore.adopt`` (DDP: an unused parameter's zeros, taken
back when no rank used it; a foreign gradient taken into view mode's bucket) and ``zero_grads``, all here;
sparse gradients (graph.py) live outside stores.
"""

from __future__ import annotations

import weakref

from .._backend import xp
from .._meta import meta_results
from .._tensor import Tensor
from ..storage import in_pieces

FREE, LENT, ISSUED = 0, 1, 2  # a slot's state in the current generation


class GradStore:
    """Gradient memory of ``params`` (one dtype), end to end in this order. See the module docstring."""

    __slots__ = ("shapes", "strides", "laid", "offsets", "size", "dtype", "as_view", "flat", "views", "state",
                 "_params", "__weakref__")

    def __init__(self, params: list, *, as_view: bool = False) -> None:
        if not params:
            raise ValueError("GradStore needs at least one parameter")
        self.dtype = params[0]._data.dtype
        if any(p._data.dtype != self.dtype for p in params):
            raise ValueError("a GradStore holds gradients of one dtype")
        self.shapes = [p._data.shape for p in params]
        self.strides = [p._data.strides for p in params]  # the layout each slot is laid out for
        self.laid = [_slot_strides(p._data) for p in params]  # (None: row-major)
        self.offsets = [0]
        for p in params:
            self.offsets.append(self.offsets[-1] + p._data.size)
        self.size = self.offsets[-1]
        self.as_view = as_view
        self._params = [weakref.ref(p) for p in params]  # weak: a store never keeps a model alive
        self.flat = self.views = None  # the current generation (None until the first gradient)
        self.state: list[int] = []
        if as_view:  # one buffer for the store's whole life
            self._new_generation()
        for i, p in enumerate(params):
            p._grad_slot = (self, i)

    def __len__(self) -> int:
        return len(self.shapes)

    def params(self) -> list:
        """The parameters, in slot order (None for one that has been freed)."""
        return [ref() for ref in self._params]

    def _new_generation(self) -> None:
        self.flat = xp.zeros(self.size, self.dtype) if self.as_view else xp.empty(self.size, self.dtype)
        flat, offsets, shaped = self.flat, self.offsets, self.shaped
        self.views = [flat[offsets[i]:offsets[i + 1]].reshape(shape) if strides is None else shaped(
            flat[offsets[i]:offsets[i + 1]], i) for i, (shape, strides) in enumerate(zip(self.shapes, self.laid))]
        self.state = [FREE] * len(self.shapes)
        in_pieces(flat, offsets)  # each slot's .grad is a storage of its own, as PyTorch allocates each

    def shaped(self, piece, i: int):
        """``piece`` (slot ``i``'s stretch of a flat buffer laid out like the store) as slot ``i``'s gradient: shaped
        like its parameter, with its strides (see ``_slot_strides``)."""
        strides = self.laid[i]
        if strides is None:
            return piece.reshape(self.shapes[i])
        return xp.lib.stride_tricks.as_strided(piece, self.shapes[i], strides)

    # ------------------------------------------------------------------ handing out slots
    def slot_of(self, t: Tensor) -> int | None:
        """``t``'s slot index while ``t`` still has the shape, layout and dtype it had when the store was built
        (``p.data = ...`` or ``module.to(memory_format=...)`` may change them: that parameter's gradients then live
        outside the store, laid out as its new layout asks)."""
        i = t._grad_slot[1]
        a = t._data
        return i if self.shapes[i] == a.shape and self.strides[i] == a.strides and self.dtype == a.dtype else None

    def _issue(self, i: int, grad) -> Tensor:
        """The new ``.grad`` of slot ``i`` holding ``grad`` (copied, unless ``grad`` is the slot's own lent array)."""
        if self.flat is None or (self.state[i] == ISSUED and not self.as_view):
            self._new_generation()
        view = self.views[i]
        if grad is not view:
            if 1 in view.shape and not self.as_view:  # (kept as the slot: the store knows its .grad)
                view = self._steps_of(i, grad)
            xp.copyto(view, grad)
        self.state[i] = ISSUED
        return Tensor._make(view)

    def _steps_of(self, i: int, grad):
        """Slot ``i``'s view stepping its size-1 dimensions as ``grad`` does where ``grad`` obeys PyTorch's layout
        contract (its other dimensions step as the slot's, no size-1 one by 0): AccumulateGrad keeps such a
        gradient's strides, so a channels-last weight of one input channel gets a row-major ``.grad`` from a
        row-major gradient, ``Parameter(zeros(5, 1).t())`` a (5, 1) one, while an expanded gradient (``p.sum()``'s of
        a one-element ``p``) is laid out as the parameter. (A size-1 dimension's step moves no element: the slot's
        memory is the same; DDP's bucket views, ``as_view``, keep the parameter's steps.)"""
        view = self.views[i]
        size, item = view.itemsize, grad.itemsize
        steps = [s // item * size for s in grad.strides]
        if steps != list(view.strides) and all(g == v if n != 1 else g != 0
                                               for n, g, v in zip(view.shape, steps, view.strides)):
            view = self.views[i] = xp.lib.stride_tricks.as_strided(view, view.shape, steps)
        return view

    def adopt(self, i: int) -> None:
        """View mode: slot ``i`` becomes its parameter's ``.grad``, holding the values of the ``.grad`` it had (one
        the user assigned), or zeros when it had none."""
        p = self._params[i]()
        if p is not None:
            p._grad = self._issue(i, p._grad._data) if p._grad is not None else self.issue_zeros(i)

    def slot_to_fill(self, i: int):
        """Slot ``i``'s array for a backward to build its whole first gradient in (no copy later), or None
        when the slot is not free in the current generation. Never starts a generation that would split
        the other gradients from theirs."""
        if self.flat is None:
            self._new_generation()
        elif self.state[i] != FREE and not (self.as_view and self.state[i] == ISSUED):
            return None
        self.state[i] = LENT
        return self.views[i]

    def issue_zeros(self, i: int) -> Tensor | None:
        """Slot ``i`` filled with zeros as its parameter's new ``.grad`` (DDP's unused parameter, which has none),
        returned; None (nothing set) when that would start a new generation, or when the slot no longer fits the
        parameter (its shape or dtype changed since the store was built: its gradients live outside the store)."""
        p = self._params[i]()
        if p is None or self.flat is None or (self.state[i] == ISSUED and not self.as_view) or self.slot_of(p) is None:
            return None
        self.views[i].fill(0)
        self.state[i] = ISSUED
        p._grad = Tensor._make(self.views[i])
        return p._grad

    def retract(self, i: int) -> None:
        """Undo ``issue_zeros``: slot ``i``'s parameter has no ``.grad`` again and the slot is free (DDP: a parameter
        that no rank used keeps the None it had, as in PyTorch)."""
        p = self._params[i]()
        if p is not None and self.holds(i, p._grad):
            p._grad = None
            self.state[i] = FREE

    def holds(self, i: int, grad: Tensor | None) -> bool:
        """Whether ``grad`` is slot ``i`` of the current generation."""
        return grad is not None and self.flat is not None and grad._data is self.views[i]

    # ------------------------------------------------------------------ reading gradients where they lie
    def region(self, lo: int, hi: int):
        """The flat stretch of slots ``lo``..``hi - 1`` when each is its parameter's ``.grad`` (else None)."""
        if self.flat is None:
            return None
        for i in range(lo, hi):
            p = self._params[i]()
            if p is None or p._grad is None or p._grad._data is not self.views[i]:
                return None
        return self.flat if lo == 0 and hi == len(self.shapes) else self.flat[self.offsets[lo]:self.offsets[hi]]

    def release_if_cleared(self) -> None:
        """Drop the store's reference to the current generation when no ``.grad`` is a view of it any more
        (after ``zero_grad``): its memory goes back to the allocator for the next backward (separate mode)."""
        if self.as_view or self.flat is None:
            return
        for i, ref in enumerate(self._params):
            p = ref()
            if p is not None and p._grad is not None and p._grad._data is self.views[i]:
                return
        self.flat = self.views = None
        self.state = []


def set_first_grad(t: Tensor, grad) -> None:
    """Set ``t.grad`` (None until now) to a copy of the array ``grad``: in ``t``'s slot of its store when it has one
    that still fits ``t`` (``grad`` may be that slot's lent array: no copy), else a new array."""
    store = t._grad_slot[0] if t._grad_slot is not None else None
    i = store.slot_of(t) if store is not None else None
    if i is not None:
        t._grad = store._issue(i, grad)
    else:  # (a meta tensor's gradient is a meta tensor: the formulas computed on its placeholder)
        # (a leaf's layout as PyTorch's AccumulateGrad lays it out; a retained one contiguous, as its retain_grad)
        grad = leaf_layout_copy(t._data, grad) if t._grad_fn is None else grad.astype(t._data.dtype, order="C")
        t._grad = Tensor._make(meta_results((t._data,), grad))


def leaf_layout_copy(param, grad):
    """A copy of the array ``grad`` in ``param``'s dtype, laid out as PyTorch's AccumulateGrad lays a leaf's first
    gradient out (its "gradient layout contract"): a ``param`` whose strides are non-overlapping and dense (a
    transposed or channels-last one too) gets ``grad``'s strides where they match its own (a dimension of size 1
    may step anyhow, but not by 0), else its own; any other ``param`` (a slice) a contiguous gradient. So
    ``p = x.t().requires_grad_()`` gets a transposed ``.grad``, whatever layout its formulas computed."""
    dt = param.dtype
    shape = param.shape
    if param.ndim < 2 or param.flags.c_contiguous and grad.flags.c_contiguous and 1 not in shape:
        return grad.astype(dt, copy=True)  # (the common case: both row-major, as NumPy's copy keeps them)
    size = param.itemsize
    own = [s // size for s in param.strides]
    steps = [s // grad.itemsize for s in grad.strides]
    if not _non_overlapping_and_dense(shape, own):
        return xp.ascontiguousarray(grad, dtype=dt)
    if all(g == p if n != 1 else g != 0 for n, g, p in zip(shape, steps, own)):
        own = steps
    out = xp.lib.stride_tricks.as_strided(xp.empty(param.size, dt), shape, [s * size for s in own])
    out[...] = grad
    return out


def _slot_strides(param):
    """The strides of ``param``'s slot in a gradient store: its own when they are non-overlapping and dense but not
    row-major (a channels-last or transposed weight: PyTorch's DDP lays its bucket views out so, as AccumulateGrad
    lays a leaf's gradient out; such strides start at offset 0 and cover exactly the slot's elements), else None
    (row-major, a slice of a parameter included)."""
    if not param.size:
        return None
    own = [s // param.itemsize for s in param.strides]
    step, row_major = 1, []
    for n in reversed(param.shape):
        row_major.append(step)
        step *= n
    if own == row_major[::-1]:
        return None  # (a size-1 dimension may step anyhow: one that differs is kept, as PyTorch's bucket views keep it)
    return param.strides if _non_overlapping_and_dense(param.shape, own) else None


def _non_overlapping_and_dense(shape, strides) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: some order of the dimensions lays the elements out densely
    (dimensions of size 1 may step anyhow)."""
    step = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: (strides[d], shape[d])):
        if strides[d] != step:
            return False
        step *= shape[d]
    return True


def store_of(params: list) -> GradStore | None:
    """The store whose slots are exactly ``params`` in order, or None."""
    slot = params[0]._grad_slot if params else None
    if slot is None or slot[1] != 0 or len(slot[0]) != len(params):
        return None
    store = slot[0]
    for i, p in enumerate(params):
        s = p._grad_slot
        if s is None or s[0] is not store or s[1] != i:
            return None
    return store


def flat_grads(params: list):
    """The one flat array whose consecutive slots are the ``.grad`` of ``params`` (a whole store, in order),
    or None: lets ``clip_grad_norm_`` work on one array."""
    store = store_of(params)
    return store.region(0, len(store)) if store is not None else None


def build_stores(params: list, *, as_view: bool = False, reuse: bool = False) -> list[GradStore]:
    """A store for each run of ``params`` of one dtype (runs cut where the dtype changes), in order; with
    ``reuse``, a run that already is one store of this mode keeps it."""
    runs: list[list] = []
    for p in params:
        if runs and runs[-1][0]._data.dtype == p._data.dtype:
            runs[-1].append(p)
        else:
            runs.append([p])
    stores = []
    for run in runs:
        store = store_of(run) if reuse else None
        stores.append(store if store is not None and store.as_view == as_view else GradStore(run, as_view=as_view))
    return stores


def zero_grads(params: list, set_to_none: bool) -> None:
    """``zero_grad`` of an optimizer or a module: ``.grad`` set to None (and stores whose gradients are all
    cleared let their buffer go), or zeroed in place (a sparse one keeps no entries), each left with no
    history and not requiring grad, as in PyTorch."""
    stores = set()
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
            if p._grad_slot is not None:
                stores.add(p._grad_slot[0])
        else:
            g._detach_in_place()  # as PyTorch's detach_() of one with history, requires_grad_(False) of a leaf
            if g.is_sparse:
                g.zero_()
            else:
                g._data.fill(0)
                g._bump_version()
    for store in stores:
        store.release_if_cleared()
