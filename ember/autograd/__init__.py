"""ember.autograd: the graph, the backward engine, grad mode and custom Functions."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from .. import _meta
from .._backend import xp
from .._dtype import from_np
from .._size import Size
from .._sparse import SparseCOO, as_tensor
from .._tensor import Tensor, install_autograd
from . import forward_ad
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import queue_callback, run_backward
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradient_edge import GradientEdge
from .graph import (
    AccumulateGrad,
    Node,
    base_requires_grad,
    input_edge,
    leaf_edge,
    made_without_history,
    refresh_stale_view,
)
from .recorded import RecordedArray
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "Node", "Variable", "backward", "grad", "queue_callback",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "gradcheck", "gradgradcheck",
]


def _why_no_grad(t: Tensor) -> str:
    from .grad_mode import _GradState

    if not _GradState.enabled:
        return "backward was called inside a no_grad() region"
    return (
        "it was computed under no_grad()/inference_mode(), from detached "
        "tensors (.detach() cuts the graph), only from tensors that never had requires_grad=True, or by an op "
        "PyTorch gives no derivative (argmax, a comparison, torch.special's orthogonal polynomials and "
        "modified Bessel functions)"
    )


def _make_roots(tensors: Sequence[Tensor], grad_tensors, create_graph: bool = False) -> list:
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor) or grad_tensors is None:
        grad_tensors = [grad_tensors]
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} outputs")
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if type(t) is GradientEdge:
            roots.append(_edge_root(i, t, g, create_graph))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"backward expects tensors, got {type(t).__name__}")
        if not t._requires_grad or made_without_history(t):  # (None: a view made under no_grad, which has no history)
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: "
                + _why_no_grad(t)
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (this output has "
                    f"shape {list(t.shape)}); pass gradient= with that shape, or reduce it first, "
                    "e.g. loss.sum().backward()"
                )
            if t._data.dtype.kind == "c":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = xp.ones(t._data.shape, dtype=t._data.dtype)
        else:
            g = g._data if isinstance(g, Tensor) else xp.asarray(g, dtype=t._data.dtype)
            if g.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)!r} and "
                    f"output[{i}] has a shape of {Size(t._data.shape)!r}."  # (torch.Size([3]) under ember.compat)
                )
            if g.dtype != t._data.dtype:  # PyTorch casts a real gradient to its output's dtype
                if g.dtype.kind == "c" or t._data.dtype.kind == "c":
                    given = grad_tensors[i].dtype if isinstance(grad_tensors[i], Tensor) else g.dtype
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have the same dtype. "
                        f"Mismatch in dtype: grad_output[{i}] has a dtype of {given} and output[{i}] has a dtype "
                        f"of {t.dtype}."
                    )
                user = grad_tensors[i]
                if create_graph and isinstance(user, Tensor):  # the cast is differentiable, as PyTorch's .to
                    roots.append((t._edge(), RecordedArray(user.to(t.dtype))))
                    continue
                g = g.astype(t._data.dtype)
        if create_graph:  # the gradient is a recorded tensor: grad_outputs that require grad are differentiated too
            user = grad_tensors[i]
            g = RecordedArray(user if isinstance(user, Tensor) and user._data is g else Tensor._make(g))
        roots.append((t._edge(), g))
    return roots


def _edge_root(i: int, edge: GradientEdge, g, create_graph: bool) -> tuple:
    """The root of a walk that starts at a ``GradientEdge`` among the outputs, as PyTorch's: ``g`` enters the graph
    at ``edge.node``'s output ``edge.output_nr``, checked against that output's shape (a leaf's, or what the node
    recorded of it: ``Node.output_metadata``); without ``g``, a one-element output's gradient is ones of its
    shape and dtype, as PyTorch's."""
    node = edge.node
    if type(node) is AccumulateGrad:
        leaf = node.variable
        meta = None if leaf is None else (leaf._data.shape, leaf._data.dtype)
    else:
        meta = node.output_metadata(edge.output_nr) if isinstance(node, Node) else None
    if g is None:
        if meta is None or math.prod(meta[0]) != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs: pass the gradient of "
                               f"output {i} (a GradientEdge) in grad_outputs")
        if meta[1].kind == "c":
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                               f"{from_np(meta[1])}")
        g = xp.ones(meta[0], dtype=meta[1])
    user = g
    g = g._data if isinstance(g, Tensor) else xp.asarray(g)
    if meta is not None and g.shape != meta[0]:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)!r} and "
                           f"output[{i}] has a shape of {Size(meta[0])!r}.")
    if create_graph:
        g = RecordedArray(user if isinstance(user, Tensor) and user._data is g else Tensor._make(g))
    return (node, edge.output_nr), g


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into every reachable leaf's ``.grad``.

    ``retain_graph`` defaults to False: saved arrays are freed as backward goes.
    ``inputs``, if given, restricts accumulation to those leaves.
    """
    if retain_graph is None:
        retain_graph = create_graph
    tensors = [tensors] if isinstance(tensors, (Tensor, GradientEdge)) else list(tensors)
    roots = _make_roots(tensors, grad_tensors, create_graph)
    if inputs is None:
        run_backward(roots, retain_graph, create_graph=create_graph)
        return
    inputs = [inputs] if isinstance(inputs, (Tensor, GradientEdge)) else list(inputs)
    # (a GradientEdge: a leaf's accumulates into its .grad, a result's stops the walk there and is kept nowhere)
    edges = {(t.node, t.output_nr) if type(t) is GradientEdge else t._edge(): t for t in inputs}
    for t in inputs:
        if type(t) is not GradientEdge and t.grad_fn is not None:  # a non-leaf input keeps its gradient as
            t.retain_grad()  # retain_grad does (PyTorch calls it): once, however often it is listed or retained

    def accumulate_leaves(captured: dict) -> None:
        for edge, t in edges.items():
            g = captured.get(edge)
            if g is not None and (type(edge[0]) is AccumulateGrad if type(t) is GradientEdge else t.grad_fn is None):
                try:
                    edge[0].backward(g)  # the leaf's accumulator: its hooks, then +=
                except Exception:
                    if is_anomaly_enabled():  # the failed node is this accumulator, as PyTorch's engine runs it
                        from .anomaly import warn_failure

                        warn_failure(edge[0])
                    raise

    run_backward(roots, retain_graph, capture=edges, accumulate=False, create_graph=create_graph,
                 hook_captured_leaves=False, captured_run=True, then=accumulate_leaves)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Return d(outputs)/d(inputs) (vector-Jacobian products with ``grad_outputs``) without touching any ``.grad``.

    As PyTorch's: ``only_inputs`` is deprecated and ignored (with PyTorch's warning when False);
    ``allow_unused`` (default False, True under ``materialize_grads``) returns None for an input the outputs do
    not depend on, ``materialize_grads`` zeros instead; ``is_grads_batched`` treats the first dimension of every
    ``grad_outputs`` as a batch and returns gradients with that batch dimension, from one backward pass over the
    whole batch as PyTorch's vmap gives (one pass per batch element where a backward formula cannot run batched:
    ``func/_batched_vjp.py``).
    """
    if retain_graph is None:
        retain_graph = create_graph
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    outputs = [outputs] if isinstance(outputs, (Tensor, GradientEdge)) else list(outputs)
    single = isinstance(inputs, (Tensor, GradientEdge))
    inputs = [inputs] if single else list(inputs)
    # Forward-over-reverse: gradients of outputs that carry forward-mode tangents carry theirs, as PyTorch's, so
    # the formulas run recorded (the tangents flow through the recorded ops) and the results are then detached.
    tangents_only = not create_graph and forward_ad.tangents_through_grad(*outputs)
    recorded = create_graph or tangents_only
    roots = _make_roots(outputs, grad_outputs, recorded)  # (the outputs' errors first, as PyTorch's)
    for i, t in enumerate(inputs):
        if type(t) is not GradientEdge and not t._requires_grad:  # (a view without history requires grad, and
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")  # takes none)
    edges = [(t.node, t.output_nr) if type(t) is GradientEdge else t._edge() for t in inputs]
    captured = run_backward(roots, retain_graph, capture={e for e in edges if e is not None}, accumulate=False,
                            create_graph=recorded)
    result = []
    given = [g for _, g in roots]  # the caller's grad_outputs (or the implicit ones): always returned as copies
    for i, (t, edge) in enumerate(zip(inputs, edges)):
        g = captured.get(edge)
        if g is None:
            if materialize_grads:
                result.append(_materialized(t, create_graph))
                continue
            if not allow_unused:
                raise _unused(i, t)
            result.append(None)
        elif type(g) is RecordedArray:  # create_graph: the gradient is a tensor of the graph
            result.append(forward_ad.detached(g.t) if tangents_only else g.t)
        elif create_graph:  # a constant gradient (the formula did not depend on anything recorded)
            result.append(Tensor._make(xp.array(g, copy=True)))
        elif _own_array(g, given):
            given.append(g)  # (an input listed twice gets a copy the second time)
            result.append(Tensor._make(g))
        elif type(g) is SparseCOO:
            result.append(as_tensor(g.copy()))
        else:
            result.append(Tensor._make(_copied_keeping_broadcast(g)))
    if _meta.made[0]:  # a meta input's (constant) gradient is a meta tensor, as PyTorch's
        result = [Tensor._make(_meta.meta_array(r.shape, r._data.dtype)) if r is not None and r.grad_fn is None
                  and type(t) is not GradientEdge and _meta.is_meta(t._data) else r for r, t in zip(result, inputs)]
    return tuple(result)


def _own_array(g, given: list) -> bool:
    """Whether ``grad`` may return the gradient array its backward formulas made rather than a copy: a writeable
    array holding its own memory (not a view of a saved array or of another gradient, not a broadcast), and none
    of ``given`` (the grad_outputs, which a formula such as addition's passes through unchanged, and the arrays
    already returned). PyTorch returns the computed tensor itself in every case; copying only the arrays that may
    share memory keeps per-sample gradients (a few MB per call) from being copied once more."""
    if type(g) is not xp.ndarray or g.base is not None or not g.flags.writeable:
        return False
    for a in given:
        if a is g:
            return False
    return True


def _copied_keeping_broadcast(g):
    """A copy of the gradient array ``g`` that keeps its broadcast dims broadcast: ``sum``'s gradient is its
    output gradient expanded (strides 0), and PyTorch returns that expanded tensor (not contiguous; in-place
    arithmetic on it raises PyTorch's "more than one element ... refers to a single memory location"). Only the
    elements ``g`` holds are copied, then expanded again, so the result shares no memory with a saved array or a
    grad_output, as the plain copy of a gradient that is not broadcast."""
    if 0 not in g.strides or g.size <= 1:
        return xp.array(g, copy=True)
    held = g[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in g.strides)]
    return xp.broadcast_to(xp.array(held, copy=True), g.shape)


def _unused(i: int, t: Tensor) -> RuntimeError:
    return RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. Set "
                        "allow_unused=True if this is the desired behavior.")


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads) -> tuple:
    """``grad(..., is_grads_batched=True)``: the vector-Jacobian products for every cotangent of the batch, from
    one backward walk over the whole batch (``func/_batched_vjp.py``) where it applies, else one walk per
    cotangent; stacked."""
    from ..func._batched_vjp import applies, batched_vjp

    outputs = [outputs] if isinstance(outputs, (Tensor, GradientEdge)) else list(outputs)
    grad_outputs = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs or [])
    if len(grad_outputs) != len(outputs) or any(not isinstance(g, Tensor) for g in grad_outputs):
        raise RuntimeError("grad(is_grads_batched=True) needs one batched grad_outputs tensor per output")
    batch = {g.shape[0] if g.ndim else None for g in grad_outputs}
    if len(batch) != 1 or None in batch:
        raise RuntimeError("grad(is_grads_batched=True): every grad_outputs tensor must have the same leading "
                           f"(batch) dimension, got shapes {[list(g.shape) for g in grad_outputs]}")
    n = batch.pop()
    if n == 0:  # PyTorch reads each batch's first cotangent to check it against its output
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    listed = [inputs] if isinstance(inputs, (Tensor, GradientEdge)) else list(inputs)
    # (a GradientEdge among the outputs or inputs: one walk per cotangent)
    tensors_only = all(isinstance(t, Tensor) and t._requires_grad for t in listed) and \
        not any(type(o) is GradientEdge for o in outputs)
    if tensors_only and applies(outputs, listed, grad_outputs):
        grads = batched_vjp(outputs, listed, grad_outputs, retain_graph, create_graph)
        if grads is not None:
            for i, (g, t) in enumerate(zip(grads, listed)):
                if g is None and not (allow_unused or materialize_grads):
                    raise _unused(i, t)
            return tuple(_materialized(t, create_graph) if g is None and materialize_grads else g
                         for g, t in zip(grads, listed))
    rows = [grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=True if b < n - 1 else retain_graph,
                 create_graph=create_graph, allow_unused=allow_unused or materialize_grads) for b in range(n)]
    from .. import stack

    return tuple((_materialized(t, create_graph) if materialize_grads else None)
                 if any(g is None for g in per_input) else stack(per_input)
                 for per_input, t in zip(zip(*rows), listed))


def _materialized(t: Tensor, create_graph: bool) -> Tensor:
    """``materialize_grads``' zeros for an unused input (under ``is_grads_batched`` too: shaped as the input, without
    the batch dimension), as PyTorch's ``zeros_like(input, requires_grad=create_graph)``; PyTorch's error for a
    ``GradientEdge``, which has no shape to give them."""
    if type(t) is GradientEdge:
        raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
    zeros = Tensor._make(xp.zeros_like(t._data))
    if create_graph:
        zeros.requires_grad_(True)
    return zeros


# Tensor knows the edge protocol only; what makes a leaf's edge and runs backward is installed from here.
install_autograd(leaf_edge=leaf_edge, input_edge=input_edge, refresh_view=refresh_stale_view,
                 base_requires_grad=base_requires_grad, backward=backward, is_grad_enabled=is_grad_enabled)

from .._missing import module_getattr as _module_getattr  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (as PyTorch: the functions)

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
