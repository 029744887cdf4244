"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors.

Inside ``with dual_level():``, ``make_dual(primal, tangent)`` gives a tensor that carries a tangent, and every op
on it computes its output's tangent ``J @ tangent`` as it runs; ``unpack_dual(y)`` returns ``(primal, tangent)``
(``tangent`` None where ``y`` carries none). As PyTorch's: tangents flow through every op, in-place ops and views
(a view's tangent is a view of its base's tangent), they are dropped when the level exits, and only one level
may be entered at a time.

How an op gets its tangent without a second derivative formula. Each op's derivative is written once, as its
``Node.backward``: ``B(g) = J^T g``, linear in the cotangent ``g``. The tangent ``J v`` comes from that one
formula, chosen per op at the moment it runs (``Node.apply`` hands each op whose inputs carry tangents to
``_Level.push``):

- a view (``Node.is_view``) is linear in its input: its forward applied to the tangent is the tangent, and is a
  view of the input's tangent, as PyTorch's;
- a linear op (``Node.linear``: sums, concatenation, gathers, average pooling): its forward applied to the
  tangents is the tangent;
- a multilinear op (``Node.multilinear``: matmul, linear, convolution): linear in each input with the others
  fixed, so ``J v`` is its forward with one input replaced by its tangent, summed over the inputs (a bias's
  tangent enters as the bias of a forward on zeros). This costs one forward of the op per tangent;
- an elementwise op (``Node.diagonal_jacobian``): each input's Jacobian is diagonal, so equal to its transpose,
  and ``J v = B(v)``: the backward formula run on the tangent (broadcast to the output), one input at a time.
  This costs one backward of the op. It holds for real derivatives only (a complex one enters PyTorch's backward
  conjugated, and a real-complex step is not complex-linear): with complex tangents or outputs the op takes the
  next, general path;
- any other op: the backward formula is run once on a placeholder cotangent ``g`` that is recorded
  (``recorded.py``, as under ``create_graph``; the op's saved arrays are constants), which records the linear
  map ``g -> J^T g`` as a small graph, and that graph is transposed by one backward pass from the tangents:
  ``d<J^T g, v>/dg = J v``. This costs about two backwards of the op plus recording. An op whose backward
  formula cannot be recorded raises ``HigherOrderError`` naming it.

A custom ``autograd.Function`` gets its tangents from its own ``jvp``, as PyTorch's. Saved arrays handed to a
recorded backward formula carry their tensor's tangent (``carry_saved_tangent``), so a gradient computed with
``create_graph=True`` inside the level, or by ``autograd.grad`` of outputs that carry tangents (whose formulas
then run recorded), has a tangent: a Hessian-vector product (forward-over-reverse).

The first-order path pays one check per op (``graph._dual_level``) when no level is entered. Tangents are
computed as constants: reverse mode does not differentiate through them (PyTorch's tangents are
differentiable); the functions that need that (``torch.func.jvp`` inside a reverse transform, ``create_graph``)
use the double-backward trick instead (``_jvp.py``). Tangents are kept per level by tensor id, held weakly,
so ``Tensor`` carries no field for them.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import NamedTuple

from .._backend import quiet_enter, quiet_exit, xp
from .._dtype import np_kind
from .._size import leading_ones
from .._tensor import Tensor
from . import graph
from .grad_mode import _GradState
from .recorded import HigherOrderError, RecordedArray, running

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view of the dual tensor) and its tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    """An entered dual level: the tangent of each dual tensor, keyed by the tensor's id (held weakly)."""

    def __init__(self, index: int, follows_graph: bool = False) -> None:
        self.index = index
        # ``autograd.functional.jvp``'s level (``_jvp.graph_duals``): a tangent flows only where the graph is
        # recorded, as PyTorch's double-backward trick differentiates the recorded graph: nothing under no_grad
        # (an op's result is a constant there, an in-place op leaves the tangent as it was), nothing through a
        # gradient computed without create_graph
        self.follows_graph = follows_graph
        self.tangents: dict[int, tuple[weakref.ref, Tensor]] = {}
        # the tangents by id of the tensor's array: a backward formula reads saved arrays (of_array)
        self.by_array: dict[int, tuple[weakref.ref, Tensor]] = {}

    # ------------------------------------------------------------ one tensor's tangent
    def get(self, t: Tensor) -> Tensor | None:
        if self.follows_graph and not _GradState.enabled:
            return None
        entry = self.tangents.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        base = t._base
        # a view made before its base had a tangent: a view of the base's tangent now (following the graph, not a
        # view made under no_grad: it has no history, PyTorch's backward does not reach its base from it)
        if base is not None and not (self.follows_graph and _made_without_grad(t._view_creation)):
            bt = self.get(base)
            if bt is not None:
                return self.set(t, Tensor._make(_same_view(bt._data, base._data, t._data)))
        return None

    def set(self, t: Tensor, tangent: Tensor) -> Tensor:
        _remember(self.tangents, t, tangent)
        _remember(self.by_array, t._data, tangent)  # (the array may outlive t: saved for a backward formula)
        return tangent

    def of_array(self, array) -> Tensor | None:
        """The tangent of the tensor whose array ``array`` is (a node's saved input or output), if any."""
        if self.follows_graph and not _GradState.enabled:
            return None
        entry = self.by_array.get(id(array))
        return entry[1] if entry is not None and entry[0]() is array else None

    def writable(self, t: Tensor) -> Tensor:
        """``t``'s tangent to write into, zeros first where it has none (for a view: in its base's tangent)."""
        tangent = self.get(t)
        if tangent is None:
            base = t._base
            if base is not None and _contiguous(base._data):
                self.set(base, Tensor._make(xp.zeros_like(base._data)))
                return self.get(t)
            tangent = self.set(t, Tensor._make(xp.zeros_like(t._data)))
        return tangent

    # ------------------------------------------------------------ an op's tangents (Node.apply)
    def tangents_of(self, node, inputs) -> list | None:
        """The inputs' tangent arrays (None per input without one, or that the result does not depend on: the node's
        ``tangent_free_inputs``), or None when no input has one. Marks the inputs with tangents as needing
        gradients, so that forward keeps what the backward formula reads."""
        found = None
        free = node.tangent_free_inputs
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor) and i not in free:
                tangent = self.get(t)
                if tangent is not None:
                    if found is None:
                        found = [None] * len(inputs)
                    found[i] = tangent._data
        if found is not None:
            needs = node.needs_input_grad
            node.needs_input_grad = tuple(f is not None or bool(needs and needs[i]) for i, f in enumerate(found))
        return found

    def push(self, node, arrays: list, params: dict, tangents: list, result, needs) -> None:
        """Give ``result`` (a tensor, or a tuple for a multi-output node) its tangents ``J @ tangents``."""
        outs = result if isinstance(result, tuple) else (result,)
        node.needs_input_grad = tuple(t is not None for t in tangents)
        if not hasattr(node, "next_edges"):  # not linked yet: formulas that look for a leaf's slot find none
            node.next_edges = [None] * len(arrays)
        quiet = quiet_enter()
        prev = _GradState.enabled, _GradState.higher_order
        graph.set_dual_level(None)  # the tangent computation itself carries no tangents
        try:
            if node.is_view:
                fresh = type(node)()
                fresh.needs_input_grad = node.needs_input_grad
                out_tangents = [None if tangents[0] is None else fresh.forward(tangents[0], *arrays[1:], **params)]
            elif node.linear:
                _GradState.enabled = False
                fresh = type(node)()
                fresh.needs_input_grad = None  # (its forward keeps nothing for a backward)
                out_tangents = [fresh.forward(*_zeros_for_missing(arrays, tangents), **params)]
            elif node.multilinear:
                _GradState.enabled = False
                out_tangents = [_multilinear(node, arrays, params, tangents)]
            elif node.diagonal_jacobian and not _touches_complex(tangents, outs):
                _GradState.enabled = _GradState.higher_order = False
                out_tangents = [_diagonal(node, tangents, outs[0]._data)]
            else:
                _GradState.enabled = _GradState.higher_order = True
                out_tangents = _transposed(node, tangents, outs)
        finally:
            _GradState.enabled, _GradState.higher_order = prev
            graph.set_dual_level(self)
            quiet_exit(quiet)
            node.needs_input_grad = needs
        for out, tangent in zip(outs, out_tangents):
            if out is None or np_kind(out._data.dtype) not in "fc":  # (bfloat16 included)
                continue
            if tangent is None:
                tangent = xp.zeros_like(out._data)
            elif tangent.dtype != out._data.dtype or tangent.shape != out._data.shape:
                tangent = xp.broadcast_to(tangent, out._data.shape).astype(out._data.dtype)
            elif not node.is_view and (tangent.base is not None or not tangent.flags.writeable):
                tangent = tangent.copy()  # a formula may pass (a view of) an input's tangent through: no aliasing
            self.set(out, Tensor._make(tangent))


def _remember(table: dict, obj, tangent: Tensor) -> None:
    """``table[id(obj)]`` holds ``tangent`` while ``obj`` lives (unless a later object takes the key)."""
    key = id(obj)

    def forget(_ref) -> None:
        if table.get(key) is entry:
            del table[key]

    entry = (weakref.ref(obj, forget), tangent)
    table[key] = entry


def _made_without_grad(creation) -> bool:
    """Whether a view's ``_view_creation`` (``_tensor.py``) says it was made with grad mode off, or from a view that
    was (the one at the root of its chain)."""
    while type(creation) is tuple and creation[0] == "of":
        creation = creation[1]
    return isinstance(creation, str)


def _contiguous(a) -> bool:
    return a.flags.c_contiguous


def _same_view(tangent, base, view):
    """The view of ``tangent`` that ``view`` is of ``base`` (same offset, shape and strides)."""
    if not (_contiguous(base) and _contiguous(tangent) and tangent.dtype == base.dtype):
        raise NotImplementedError("forward-mode AD: a view of a non-contiguous tensor whose base received a "
                                  "tangent after the view was made")
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return xp.ndarray(view.shape, view.dtype, buffer=tangent, offset=offset, strides=view.strides)


def _zeros_for_missing(arrays: list, tangents: list) -> list:
    """The tangents in place of the arrays, zeros for a floating array without one (others, indices, kept)."""
    return [v if v is not None else xp.zeros_like(a) if isinstance(a, xp.ndarray) and np_kind(a.dtype) in "fc" else a
            for a, v in zip(arrays, tangents)]


def _multilinear(node, arrays: list, params: dict, tangents: list):
    """``J v`` of a multilinear op: the sum of its forward with one input replaced by its tangent (and no bias);
    a bias's tangent is forward with the first input zero and the tangent as bias."""
    bias = node.bias_input
    total = None
    for i, v in enumerate(tangents):
        if v is None:
            continue
        args = list(arrays)
        if i == bias:
            args[0] = xp.zeros_like(arrays[0])
        elif bias is not None:
            args[bias] = None
        args[i] = v
        fresh = type(node)()
        fresh.needs_input_grad = None  # (its forward keeps nothing for a backward)
        part = fresh.forward(*args, **params)
        total = part if total is None else total + part
    return total


def _touches_complex(tangents: list, outs: tuple) -> bool:
    """Whether an op's tangents or outputs are complex. ``_diagonal`` reads the backward formula as the Jacobian
    itself, true of a real derivative only: a complex one enters PyTorch's backward conjugated (``g *
    conj(f'(z))``), and a complex-to-real or real-to-complex step is not even complex-linear; those ops take the
    transposed formula instead, which is exact for any real-linear Jacobian."""
    return any(isinstance(v, xp.ndarray) and v.dtype.kind == "c" for v in tangents) or any(
        out is not None and out._data.dtype.kind == "c" for out in outs)


def _diagonal(node, tangents: list, out):
    """``J v`` of an elementwise op: its backward formula run on each input's tangent, broadcast to the output."""
    total = None
    flags = node.needs_input_grad
    for i, v in enumerate(tangents):
        if v is None:
            continue
        node.needs_input_grad = tuple(k == i for k in range(len(flags)))
        g = xp.broadcast_to(v.astype(out.dtype, copy=False), out.shape)
        part = node.backward(g)[i]
        if part is not None:
            total = part if total is None else total + part
    return total


def _transposed(node, tangents: list, outs: tuple) -> list:
    """``J v`` by transposing the op's recorded backward formula: ``d<B(g), v>/dg`` at any ``g`` (see the module
    docstring); one result per output (None where no output depends on the tangents)."""
    from .engine import run_backward

    cotangents = []
    for out in outs:
        if out is None or np_kind(out._data.dtype) not in "fc":
            cotangents.append(None)
            continue
        g = Tensor._make(xp.ones_like(out._data))  # any value (B is linear); not 0, so a lost recording shows
        g._requires_grad = True
        cotangents.append(g)
    saved = node.saved
    if isinstance(saved, tuple):  # as under create_graph, the formula sees recorded arrays, here constants
        node.saved = tuple(RecordedArray(Tensor._make(a)) if isinstance(a, xp.ndarray) and np_kind(a.dtype) in "fc"
                           else a for a in saved)
    with running(node.name()):
        try:
            grads = node.backward(*[None if g is None else RecordedArray(g) for g in cotangents])
        except AttributeError as err:  # an array attribute a recorded formula does not have (``.flags``)
            if "RecordedArray" not in str(err):
                raise
            raise _not_recorded(node, f"an array attribute ({err})") from None
        finally:
            node.saved = saved
    if isinstance(grads, RecordedArray) or not isinstance(grads, (tuple, list)):
        grads = (grads,)
    roots = []
    for b, v in zip(grads, tangents):
        if v is None or b is None:
            continue
        recorded = type(b) is RecordedArray and b.t._requires_grad
        if not recorded and xp.any(b.t._data if type(b) is RecordedArray else b):
            # a result that does not depend on g yet is not 0 (B(g) is linear, g is not 0): the formula left the
            # recording somewhere (a plain buffer); never silently a constant
            raise _not_recorded(node, "a step that left the recording (its result is a constant)")
        if recorded:
            roots.append((b.t._edge(), xp.broadcast_to(v.astype(b.dtype, copy=False), b.shape)))
    edges = {g._edge(): k for k, g in enumerate(cotangents) if g is not None}
    if not roots:
        return [None] * len(outs)
    _GradState.enabled = _GradState.higher_order = False
    captured = run_backward(roots, retain_graph=False, capture=set(edges), accumulate=False)
    result: list = [None] * len(outs)
    for edge, k in edges.items():
        result[k] = captured.get(edge)
    return result


def _not_recorded(node, what: str) -> HigherOrderError:
    return HigherOrderError(f"{node.name()} has no forward-mode derivative in ember yet: its gradient formula uses "
                            f"{what}, which has no recorded counterpart (forward mode transposes the recorded "
                            "formula)")


# ---------------------------------------------------------------- the public functions
_current: list[_Level] = []


def enter_dual_level(*, follows_graph: bool = False) -> int:
    """Enter a new forward-mode AD level and return its index (0). Only one level may be entered at a time.
    ``follows_graph`` (ember's, for ``autograd.functional.jvp``): tangents flow only where ops record the graph."""
    if _current:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _Level(0, follows_graph)
    _current.append(level)
    graph.set_dual_level(level)
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level (``level`` must be its index): every tangent made at it is dropped."""
    index = _current[-1].index if _current and level is None else (-1 if level is None else level)
    if index < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if not _current or _current[-1].index != index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    level = _current.pop()
    level.tangents.clear()
    level.by_array.clear()
    graph.set_dual_level(None)


def _level(level: int | None, api: str) -> _Level | None:
    if not _current:
        return None
    if level is not None and level != _current[-1].index:
        raise RuntimeError(f"{api}: level {level} is not the current dual level")
    return _current[-1]


def check_dual(primal: Tensor, tangent: Tensor) -> None:
    """PyTorch's errors for a primal and tangent that cannot make a dual tensor."""
    for what, x in (("primal", primal), ("tangent", tangent)):
        if not (x.is_floating_point() or x.is_complex()):
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {x.dtype}")
    if tangent.shape != primal.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(primal.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent`` (used as is, not copied, when its layout matches), at the
    current level. ``tangent`` must have ``tensor``'s shape; both must be floating point or complex."""
    lvl = _level(level, "make_dual")
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    tangent = _stored_tangent(tensor, tangent)
    graph.set_dual_level(None)
    try:
        dual = tensor.view_as(tensor)
    finally:
        graph.set_dual_level(lvl)
    lvl.set(dual, tangent)
    return dual


def give_tangent(tensor: Tensor, tangent: Tensor) -> None:
    """``tensor`` itself (not a view of it, as ``make_dual``'s) takes ``tangent`` at the current level: the inputs
    of ``autograd.functional.jvp``, leaves as PyTorch's."""
    graph._dual_level.set(tensor, _stored_tangent(tensor, tangent))


def _stored_tangent(tensor: Tensor, tangent: Tensor) -> Tensor:
    """``tangent`` as a dual tensor of ``tensor`` keeps it: checked, in the primal's layout."""
    check_dual(tensor, tangent)
    if tensor.is_complex():
        raise NotImplementedError("forward-mode AD of complex tensors is not supported by ember")
    data = tangent._data
    if data.dtype != tensor._data.dtype or data.strides != tensor._data.strides:
        stored = xp.empty_like(tensor._data)  # the primal's layout, so that views of it find their tangent
        stored[...] = data
        tangent = Tensor._make(stored)
    return tangent


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: the primal a view of ``tensor`` without tangent, the tangent None where ``tensor``
    has none at the current level (or no level is entered)."""
    lvl = _level(level, "unpack_dual")
    tangent = None if lvl is None else lvl.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    graph.set_dual_level(None)
    try:
        primal = tensor.view_as(tensor)
    finally:
        graph.set_dual_level(lvl)
    return UnpackedDualTensor(primal, tangent)


class dual_level:  # noqa: N801 (PyTorch's name)
    """``with dual_level():`` enters a forward-mode AD level for the block (``__enter__`` returns its index)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def carry_saved_tangent(array, t: Tensor) -> None:
    """``t`` (a saved ``array`` handed to a backward formula as a tensor of the graph, ``recorded.py``) takes the
    tangent of the tensor ``array`` belongs to: so a gradient computed inside a dual level carries its tangent
    (forward-over-reverse: the tangent of a gradient is a Hessian-vector product)."""
    level = graph._dual_level
    tangent = None if level is None else level.of_array(array)
    if tangent is not None:
        level.set(t, tangent)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """No tangents computed in the block (a custom Function's forward: its ``jvp`` gives them)."""
    level = graph._dual_level
    graph.set_dual_level(None)
    try:
        yield
    finally:
        graph.set_dual_level(level)


def function_jvp(fn_class, ctx, args: tuple, outputs) -> None:
    """A custom Function's outputs get the tangents its ``jvp(ctx, *input_tangents)`` returns, as PyTorch's
    (zeros for a tensor input without a tangent, None for a non-tensor argument)."""
    level = graph._dual_level
    tangents = []
    for a in args:
        tangent = level.get(a) if isinstance(a, Tensor) else None
        if tangent is None and isinstance(a, Tensor) and np_kind(a._data.dtype) == "f":
            tangent = Tensor._make(xp.zeros_like(a._data))
        tangents.append(tangent)
    ctx._in_jvp = True
    try:
        with suspended():
            result = fn_class.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    result = result if isinstance(result, tuple) else (result,)
    for out, tangent in zip(outputs, result):
        if isinstance(out, Tensor) and isinstance(tangent, Tensor):
            level.set(out, Tensor._make(xp.array(tangent._data, dtype=out._data.dtype)))


def detached(t: Tensor) -> Tensor:
    """``t.detach()`` keeping ``t``'s tangent (a gradient computed for its tangent only, ``autograd.grad``)."""
    out = t.detach()
    share_tangent(t, out)
    return out


# ---------------------------------------------------------------- in-place ops (ops/inplace.py, ops/indexing.py)
def tangents_through_grad(*outputs) -> bool:
    """Whether ``autograd.grad`` of ``outputs`` without create_graph gives gradients carrying tangents
    (forward-over-reverse, as PyTorch's at a dual level); never at a level that follows the graph, where such a
    gradient is a constant (PyTorch's double-backward trick records nothing there)."""
    level = graph._dual_level
    return level is not None and not level.follows_graph and has_tangent(*outputs)


def has_tangent(*tensors) -> bool:
    """Whether a forward-mode level is entered and one of ``tensors`` carries a tangent at it."""
    level = graph._dual_level
    return level is not None and any(isinstance(t, Tensor) and level.get(t) is not None for t in tensors)


def share_tangent(src: Tensor, dst: Tensor) -> None:
    """``dst`` (a snapshot of ``src``'s value, or ``src`` reshaped in place) takes ``src``'s tangent."""
    level = graph._dual_level
    tangent = None if level is None else level.get(src)
    if tangent is not None:
        level.set(dst, tangent)


def carry_tangent(src: Tensor, dst: Tensor, reshape) -> None:
    """``dst`` (made from ``src``'s array by ``reshape``, outside the recorded ops) takes ``src``'s tangent made the
    same way."""
    level = graph._dual_level
    tangent = None if level is None else level.get(src)
    if tangent is not None:
        level.set(dst, Tensor._make(reshape(tangent._data)))


def write_tangent(x: Tensor, result: Tensor) -> None:
    """After ``x`` took ``result``'s value in place: ``x``'s tangent takes ``result``'s, in place (so that views
    of ``x`` and its base see it, as PyTorch's)."""
    level = graph._dual_level
    tangent = None if level is None else level.get(result)
    if tangent is not None:
        level.writable(x)._data[...] = tangent._data


def write_tangent_at(x: Tensor, idx, value) -> None:
    """``x[idx] = value`` for tangents: ``value``'s tangent (zeros where it has none) into ``x``'s."""
    level = graph._dual_level
    if level is None:
        return
    tangent = level.get(value) if isinstance(value, Tensor) else None
    if tangent is None and level.get(x) is None:
        return
    if tangent is None:
        level.writable(x)._data[idx] = 0
        return
    data = tangent._data  # (viewed without its leading ones, as setitem views the value: see leading_ones)
    level.writable(x)._data[idx] = data.reshape(data.shape[leading_ones(data.shape):])
