"""The backward engine: walk the graph from the roots to the leaves.

    1. count, for every node reachable from the roots, how many edges point at it
    2. run ready nodes highest sequence number first (the reverse of the order
       forward created them; leaf accumulators first of all, so gradients land
       as early as possible), summing each gradient down to its input's shape
    3. free each node's saved arrays once it has run (unless retain_graph)
    4. when the queue is empty, run the callbacks queued during this backward

With inputs given (autograd.grad, backward(inputs=...)) only the nodes on a path to them run, each computing only
the input gradients on such paths (``_reaching``), as PyTorch's engine does; nothing under the inputs is walked
(``topological_nr``).

Iterative and deterministic: the same graph runs its nodes, and so fires its
hooks, in the same order in every process — what data-parallel training needs.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable

from .. import _trace as trace
from .._backend import quiet_enter, quiet_exit, xp
from . import graph, lowp
from .grad_mode import _GradState, _ThreadGradState
from .graph import AccumulateGrad, CastEdge, Node, add_to_grad, cast_gradient, short_name
from .recorded import RecordedArray, check_hook_value, hook_argument, hooked_grad, run_recorded


class _Callbacks(threading.local):
    """Per thread, as grad mode: one list per backward in progress on it (backward may run inside a hook)."""

    def __init__(self) -> None:
        self.stack: list[list[Callable[[], None]]] = []
        self.walks: list[_Walk] = []  # the backward walks in progress, innermost last (current_walk)


_callbacks = _Callbacks()


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` once, when the backward that is running now (on this thread) finishes: after the callbacks
    queued before it, under that backward's grad mode (enabled only with ``create_graph``), as PyTorch's."""
    if not _callbacks.stack:
        raise RuntimeError("queue_callback can only be called while a backward pass is running")
    _callbacks.stack[-1].append(callback)


def sum_to_shape(grad, shape: tuple):
    """Sum a broadcast gradient back down to ``shape`` (the one place ops un-broadcast)."""
    if grad.shape == shape:
        return grad
    if grad.ndim < len(shape) or any(g < n for g, n in zip(grad.shape[grad.ndim - len(shape):], shape)):
        grad = xp.broadcast_to(grad, xp.broadcast_shapes(grad.shape, shape))
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
    )
    if not shape and type(grad) is RecordedArray:  # (recorded as PyTorch's sum_to records it: a full sum, then
        return grad.sum()  # for other shapes a sum keeping the dims, viewed only to drop leading dims)
    if not axes:
        out = grad
    elif grad.dtype.itemsize == 2 and type(grad) is not RecordedArray:  # float16/bfloat16: accumulated in float32
        out = lowp.narrow(grad.sum(axis=axes, keepdims=True, dtype=xp.float32), grad.dtype)  # as PyTorch's sum kernel
    else:
        out = grad.sum(axis=axes, keepdims=True)
    return out.reshape(shape) if lead else out


def topological_nr(node: Node) -> int:
    """PyTorch's ``topological_nr``: the length of the longest path from ``node`` down to a node without edges (a
    leaf's accumulator: 0). A node whose number is below a target's cannot reach it, so a backward with inputs
    given walks no part of the graph under them (PyTorch's ``min_topo_nr``): taking a gradient at each step of an
    unrolled loop whose graph keeps every step (``create_graph``) visits the newest step, not the whole history.
    Computed on first use and kept on the node (``Node._topo``), so each node is numbered once: a node's edges are
    fixed once the op that made it has returned."""
    topo = node._topo
    if topo is not None:
        return topo
    stack = [(node, False)]
    while stack:
        at, expanded = stack.pop()
        if expanded:  # every child numbered (pushed after this entry)
            longest = -1
            for edge in at.next_edges:
                if edge is not None and edge[0]._topo > longest:
                    longest = edge[0]._topo
            at._topo = longest + 1
        elif at._topo is None:
            stack.append((at, True))
            stack.extend((edge[0], False) for edge in at.next_edges if edge is not None and edge[0]._topo is None)
    return node._topo


def _count_dependencies(roots: list[Node], min_topo: int = 0) -> dict[Node, int]:
    """For every node reachable from ``roots``, how many edges point at it. Nodes numbered below ``min_topo``
    (``topological_nr``) are counted but not walked through: they lead to no input given."""
    deps: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        if min_topo and node._topo < min_topo:
            continue
        for edge in node.next_edges:
            if edge is None:
                continue
            child = edge[0]
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def has_hooks(roots: list[Node]) -> bool:
    """Whether a backward from ``roots`` would run anything besides the formulas: a node's pre- or post-hooks
    (tensor hooks included) or a retained gradient."""
    nodes = [*roots, *_count_dependencies(roots)]
    return any(n._pre_hooks or n._node_pre_hooks or n._post_hooks or n._retained for n in nodes)


def _reaching(roots: list[Node], targets: set, min_topo: int = 0) -> set:
    """The nodes that must run for some node of ``targets`` to get its gradient: those with an edge to a target or
    to such a node (PyTorch's ``needed_``). With ``inputs`` given (autograd.grad, backward(inputs=...)) only these
    run, and only their inputs on such paths get gradients, as PyTorch's engine computes just what reaches the
    inputs (a penalty's input gradient takes no weight gradients); the targets themselves are only visited (their
    tensor hooks, the gradient captured) unless they are needed too. A node numbered below ``min_topo``, the
    targets' least ``topological_nr``, leads to none: not walked through."""
    needed: set = set()
    done: set = set()
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:  # every child is finished (a DAG: a pending child would close a cycle)
                for edge in node.next_edges:
                    if edge is not None and (edge[0] in needed or edge[0] in targets):
                        needed.add(node)
                        break
                continue
            if node in done:
                continue
            done.add(node)
            if min_topo and node._topo < min_topo:
                continue
            stack.append((node, True))
            for edge in node.next_edges:
                if edge is not None and edge[0] not in done:
                    stack.append((edge[0], False))
    return needed


def _run_pruned(node: Node, grads: list, reach: set, traced: bool, create_graph: bool) -> list:
    """``_run_node`` with the inputs whose edges reach no captured edge marked as needing no gradient (so the
    formula skips them), and any gradient it still returns for them dropped."""
    needs = getattr(node, "needs_input_grad", None)  # (a custom Function's node keeps its flags on its ctx)
    wanted = [e is not None and e[0] in reach for e in node.next_edges]
    if True not in wanted:
        return [None] * len(wanted)
    if needs is None or False not in wanted:
        return _run_node(node, grads, traced, create_graph)
    node.needs_input_grad = tuple(bool(n) and w for n, w in zip(needs, wanted))
    try:
        input_grads = _run_node(node, grads, traced, create_graph)
    finally:
        node.needs_input_grad = needs
    return [g if w else None for g, w in zip(input_grads, wanted)]


def _call_pre_hooks(node: Node, grads: list) -> None:
    """Tensor hooks (``register_hook``) of ``node``'s outputs. As PyTorch's, an output without a gradient (one
    output of a multi-output node, or any below a custom Function's None) still calls its hooks, with None."""
    for nr, hooks in node._pre_hooks.items():
        for hook in tuple(hooks):
            grads[nr] = hooked_grad(hook, grads[nr])


def _checked_replacements(hook, old: tuple, out) -> tuple:
    """What a node's pre- or post-hook returned in place of the gradients ``old``, after PyTorch's checks: as many
    values, each of the size and dtype of the gradient it replaces, and no tensor where there was none."""
    if len(out) != len(old):
        raise RuntimeError(f"hook '{getattr(hook, '__name__', type(hook).__name__)}' has returned an incorrect "
                           f"number of values (got {len(out)}, but expected {len(old)})")
    for was, new in zip(old, out):
        if was is not None and new is not None:
            check_hook_value(hook, was, new)
        elif new is not None:  # (no gradient is given where the walk has none for that output or input)
            raise RuntimeError("can't replace a None gradient with a non-None value")
    return tuple(out)


def _call_node_pre_hooks(node: Node, grads: list) -> list:
    """``Node.register_prehook`` hooks: each gets the output gradients (None where there is none) and may return
    new ones, as many."""
    grad_outputs = tuple(None if g is None else hook_argument(g) for g in grads)
    changed = False
    for hook in tuple(node._node_pre_hooks):
        out = hook(grad_outputs)
        if out is None:
            continue
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"expected tuple, but hook returned '{type(out).__name__}'")
        grad_outputs, changed = _checked_replacements(hook, grad_outputs, out), True
    if not changed:
        return grads
    recorded = any(type(g) is RecordedArray for g in grads)  # (create_graph: the walk carries recorded tensors)
    return [None if t is None else RecordedArray(t) if recorded else t._data for t in grad_outputs]


def _to_input(grad, edge: tuple, shape: tuple):
    """``grad`` as it goes down ``edge``: summed to the input's ``shape``, then (a ``CastEdge``) in its dtype."""
    grad = sum_to_shape(grad, shape)
    return cast_gradient(grad, edge.dtype) if type(edge) is CastEdge else grad


def _call_post_hooks(node: Node, grads: list, input_grads, create_graph: bool) -> list:
    """``Node.register_hook`` hooks: each gets the input gradients (summed to the inputs' shapes; None for an input
    that needs none) and the output gradients, and may return new input gradients."""
    wrap = RecordedArray if create_graph else None
    grad_inputs = tuple(None if e is None or g is None else
                        hook_argument(_to_input(g, e, s))
                        for e, s, g in zip(node.next_edges, node.input_shapes, input_grads))
    grad_outputs = tuple(None if g is None else hook_argument(g) for g in grads)
    for hook in tuple(node._post_hooks):
        out = hook(grad_inputs, grad_outputs)
        if out is None:
            continue
        grad_inputs = _checked_replacements(hook, grad_inputs, out)
    return [None if t is None else wrap(t) if wrap is not None else t._data for t in grad_inputs]


def _retain_grads(node: Node, grads: list) -> None:
    for nr, ref in node._retained.items():
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            add_to_grad(tensor, grads[nr])


_walk_serials = itertools.count()


def current_walk() -> _Walk | None:
    """The backward running on this thread (the innermost, where one runs inside a hook), or None."""
    walks = _callbacks.walks
    return walks[-1] if walks else None


def will_run(walk: _Walk, node: Node | None) -> bool:
    """Whether ``node`` runs in the backward ``walk``: reached from its roots and, with inputs given, on a path to
    them (PyTorch's ``_will_engine_execute_node``). As PyTorch's, a backward from one root gradient does not count
    the root's own node (PyTorch's engine then starts at that node rather than at a graph root above the roots'
    nodes, so the node is not among those it found in the graph): ``y.backward()`` runs no ``mode="all"``
    multi-grad hook over ``y`` alone."""
    if node is None or (node not in walk.deps and (node not in walk.roots or walk.one_root)):
        return False
    if walk.reach is None:
        return True
    if node not in walk.reach:
        return False
    if type(node) is AccumulateGrad and not walk.accumulates:  # (a leaf autograd.grad takes the gradient of)
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return True


def inputs_given() -> bool:
    """Whether the backward running on this thread computes only some gradients (``autograd.grad``, or
    ``backward(inputs=...)``): PyTorch's reentrant checkpoint refuses to run inside one (``_is_checkpoint_valid``
    is False there)."""
    walk = current_walk()
    return walk is not None and walk.reach is not None


class _Walk:
    """One backward's state: gradients waiting per node, dependency counts, the ready heap."""

    __slots__ = ("buffers", "deps", "ready", "order", "reach", "roots", "one_root", "serial", "accumulates")

    def __init__(self, roots, min_topo: int = 0) -> None:
        self.reach: set | None = None  # with inputs given: the nodes on a path to them (``_reaching``)
        self.accumulates = True  # False: autograd.grad's, which writes no leaf's .grad
        self.buffers: dict[Node, list] = {}
        for (node, nr), grad in roots:
            self.add(node, nr, grad)
        root_nodes = list(self.buffers)
        self.roots = root_nodes
        self.one_root = len(roots) == 1  # (one root gradient: PyTorch's engine has no graph root node above it)
        self.serial = next(_walk_serials)  # (tells one backward from the next, as PyTorch's graph task id)
        self.deps = _count_dependencies(root_nodes, min_topo)
        self.order = itertools.count()  # tie-break for equal priorities, so the order stays deterministic
        self.ready = [(-n.seq, next(self.order), n) for n in root_nodes if self.deps.get(n, 0) == 0]
        heapq.heapify(self.ready)

    def add(self, node: Node, nr: int, grad) -> None:
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = [None] * node.num_outputs
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad

    def pop(self) -> tuple[Node, list]:
        node = heapq.heappop(self.ready)[2]
        return node, self.buffers.pop(node)

    def send(self, node: Node, input_grads) -> None:
        """Pass ``node``'s input gradients down its edges (summed to each input's shape); queue what is ready."""
        deps, add = self.deps, self.add
        passed = zip(node.next_edges, node.input_shapes, input_grads)
        if node.send_order is not None:
            passed = [*passed]
            passed = [passed[i] for i in node.send_order]
        for edge, shape, g in passed:
            if edge is None:
                continue
            child, nr = edge
            if g is not None:
                if g.shape != shape:
                    g = sum_to_shape(g, shape)
                if edge.__class__ is not tuple:  # a promoted operand's edge: then cast to the input's dtype, as
                    g = cast_gradient(g, edge.dtype)  # PyTorch's engine sums a gradient to the shape first
                add(child, nr, g)
            remaining = deps[child] - 1
            deps[child] = remaining
            if remaining == 0:
                self._release(child)

    def _release(self, node: Node) -> None:
        """``node``'s count reached 0: ready, even without any gradient (as PyTorch's engine runs every node it
        reaches: its hooks fire with None, its saved tensors are checked, and it passes None on), except one that
        leads to none of the inputs given: dropped, gradient and all, with none of its hooks (nothing below it
        leads to them either, so nothing waits on it), as PyTorch's engine skips what it does not need."""
        if self.reach is None or node in self.reach:
            self.buffers.setdefault(node, [None] * node.num_outputs)
            heapq.heappush(self.ready, (-node.seq, next(self.order), node))
        else:
            self.buffers.pop(node, None)

    def prune(self, reach: set, single: bool, hooks: bool) -> None:
        """With inputs given: only what leads to them runs (``reach``). A root that does not is dropped; as in
        PyTorch, where a single output is itself the engine's first node, that one still calls its tensor hooks
        (the gradient is then dropped)."""
        self.reach = reach
        for entry in [e for e in self.ready if e[2] not in reach]:
            self.ready.remove(entry)
            grads = self.buffers.pop(entry[2])
            if single and hooks and entry[2]._pre_hooks:
                _call_pre_hooks(entry[2], grads)
            if single and hooks and entry[2]._retained:
                _retain_grads(entry[2], grads)
        heapq.heapify(self.ready)


def _run_without_gradient(node: Node, hooks: bool) -> list:
    """A node reached without any gradient (or whose pre-hooks took them all): no formula runs, but, as in
    PyTorch, its saved tensors are still checked for in-place changes, a leaf's accumulator still runs its hooks
    (None for the gradient; ``.grad`` untouched), and it passes None to every input."""
    if node._packed:
        node.unpack_saved()
    node.check_saved_versions()
    if type(node) is AccumulateGrad and hooks:
        node.backward(None)
    return [None] * len(node.next_edges)


def _run_node(node: Node, grads: list, traced: bool, create_graph: bool):
    """Check ``node``'s saved tensors, run its backward (a trace span while recording); its input gradients.
    Under ``create_graph`` the backward formula records itself (recorded.py)."""
    if node.integer_output:  # (PyTorch casts the gradient to the integer result's dtype, then asserts)
        raise RuntimeError('isDifferentiableType(grad.scalar_type()) INTERNAL ASSERT FAILED: a gradient reached '
                           f'{node.name()}, whose result is an integer or bool tensor (filled in place from a value '
                           'that requires grad), which PyTorch\'s autograd engine cannot differentiate')
    if node._packed:
        node.unpack_saved()
    node.check_saved_versions()
    if graph._op_observer is not None:  # (a FlopCounterMode entered: the gradient's products counted)
        graph._op_observer.backward(node, grads)
    started = trace.start() if traced else None
    if node.half_dtype is not None:  # a half-precision op computed in float32: so is its backward
        grads = lowp.to_float32(grads, node.half_dtype)
    elif node.half_inputs is not None and node.narrows_mixed_result:  # (its result rounded to the half inputs')
        grads = lowp.to_float32(grads, node.half_inputs[0])
    if create_graph:
        input_grads = run_recorded(node, grads)
    else:
        input_grads = node.backward(grads[0]) if node.num_outputs == 1 else node.backward(*grads)
    if node.half_dtype is not None:
        input_grads = lowp.narrow(input_grads, node.half_dtype)
    elif node.half_inputs is not None:
        input_grads = lowp.narrow_at(input_grads, *node.half_inputs)
    if started is not None:
        trace.finish(short_name(node), "backward", started)
    if _ThreadGradState.anomaly and _ThreadGradState.anomaly_check_nan:  # (process-wide: on the class)
        from .anomaly import check_grads

        check_grads(node, input_grads)
    return input_grads


def run_node(node: Node, grads: list):
    """``node``'s input gradients from its output gradients ``grads``, run as the engine runs a node (its saved
    tensors checked, recorded under ``create_graph``), for a node that runs another inside its own backward
    (``CopySlices`` the in-place op's node it wraps, as PyTorch's)."""
    return _run_node(node, grads, False, _GradState.higher_order)


def run_backward(roots: list[tuple[tuple[Node, int], object]], retain_graph: bool,
                 capture: dict | None = None, accumulate: bool = True, create_graph: bool = False,
                 grad_mode: bool | None = None, ran: list | None = None, hooks: bool = True,
                 hook_captured_leaves: bool = True, captured_run: bool = False,
                 then: Callable[[dict], None] | None = None) -> dict:
    """Backpropagate ``grad`` from each ``(edge, grad)`` root.

    ``capture`` maps edges whose incoming gradient should be returned (autograd.grad).
    With ``accumulate=False`` leaf accumulators are not run (nothing is written to .grad).
    With ``create_graph`` the gradients are recorded tensors (``RecordedArray``; the roots' gradients must be
    too) and the gradient computation is itself part of the graph; ``grad_mode=False`` runs those formulas on
    tensors without recording them (the backward over a batch of cotangents, ``func/_batched_vjp.py``).
    ``ran`` (a list) gets every node whose backward ran, for a caller that frees them later. ``hooks=False``
    runs the formulas only: no hooks, no retained gradients (a trial walk, ``func/_batched_vjp.py``).
    ``hook_captured_leaves=False``: a captured leaf's gradient is returned before its tensor hooks, for a caller that
    accumulates it through the leaf's accumulator, which runs them (``backward(inputs=...)``: once, as PyTorch's).
    ``captured_run``: a captured node runs as any other (``backward(inputs=...)``, which PyTorch's engine marks as
    needed; autograd.grad only takes their gradients).
    ``then``: called with the captured gradients last, under the caller's grad mode, while this backward is still
    the thread's current one (``current_walk``: the leaf accumulators of ``backward(inputs=...)`` run there, and a
    multi-grad hook over them must see the backward they belong to).
    Returns {edge: gradient} for the captured edges.
    """
    min_topo = 0
    if capture is not None:
        targets = {node for node, _ in capture}
        # (the roots numbered too: ``_count_dependencies`` and ``_reaching`` read every walked node's number)
        min_topo = min(map(topological_nr, targets), default=0)
        for (node, _), _ in roots:
            topological_nr(node)
    walk = _Walk(roots, min_topo)
    walk.accumulates = accumulate or captured_run  # (backward(inputs=...) accumulates its leaves itself)
    needed = reach = None
    if capture is not None:
        needed = _reaching(list(walk.buffers), targets, min_topo)
        if captured_run:
            needed |= targets
        reach = needed | targets
        walk.prune(reach, len(roots) == 1, hooks)
    captured: dict = {}
    callbacks: list[Callable[[], None]] = []
    stack = _callbacks.stack
    stack.append(callbacks)
    _callbacks.walks.append(walk)
    prev_grad_mode, prev_higher_order = _GradState.enabled, _GradState.higher_order
    _GradState.enabled = create_graph if grad_mode is None else grad_mode  # backward math is recorded only for
    _GradState.higher_order = create_graph  # create_graph
    started = trace.start()
    quiet = quiet_enter()  # backward formulas and accumulation, like forward, make inf/nan silently (ember._backend)
    node = None
    try:
        while walk.ready:
            node, grads = walk.pop()
            if node._pre_hooks and hooks:
                _call_pre_hooks(node, grads)
            if node._retained and hooks:
                _retain_grads(node, grads)
            if capture is not None:
                if type(node) is AccumulateGrad and not accumulate:  # autograd.grad of a leaf: its hooks, no .grad
                    if hooks and hook_captured_leaves:
                        grads = [node.hooked(grads[0], accumulating=False)]
                    captured.update({(node, nr): g for nr, g in enumerate(grads) if (node, nr) in capture})
                    continue
                captured.update({(node, nr): g for nr, g in enumerate(grads) if (node, nr) in capture})
                if node not in needed:  # an input of autograd.grad that leads to no other: captured, not run
                    continue
            if node._node_pre_hooks and hooks:
                grads = _call_node_pre_hooks(node, grads)
            # (no gradient at all; a one-output node's read alone: a generator over the list cost 0.32 µs a node,
            # this test 0.05)
            if (len(grads) == 1 and grads[0] is None or len(grads) != 1 and all(g is None for g in grads)) \
                    and not node.runs_without_gradient:
                input_grads = _run_without_gradient(node, hooks)
            elif reach is None:
                input_grads = _run_node(node, grads, started is not None, create_graph)
            else:
                input_grads = _run_pruned(node, grads, reach, started is not None, create_graph)
            if node._post_hooks and hooks:
                input_grads = _call_post_hooks(node, grads, input_grads, create_graph)
            if not retain_graph:
                node.release()
            else:
                if node._packed_saved is not None:  # (saved-tensor hooks: the next backward unpacks again)
                    node.repack_saved()
                if ran is not None:
                    ran.append(node)
            walk.send(node, input_grads)
        node = None  # (an error in a callback or in ``then`` is no node's: anomaly mode names none, as PyTorch's)
        _GradState.higher_order = prev_higher_order
        trace.finish("backward", "autograd", started)
        while callbacks:  # (under the backward's grad mode, as PyTorch's engine runs them; restored below)
            callbacks.pop(0)()
        if then is not None:
            _GradState.enabled = prev_grad_mode
            then(captured)
    except Exception:
        if node is not None and node._packed_saved is not None:
            # the failed node had unpacked its saved tensors (saved-tensor hooks): packed again, so that the next
            # backward calls the unpack hook anew, as PyTorch's engine unpacks at each use
            node.repack_saved()
        if _ThreadGradState.anomaly and node is not None:  # PyTorch's warning: the failed node's forward call
            from .anomaly import warn_failure

            warn_failure(node)
        raise
    finally:
        quiet_exit(quiet)
        _GradState.enabled, _GradState.higher_order = prev_grad_mode, prev_higher_order
        stack.pop()
        _callbacks.walks.pop()
    return captured
