"""In-place ops on views of tensors that need a gradient: PyTorch's view+inplace (its ``CopySlices`` node).

A view shares its base's memory (``Tensor._base`` is the root base, ``_vc`` their one version counter), so an
in-place op through a view changes the base. Its history is rewritten as PyTorch's is:

- the view's old value is read from the base's current history (``AsStridedView``: the base's gradient at
  the view's positions), the op runs out of place on it (``inplace.py``), and the result's values are written
  into the view's memory;
- the base takes a ``CopySlices`` node whose inputs are the base's old history and the op's result: of the
  base's gradient, the view's region goes to the result (and through the op's backward, then ``AsStridedView``,
  back to the old base), the rest straight to the old base;
- the view's ``grad_fn`` becomes an ``AsStridedView`` of the base's new history.

Every other view of the base is then out of date: the version it was made at (``Tensor._view_version``) is no
longer the counter's, and the first time it is an op's input (``graph.input_edge``) or a backward root its
``grad_fn`` is made again from its base the same way (PyTorch regenerates it on access).

The positions of a view inside its base are one integer array (``view_region``: the flat index in the base of
each of the view's elements), found from the two arrays' addresses and strides, so every view op (slices,
``view``, ``t``, ``diagonal``, ``unsqueeze``, ``narrow``, ``as_strided``...) is handled by the one mechanism.
Both nodes' backward formulas are array indexing, recorded under ``create_graph`` like any formula.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._inference import InferenceView
from .._tensor import Tensor
from ..autograd import graph
from ..autograd.grad_mode import _GradState
from ..autograd.graph import Node, input_edge
from ..storage import data_ptr
from .complex import complex_view, real_view


class AsStridedView(Node):
    """A view's history read from its base's: the view's gradient scattered into the base's shape."""

    parts = None  # (view complex, base complex) for a view of another dtype (``view_region``)

    def backward(self, g):
        if self.parts is not None and self.parts[0]:
            g = real_view(g)
        out = xp.zeros_like(g, shape=(self.base_numel,))  # (zeros_like: under create_graph, a recorded buffer)
        if self.overlapping:  # expand() / as_strided: one base element at several positions sums their gradients
            xp.add.at(out, self.positions.reshape(-1), g.reshape(-1))
        else:
            out[self.positions] = g
        out = out.reshape(self.base_shape)
        return (complex_view(out) if self.parts is not None and self.parts[1] else out,)

    def name(self) -> str:
        return "AsStridedBackward0"  # PyTorch's name for a view's regenerated grad_fn


class CopySlices(Node):
    """The base after an in-place op on its view. As PyTorch's, it wraps the op's node ``fn`` when it can (the
    op's first input the view's history): its edges are the base's old history, then ``fn``'s other inputs; its
    backward runs ``fn``'s on the view's region of the gradient and writes ``fn``'s gradient for the view's old
    value back into that region. Otherwise (``fn`` None) its inputs are (the base's old history, the op's
    result)."""

    parts = None  # as AsStridedView's
    fn = None  # the in-place op's node, wrapped

    def backward(self, g):
        view_complex, base_complex = self.parts or (False, False)
        flat = (real_view(g) if base_complex else g).reshape(-1)
        if self.fn is not None:
            return self._through_fn(flat, view_complex, base_complex)
        g_base = g_view = None
        if self.needs_input_grad[0]:
            g_base = flat.copy()  # (reshape may have given g's own memory, which other consumers read)
            g_base[self.positions] = 0  # the view's region was overwritten: its old values get nothing here
            g_base = g_base.reshape(self.base_shape)
            if base_complex:
                g_base = complex_view(g_base)
        if self.needs_input_grad[1]:
            g_view = flat[self.positions]
            if view_complex:
                g_view = complex_view(g_view)
        return g_base, g_view

    def _through_fn(self, flat, view_complex: bool, base_complex: bool) -> tuple:
        from ..autograd.engine import run_node, sum_to_shape

        fn, needs = self.fn, self.needs_input_grad
        g_view = flat[self.positions]
        if view_complex:
            g_view = complex_view(g_view)
        own = fn.needs_input_grad
        fn.needs_input_grad = needs  # (the engine's pruning, autograd.grad(inputs=...), reaches fn through ours)
        try:
            res = run_node(fn, [g_view])
        finally:
            fn.needs_input_grad = own
        g_base = None
        if needs[0]:
            g_base = flat.copy()  # (reshape may have given g's own memory, which other consumers read)
            old = res[0]  # the gradient of the view's old value, its region's in the base's old history
            if old is None:
                g_base[self.positions] = 0
            else:
                old = sum_to_shape(old, fn.input_shapes[0])
                if type(fn.next_edges[0]) is graph.CastEdge:
                    old = graph.cast_gradient(old, fn.next_edges[0].dtype)
                g_base[self.positions] = real_view(old) if view_complex else old
            g_base = g_base.reshape(self.base_shape)
            if base_complex:
                g_base = complex_view(g_base)
        return (g_base, *res[1:])

    released = False

    def check_saved_versions(self) -> None:
        if self.released:  # (PyTorch's CopySlices has dropped its node: a second backward is its error)
            raise RuntimeError(graph._RELEASED_MSG)
        super().check_saved_versions()
        if self.fn is not None:  # (also where no gradient reaches it: PyTorch's engine checks them there too)
            self.fn.check_saved_versions()

    def release(self) -> None:
        # As PyTorch's, the wrapped node is dropped, not released: a formula recorded under create_graph reads the
        # node's saved output through the node itself (recorded_saved), so a second backward reaches it there too
        # (and frees it then); nothing else holding it, its saved tensors go with it.
        super().release()
        self.released, self.fn = True, None

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # PyTorch's name, in its namespace


def view_region(view: Tensor, base: Tensor) -> tuple:
    """Where ``view`` lies in ``base``: (positions, the base's shape, parts). ``positions`` is the flat (C-order)
    index in ``base`` of each element of ``view`` (an int64 array of the view's shape), parts None. A view of
    another dtype of the same real type (``view_as_real``, ``.real``/``.imag`` of a complex base,
    ``view_as_complex`` of a real one) is located in the base's real parts: positions and shape count real
    elements (a complex array is its (real, imaginary) pairs, one more dimension of 2), and parts says which of
    the two is complex, (view, base); gradients are read and written through the same pairs."""
    v, b = view._data, base._data
    if v.dtype == b.dtype:
        return _positions(v, b), b.shape, None
    if v.dtype.kind not in "fc" or b.dtype.kind not in "fc" or xp.finfo(v.dtype).dtype != xp.finfo(b.dtype).dtype:
        raise RuntimeError(f"ember cannot locate a {view.dtype} view inside its {base.dtype} base; clone() the view "
                           "before modifying it in place")
    vu, bu = _real_parts(v), _real_parts(b)
    return _positions(vu, bu), bu.shape, (v.dtype.kind == "c", b.dtype.kind == "c")


def _real_parts(a):
    return real_view(a) if a.dtype.kind == "c" else a


def _positions(v, b):
    """``view_region``'s positions of array ``v`` in array ``b`` (one dtype)."""
    item, step = b.itemsize, xp.dtype(xp.int64).itemsize
    offset, rem = divmod(data_ptr(v) - data_ptr(b), item)
    if rem or any(s < 0 or s % item for s in v.strides + b.strides):
        raise RuntimeError("ember cannot locate this view inside its base (negative or unaligned strides); "
                           "clone() the view before modifying it in place")
    if not v.size:
        return xp.zeros(v.shape, dtype=xp.int64)
    lookup = None
    if not b.flags.c_contiguous:  # the base's element at each offset of its memory span (-1 where it has none)
        lookup = xp.full(1 + sum((n - 1) * s // item for n, s in zip(b.shape, b.strides)), -1, dtype=xp.int64)
        xp.lib.stride_tricks.as_strided(lookup, b.shape, tuple(s // item * step for s in b.strides))[...] = (
            xp.arange(b.size, dtype=xp.int64).reshape(b.shape))
    last = offset + sum((n - 1) * s // item for n, s in zip(v.shape, v.strides))
    if offset < 0 or last >= (b.size if lookup is None else lookup.size):
        raise RuntimeError("ember cannot locate this view inside its base (its memory is no longer the base's); "
                           "clone() the view before modifying it in place")
    if lookup is None:  # a C-contiguous base's element k is k elements in: the view's offsets are its positions
        positions = xp.full(v.shape, offset, dtype=xp.int64)  # (work of the view's size, not the base's)
        for d, (n, s) in enumerate(zip(v.shape, v.strides)):
            positions += (xp.arange(n, dtype=xp.int64) * (s // item)).reshape((-1,) + (1,) * (v.ndim - d - 1))
        return positions
    positions = xp.lib.stride_tricks.as_strided(
        lookup[offset:], v.shape, tuple(s // item * step for s in v.strides)).copy()
    if (positions < 0).any():
        raise RuntimeError("ember cannot locate this view inside its base; clone() the view first")
    return positions


def _may_overlap(a) -> bool:
    """Whether two elements of ``a`` may share memory (a stride 0 of ``expand``, an overlapping ``as_strided``):
    False when, its dimensions sorted by stride, each stride reaches past the span of the smaller ones."""
    span = a.itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(a.shape, a.strides) if n > 1):
        if stride < span:
            return True
        span = stride * (n - 1) + span
    return False


def _view_of_base(view: Tensor, base: Tensor, region: tuple) -> None:
    """Give ``view`` the history of its region of ``base`` (an ``AsStridedView`` node), current at this version."""
    node = AsStridedView()
    node.positions, node.base_shape, node.parts = region
    node.base_numel = math.prod(node.base_shape)
    node.overlapping = _may_overlap(view._data if node.parts is None else _real_parts(view._data))
    node.needs_input_grad = (True,)
    node._link((base,), (True,), (view,))
    set_history(view, node, 0, True)
    view._view_version = view._vc[0]


def set_history(t: Tensor, grad_fn, output_nr: int, requires_grad: bool) -> None:
    """``t`` takes a new place in the graph; a retained gradient (``retain_grad``) moves with it, as PyTorch's
    does: it is the gradient of the tensor's value now. A base that first needs a gradient passes it to its views."""
    old, had_grad = t._grad_fn, t._requires_grad
    t._grad_fn, t._output_nr, t._requires_grad = grad_fn, output_nr, requires_grad
    if requires_grad and not had_grad and t._base is None:
        follow_base(t)  # the views made of it before now need a gradient too
    if t._retains_grad and old is not grad_fn:
        if old is not None and old._retained:
            for nr, ref in list(old._retained.items()):
                if ref() is t:
                    del old._retained[nr]
        if grad_fn is not None:
            grad_fn.retain_grad_of(t)
    if t._base is None:  # (a root's new history, which the error for a saved input changed in place names, as
        graph.note_written(t, grad_fn)  # PyTorch's; a saved view's names AsStrided)


def refresh_view(view: Tensor) -> None:
    """Make an out-of-date view's ``grad_fn`` again from its base's history (when the base needs a gradient; the
    view then needs one too), as PyTorch does on access; PyTorch's error for a view it forbids that for."""
    base = view._base
    if view._grad_fn is None and not base._requires_grad:  # (no history to make or forbid, as PyTorch's grad_fn)
        view._view_version = view._vc[0]
        return
    if view._view_creation is not None:
        raise RuntimeError(_creation_error(view, view._view_creation, indirect=True))
    if base._requires_grad:
        _view_of_base(view, base, view_region(view, base))
    else:
        view._view_version = view._vc[0]


def follow_base(base: Tensor) -> None:
    """``base`` (a root) now needs a gradient: so do the views made of it before (``graph.watch_view``). A grad
    mode view's ``grad_fn`` is made from the base's history when first read (``refresh_view``: its version is
    behind, the in-place op having moved it); one made under no_grad stays without history, and reading it after
    the in-place op is PyTorch's error."""
    vc = base._vc
    if len(vc) == 1:
        return
    kept = []  # (views of another tensor sharing the counter, a detach() of the base: still watched for theirs)
    for ref in vc[1].refs:
        v = ref()
        if v is None:
            continue
        if v._base is not base:
            kept.append(ref)
        elif v._grad_fn is None:  # (however it was made: no_grad, unbind's outputs, a view of such a view)
            v._requires_grad = True
    vc[1].refs = kept  # (the watcher stays, empty: it also keeps what an in-place op last wrote, note_written)


graph.refresh_view = refresh_view  # (called from graph.input_edge and Tensor.grad_fn)


def check_view_inplace(x: Tensor, tracked: bool) -> None:
    """PyTorch's errors for a view changed in place under grad mode, then the view's history made current."""
    base = x._base
    if not (tracked or base._requires_grad):
        return
    creation = x._view_creation
    if creation is not None:
        raise RuntimeError(_creation_error(x, creation))
    if tracked and x._view_version != x._vc[0]:
        refresh_view(x)


def custom_function_view_error(name: str, output_nr: int, changed: str = "is being modified") -> str:
    """PyTorch's message for a view made by a custom Function (or an input it returned as it is), or a view of
    one, changed in place while recording: the in-place op's history would bypass the Function's backward."""
    return f"Output {output_nr} of {name} is a view and {changed} inplace. {_CUSTOM_FUNCTION_VIEW_TAIL}"


_CUSTOM_FUNCTION_VIEW_TAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic "
    "to handle view+inplace would override the custom backward associated with the custom Function, leading to "
    "incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.")


def _creation_error(x: Tensor, creation, indirect: bool = False) -> str:
    """PyTorch's message for a view made in no_grad mode or returned with others (``unbind``), or a view of one,
    changed in place (``indirect``: used after its base or another view of it was)."""
    derived = type(creation) is tuple and creation[0] == "of"
    op = creation[2] if derived else None  # the op that made this view
    while type(creation) is tuple and creation[0] == "of":
        creation = creation[1]
    # (indirect: its base or another of the base's views was changed in place, and the view is now used)
    changed = "its base or another view of its base has been modified" if indirect else "is being modified"
    custom = type(creation) is tuple and creation[0] == "custom_function"
    # a view without a grad_fn of its own (made in grad mode while its base needed no gradient, then used after
    # the base came to need one): PyTorch's message says it was made under no_grad, whatever made it
    if creation == "no_grad" or x._grad_fn is None:
        mode, now, block = ("inference mode", "in normal mode", "inference_mode") \
            if creation.__class__ is InferenceView else ("no_grad mode", "with grad mode enabled", "no_grad")
        made = f"A view was created in {mode}" if not derived or x._grad_fn is None else (
            f"Output {x._output_nr} of {op} is a view of a view which was created in {mode}")
        head = f"{made} and {changed} inplace {now}."
        if creation == "no_grad":
            return (f"{head} Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                    "your code by moving both the view and the inplace either both inside the "
                    f"{block} block (if you don't want the inplace to be tracked) or both outside (if you want the "
                    "inplace to be tracked).")
        if custom:
            return f"{head} {_CUSTOM_FUNCTION_VIEW_TAIL}"
        return f"{head} {_MULTI_OUTPUT_VIEW_TAIL}"
    if custom:
        return custom_function_view_error(*((op, x._output_nr) if derived else creation[1:]), changed)
    name, output_nr = (op, x._output_nr) if derived else creation
    return f"Output {output_nr} of {name} is a view and {changed} inplace. {_MULTI_OUTPUT_VIEW_TAIL}"


_MULTI_OUTPUT_VIEW_TAIL = ("This view is the output of a function that returns multiple views. Such functions do not "
                           "allow the output views to be modified inplace. You should replace the inplace operation "
                           "by an out-of-place one.")


def mark_multi_output_views(outputs: tuple, name: str) -> tuple:
    """Mark the views a function returns together (``unbind``, ``split``), which PyTorch forbids changing in place."""
    if _GradState.enabled:
        for i, out in enumerate(outputs):
            if out._base is not None and out._view_creation is None:  # (else it is a view of such a view)
                out._view_creation = (name, i)
    return outputs


def take_history(x: Tensor, result: Tensor, absorb: bool = True) -> None:
    """After an in-place op on ``x`` whose recorded result is ``result`` (``x``'s data already updated and its
    version bumped): ``x`` takes the result's place in the graph. A view passes it to its base (``CopySlices``,
    wrapping the op's node where it can; ``absorb=False``: never, for a custom Function's) and reads its own
    from the base's new history."""
    base = x._base
    if base is None:
        set_history(x, result.grad_fn, result._output_nr, result._requires_grad)
        return
    needs = (base._requires_grad, result._requires_grad)
    if True not in needs:
        return
    region = view_region(x, base)
    node = CopySlices()  # (also when only the base needs a gradient: the region's old values get none)
    node.positions, node.base_shape, node.parts = region
    fn = result.grad_fn
    if absorb and fn is not None and _reads_view_first(fn, result, x):
        node.fn = fn
        node.needs_input_grad = (base._requires_grad, *fn.needs_input_grad[1:])
        edges = [input_edge(base) if base._requires_grad else None, *fn.next_edges[1:]]
        node._record((), node.needs_input_grad, (), edges, [base._data.shape, *fn.input_shapes[1:]])
    else:
        node.needs_input_grad = needs
        node._link((base, result), needs, (base,))
    set_history(base, node, 0, True)
    _view_of_base(x, base, region)


def _reads_view_first(fn: Node, result: Tensor, x: Tensor) -> bool:
    """Whether ``result``'s node is the in-place op's own, its first input ``x``'s old value (its edge the one
    ``x`` had, none where ``x`` needs no gradient), one output: the node PyTorch's ``CopySlices`` wraps."""
    if fn.num_outputs != 1 or result._output_nr != 0 or not fn.next_edges or not fn.needs_input_grad:
        return False
    first = fn.next_edges[0]
    if x._grad_fn is None:
        return first is None and not x._requires_grad
    return first is not None and first[0] is x._grad_fn and first[1] == x._output_nr


def record_copy_into(x: Tensor, part, src, needs_src: bool, stepped: bool = False) -> None:
    """Record ``x[idx] = src`` for basic indices, ``part`` being ``x._data[idx]`` (already written, the version
    bumped), as PyTorch's copy_ into ``x``'s view ``x[idx]`` is: one ``CopySlices`` on the root base whose edges
    are the base's old history and the source's own (a number: None); where the indices leave ``x`` itself whole
    (``x[...] = v``, ``x[:] = v`` of a root), the copy's own node on ``x`` (PyTorch's CopyBackwards, or
    FillBackward3 for a 0-d source). ``src`` has ``part``'s shape or none (copy_to's view and expand of it are
    recorded by the caller); a source of another dtype gets its gradient cast back on its edge, as PyTorch's
    copy_ records no cast. ``stepped``: the indices as written take a view step though it leaves ``x`` whole
    (``x[-3:] = v`` of 3 rows: PyTorch slices, CopySlices)."""
    from .inplace import CopyFrom, FillTensorInPlace

    base = x._base if x._base is not None else x
    needs = (base._requires_grad, needs_src)
    whole = not stepped and base is x and part.shape == x._data.shape and data_ptr(part) == data_ptr(x._data) and \
        part.strides == x._data.strides
    if whole:
        node = FillTensorInPlace() if not isinstance(src, Tensor) or not src._data.ndim else CopyFrom()
        node.value_dtype = src._data.dtype if isinstance(src, Tensor) else x._data.dtype
        node.needs_input_grad = needs
        node._link((x, src), needs, ())
    else:
        region = view_region(Tensor._make(part), base)
        node = CopySlices()
        node.positions, node.base_shape, node.parts = region
        node.needs_input_grad = needs
        node._link((base, src), needs, (base,))
    if needs_src and src._data.dtype != x._data.dtype:
        node.next_edges[1] = graph.CastEdge(node.next_edges[1], src._data.dtype)
    set_history(base, node, 0, True)
    if base is not x:  # (its grad_fn: its region of the base's new history)
        _view_of_base(x, base, view_region(x, base))


graph.take_history = take_history  # (called from a custom Function's apply, for a view marked dirty)
