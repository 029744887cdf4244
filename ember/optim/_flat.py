"""The flat fast path of ``Optimizer.step``: one update over all of a group's parameters at once.

Every built-in ``_update`` is elementwise (the group's scalars applied to each element), so
running it once on the concatenation of a group's parameters, gradients and state is the
same arithmetic as running it per parameter — a handful of NumPy calls per step instead of a
handful per parameter (the idea of PyTorch's foreach/fused implementations).

``Layout`` makes the concatenation free: at the first step each parameter's ``_data`` is
re-pointed to a view of one contiguous buffer (a lone contiguous parameter keeps its own), and
so is each per-element state tensor (``exp_avg``, ...); scalar state (``step``) becomes 0-d
views of one array with an entry per parameter, synchronised after each update. Tensor objects
are kept, so references to parameters and state tensors stay valid; only arrays taken from
them before the first step stop aliasing them (as after ``p.data = ...`` in PyTorch).

Gradients (``autograd/grad_home.py`` decides where they live): when the parameters already
have homes laid out by someone else (DistributedDataParallel, at construction), the step reads
the gradients where they lie when they are end to end there, else copies them into a spare
array. Otherwise the layout gives each parameter a home in its own ``GradBuffer``, where
backward writes its first gradient; a gradient found elsewhere (accumulated before the layout
existed, assigned by hand) is copied in. ``.grad`` is never re-pointed.

A layout is checked before every step (identity checks, no arithmetic) and rebuilt when it
no longer holds: parameters whose ``.data`` was replaced, a different set of parameters with
gradients, state replaced by ``load_state_dict``. When a group cannot be laid out flat (mixed
dtypes, duplicates, parameters at different step counts, non-tensor state), ``step`` uses the
per-parameter reference path for it.
"""

from __future__ import annotations

from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ..autograd.grad_home import GradBuffer, flat_grads, lay_out, split


class Layout:
    """One parameter group laid end to end: parameter views of ``flat``, a ``GradBuffer``, flat state."""

    __slots__ = ("params", "flat", "views", "grads", "spare", "state", "scalar_keys", "scalars", "bound", "state_obj")

    def __init__(self, params: list, flat, views: list, flat_state: dict, scalar_keys: tuple, state_obj) -> None:
        self.params = params
        self.flat = flat
        self.views = views  # the parameters' arrays, views of flat
        self.grads = self._new_grads()  # None: the homes belong to someone else (DDP)
        self.spare = None  # with borrowed homes, where gradients that do not lie end to end are gathered
        self.state = flat_state  # what _update sees: key -> Tensor over a flat array (or a python scalar)
        self.scalar_keys = scalar_keys
        self.scalars: dict[str, Any] = {}  # scalar key -> array with one entry per parameter
        self.bound: list = []  # per parameter: (its state dict, ((state tensor, array it must hold), ...))
        self.state_obj = state_obj  # the optimizer's state mapping (load_state_dict replaces it)

    def _new_grads(self) -> GradBuffer | None:
        return lay_out(self.params)

    def holds(self, params: list, state) -> bool:
        """Whether ``params`` (the group's parameters with gradients, in order) and their state still are
        this layout."""
        if state is not self.state_obj or len(params) != len(self.params):
            return False
        for p, mine, view, (sd, tensors) in zip(params, self.params, self.views, self.bound):
            if p is not mine or p._data is not view or state.get(p) is not sd or len(sd) != len(tensors):
                return False
            for t, arr in tensors:
                if t._data is not arr:
                    return False
        return True

    def step(self, opt, group: dict[str, Any]) -> None:
        """One ``opt._update`` over the whole group, then the per-parameter bookkeeping."""
        grads = self._gradients()
        keys = len(self.state)
        opt._update(self.flat, grads, self.state, group)
        if len(self.state) != keys:  # _update created state on its first call (SGD's momentum_buffer)
            self.bind()
        for key, per_param in self.scalars.items():
            per_param[...] = self.state[key]._data
        for p in self.params:
            p._bump_version()

    def _gradients(self):
        """The group's gradients as one flat array, aligned with ``flat``."""
        grads = self.grads
        if grads is None:  # borrowed homes: where the gradients lie, else gathered into the spare array
            region = flat_grads(self.params)
            if region is not None:
                return region
            if self.spare is None:
                self.spare = xp.empty_like(self.flat)
            for g, view in zip(self.params, split(self.spare, [v.shape for v in self.views])):
                view[...] = g._grad._data
            return self.spare
        homes = grads.views
        for i, p in enumerate(self.params):
            g = p._grad._data
            if g is not homes[i]:
                if not grads.free(i):  # someone still holds this home (an old .grad): leave it to them
                    return self._renewed_grads().flat
                xp.copyto(homes[i], g)
        return grads.flat

    def _renewed_grads(self) -> GradBuffer:
        self.release()
        self.grads = grads = self._new_grads()
        for p, home in zip(self.params, grads.views):
            xp.copyto(home, p._grad._data)
        return grads

    def bind(self) -> None:
        """Point every parameter's state tensors at views of the flat state (creating missing entries)."""
        per_key = {}
        for key, value in self.state.items():
            if not isinstance(value, Tensor):
                continue  # a python scalar _update keeps (none of the built-ins do)
            if key in self.scalar_keys:
                per_param = self.scalars[key] = xp.full(len(self.params), value._data, dtype=value._data.dtype)
                per_key[key] = [per_param[i:i + 1].reshape(()) for i in range(len(self.params))]
            else:
                per_key[key] = split(value._data, [v.shape for v in self.views])
        self.bound = []
        for i, p in enumerate(self.params):
            sd = self.state_obj[p]
            tensors = []
            for key, arrays in per_key.items():
                t = sd.get(key)
                if isinstance(t, Tensor):
                    t._data = arrays[i]  # keep the tensor object: references to it stay valid
                else:
                    t = sd[key] = Tensor._make(arrays[i])
                tensors.append((t, arrays[i]))
            self.bound.append((sd, tuple(tensors)))

    def release(self) -> None:
        """Take this layout's gradient homes back (the layout is being replaced)."""
        for p in self.params:
            if self.grads is not None and p._grad_home is not None and p._grad_home[0] is self.grads:
                p._grad_home = None


def build(opt, params: list, group: dict[str, Any]) -> Layout | None:
    """Lay out ``params`` (one group's parameters with gradients) and their state; None when not possible."""
    if not params or len({id(p) for p in params}) != len(params):
        return None
    dtype = params[0]._data.dtype
    if dtype.kind != "f" or any(p._data.dtype != dtype for p in params):
        return None
    states = [opt.state.get(p) for p in params]
    if any(states) and not all(states):
        return None  # some parameters stepped before, others not: their step counts differ
    scalar_keys = opt._flat_scalar_state
    flat_state: dict[str, Any] = {}
    if states[0]:
        flat_state = _flat_state(params, states, scalar_keys)
        if flat_state is None:
            return None
    only = params[0]._data
    if len(params) == 1 and only.flags.c_contiguous and only.flags.writeable:
        flat, views = only.reshape(-1), [only]  # nothing to concatenate: keep the parameter's storage
    else:
        flat = xp.empty(sum(p._data.size for p in params), dtype)
        views = split(flat, [p._data.shape for p in params])
        for p, v in zip(params, views):
            v[...] = p._data
            p._data = v
    if not states[0]:
        opt._init_state(flat, flat_state, group)
    layout = Layout(params, flat, views, flat_state, scalar_keys, opt.state)
    layout.bind()
    return layout


def _flat_state(params: list, states: list, scalar_keys: tuple) -> dict | None:
    """The concatenated state of ``params`` (copied), or None when it cannot be concatenated."""
    keys = set(states[0])
    out: dict[str, Any] = {}
    if any(set(s) != keys for s in states):
        return None
    for key in states[0]:
        values = [s[key] for s in states]
        if not all(isinstance(v, Tensor) for v in values):
            return None
        if key in scalar_keys:
            first = values[0]._data
            if any(v._data.shape != () or v._data != first for v in values):
                return None  # parameters at different step counts: one update cannot serve them all
            out[key] = Tensor._make(first.copy())
        elif all(v._data.shape == p._data.shape for v, p in zip(values, params)):
            out[key] = Tensor._make(xp.concatenate([v._data.reshape(-1) for v in values]))
        else:
            return None
    return out
