"""ember.autograd: the graph, the backward engine, grad mode and custom Functions."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from .._backend import xp
from .._sparse import SparseCOO, as_tensor
from .._tensor import Tensor
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import queue_callback, run_backward
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .graph import Node, add_to_grad
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "Node", "Variable", "backward", "grad", "queue_callback",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
]


def _why_no_grad(t: Tensor) -> str:
    from .grad_mode import _GradState

    if not _GradState.enabled:
        return "backward was called inside a no_grad() region"
    return (
        "it has no grad_fn: it was computed under no_grad()/inference_mode(), from detached "
        "tensors (.detach() cuts the graph), or only from tensors that never had requires_grad=True"
    )


def _make_roots(tensors: Sequence[Tensor], grad_tensors) -> list:
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor) or grad_tensors is None:
        grad_tensors = [grad_tensors]
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} outputs")
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward expects tensors, got {type(t).__name__}")
        if not t._requires_grad:
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
            g = xp.ones(t._data.shape, dtype=t._data.dtype)
        else:
            g = g._data if isinstance(g, Tensor) else xp.asarray(g, dtype=t._data.dtype)
            if g.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                    f"output[{i}] has a shape of {list(t._data.shape)}."
                )
        roots.append((t._edge(), g))
    return roots


def _check_create_graph(create_graph: bool) -> None:
    if create_graph:
        raise NotImplementedError(
            "create_graph=True (higher-order gradients) is not supported by ember: its backward "
            "formulas run on raw arrays and are not themselves recorded"
        )


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into every reachable leaf's ``.grad``.

    ``retain_graph`` defaults to False: saved arrays are freed as backward goes.
    ``inputs``, if given, restricts accumulation to those leaves.
    """
    _check_create_graph(create_graph)
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    roots = _make_roots(tensors, grad_tensors)
    if inputs is None:
        run_backward(roots, bool(retain_graph))
        return
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    edges = {t._edge(): t for t in inputs}
    captured = run_backward(roots, bool(retain_graph), capture=edges, accumulate=False)
    for edge, t in edges.items():
        g = captured.get(edge)
        if g is None:
            continue
        if t.grad_fn is None:
            edge[0].backward(g)  # the leaf's accumulator: its hooks, then +=
        else:
            add_to_grad(t, g)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple:
    """Return d(outputs)/d(inputs) without touching any ``.grad``. ``only_inputs`` is ignored, as in PyTorch."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.",
                      FutureWarning, stacklevel=2)
    _check_create_graph(create_graph)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    roots = _make_roots(outputs, grad_outputs)
    edges = [t._edge() for t in inputs]
    captured = run_backward(roots, bool(retain_graph), capture=set(edges), accumulate=False)
    result = []
    for i, (t, edge) in enumerate(zip(inputs, edges)):
        g = captured.get(edge)
        if g is None:
            if materialize_grads:
                g = xp.zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}, shape {list(t.shape)}) appears "
                    "to not have been used in the graph. Set allow_unused=True if this is the "
                    "desired behavior."
                )
        result.append(None if g is None else as_tensor(g.copy() if type(g) is SparseCOO else xp.array(g, copy=True)))
    return tuple(result)


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
