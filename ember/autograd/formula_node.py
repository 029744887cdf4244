"""Under create_graph, a backward formula that PyTorch writes as one op, recorded as one node.

PyTorch's derivative of ``tanh`` is the op ``tanh_backward(grad, result)``: differentiating through it records one
node, TanhBackwardBackward0, with one edge per argument of that op. ember writes each derivative once, as array
code (``Node.backward``, recorded step by step under create_graph: recorded.py), so its gradient's graph holds the
formula's steps (a Mul, a Sub ...). ``gathered`` puts those steps under one node named as PyTorch's
(``FormulaNode``): its outputs are the formula's results, its edges the formula's inputs (the incoming gradients
first, then the differentiated node's inputs and outputs that the steps read, then anything else they read). Its
backward runs the steps it holds, newest first (the order they were recorded in, reversed: a topological order),
each with its own backward, so the derivative of the formula is still only the derivative of its steps, and under
create_graph that walk records itself, to any order.

``DOUBLE_BACKWARD`` names the nodes whose PyTorch derivative is one such op (derivatives.yaml's ``*_backward``
functions that have a derivative of their own); a node not named there keeps its formula's steps in the graph, as
PyTorch's do where the derivative is written in other ops (``mm``'s gradient is MmBackward0).
"""

from __future__ import annotations

from .graph import AccumulateGrad, Node, _next_seq, input_edge, torch_named
from .recorded import RecordedArray

# PyTorch's name of a node -> the name of the node its derivative records under create_graph
DOUBLE_BACKWARD: dict[str, str] = {
    "ReluBackward0": "ThresholdBackwardBackward0",
    "ThresholdBackward0": "ThresholdBackwardBackward0",
    "LeakyReluBackward0": "LeakyReluBackwardBackward0",
    "EluBackward0": "EluBackwardBackward0",
    "GeluBackward0": "GeluBackwardBackward0",
    "SoftplusBackward0": "SoftplusBackwardBackward0",
    "HardtanhBackward0": "HardtanhBackwardBackward0",
    "HardswishBackward0": "HardswishBackwardBackward0",
    "SoftshrinkBackward0": "SoftshrinkBackwardBackward0",
    "HardshrinkBackward0": "HardshrinkBackwardBackward0",
    "GluBackward0": "GluBackwardBackward0",
    "CeluBackward0": "EluBackwardBackward0",
    # the in-place forms that read their result (elu_, celu_, selu_, leaky_relu_, rrelu_) and threshold_: PyTorch's
    # same backward op, given the result (``is_result``) where the form saved it
    "EluBackward1": "EluBackwardBackward0",
    "CeluBackward1": "EluBackwardBackward0",
    "LeakyReluBackward1": "LeakyReluBackwardBackward0",
    "ThresholdBackward1": "ThresholdBackwardBackward0",
    "RreluWithNoiseBackward0": "RreluWithNoiseBackwardBackward0",
    "RreluWithNoiseBackward1": "RreluWithNoiseBackwardBackward0",
    "PreluKernelBackward0": "PreluKernelBackwardBackward0",
    "BinaryCrossEntropyBackward0": "BinaryCrossEntropyBackwardBackward0",
    "GridSampler2DBackward0": "GridSampler2DBackwardBackward0",
    "ReflectionPad1DBackward0": "ReflectionPad1DBackwardBackward0",
    "ReflectionPad2DBackward0": "ReflectionPad2DBackwardBackward0",
    "ReflectionPad3DBackward0": "ReflectionPad3DBackwardBackward0",
    "ReplicationPad1DBackward0": "ReplicationPad1DBackwardBackward0",
    "ReplicationPad2DBackward0": "ReplicationPad2DBackwardBackward0",
    "ReplicationPad3DBackward0": "ReplicationPad3DBackwardBackward0",
    "TanhBackward0": "TanhBackwardBackward0",
    "SigmoidBackward0": "SigmoidBackwardBackward0",
    "LogSigmoidBackward0": "LogSigmoidBackwardBackward0",
    "SoftmaxBackward0": "SoftmaxBackwardDataBackward0",
    "LogSoftmaxBackward0": "LogSoftmaxBackwardDataBackward0",
    "MseLossBackward0": "MseLossBackwardBackward0",
    "SmoothL1LossBackward0": "SmoothL1LossBackwardBackward0",
    "HuberLossBackward0": "HuberLossBackwardBackward0",
    "NllLossBackward0": "NllLossBackwardBackward0",
    "NativeLayerNormBackward0": "NativeLayerNormBackwardBackward0",
    "NativeBatchNormBackward0": "NativeBatchNormBackwardBackward0",
    "ConvolutionBackward0": "ConvolutionBackwardBackward0",
    "MaxPool2DWithIndicesBackward0": "MaxPool2DWithIndicesBackwardBackward0",
    "MaxPool3DWithIndicesBackward0": "MaxPool3DWithIndicesBackwardBackward0",
    "AvgPool2DBackward0": "AvgPool2DBackwardBackward0",
    "AvgPool3DBackward0": "AvgPool3DBackwardBackward0",
    "AdaptiveAvgPool2DBackward0": "AdaptiveAvgPool2DBackwardBackward0",
    "AdaptiveAvgPool3DBackward0": "AdaptiveAvgPool3DBackwardBackward0",
    "AdaptiveMaxPool2DBackward0": "AdaptiveMaxPool2DBackwardBackward0",
    "AdaptiveMaxPool3DBackward0": "AdaptiveMaxPool3DBackwardBackward0",
    # views whose gradient writes into zeros (select_backward ...), or gathers its pieces' (unbind's: a stack)
    "SelectBackward0": "SelectBackwardBackward0",
    "SliceBackward0": "SliceBackwardBackward0",
    "DiagonalBackward0": "DiagonalBackwardBackward0",
    "UnfoldBackward0": "UnfoldBackwardBackward0",
    "UnbindBackward0": "StackBackward0",
    "SplitBackward0": "CatBackward0",
    "SplitWithSizesBackward0": "CatBackward0",
}

# The nodes above whose PyTorch formula saves no tensor (sizes, padding, an index): a second backward through them
# after one without retain_graph runs again, as through any node that saved nothing
SAVES_NO_TENSOR = frozenset({
    "AvgPool2DBackwardBackward0", "AvgPool3DBackwardBackward0",
    "AdaptiveAvgPool2DBackwardBackward0", "AdaptiveAvgPool3DBackwardBackward0",
    "ReflectionPad1DBackwardBackward0", "ReflectionPad2DBackwardBackward0", "ReflectionPad3DBackwardBackward0",
    "ReplicationPad1DBackwardBackward0", "ReplicationPad2DBackwardBackward0", "ReplicationPad3DBackwardBackward0",
    "SelectBackwardBackward0", "SliceBackwardBackward0", "DiagonalBackwardBackward0", "UnfoldBackwardBackward0",
    "StackBackward0", "CatBackward0",
})


class FormulaNode(Node):
    """A backward formula's recorded steps as one node (the module doc). ``roots[i]``: where output i's gradient
    enters the steps (the edge of the step that made result i); ``steps``: the steps, newest first; ``slots``: for
    each edge out of the steps, (node id, output number) -> its position in ``next_edges``."""

    def backward(self, *grads):
        from .engine import run_node, sum_to_shape
        from .graph import cast_gradient

        steps = self.steps
        inner = self.inner
        buffers: dict = {}
        for root, g in zip(self.roots, grads):
            if root is not None and g is not None:
                _add(buffers, root[0], root[1], g)
        out: list = [None] * len(self.next_edges)
        for step in steps:
            gs = buffers.pop(step, None)
            if gs is None:  # (no gradient reached it: nothing to pass on)
                continue
            for edge, shape, g in zip(step.next_edges, step.input_shapes, run_node(step, gs)):
                if edge is None or g is None:
                    continue
                if g.shape != shape:
                    g = sum_to_shape(g, shape)
                if edge.__class__ is not tuple:  # a promoted operand's edge (graph.CastEdge), as the engine's walk
                    g = cast_gradient(g, edge.dtype)
                target = edge[0]
                if target in inner:
                    _add(buffers, target, edge[1], g)
                else:
                    k = self.slots[id(target), edge[1]]
                    out[k] = g if out[k] is None else out[k] + g
        return tuple(out)

    def release(self) -> None:
        """After a backward without retain_graph: a later one through this node is PyTorch's error for a freed graph
        (``check_saved_versions``). The steps are not freed here: a gradient computed through them under
        create_graph reaches them directly too (their formulas' saved tensors are theirs), and runs them later in
        the same backward; they go with this node and that graph. A node whose PyTorch formula saves no tensor
        (``SAVES_NO_TENSOR``) is never freed, as PyTorch's."""
        if self.name() not in SAVES_NO_TENSOR:
            self.saved = None


def _add(buffers: dict, node: Node, nr: int, g) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node.num_outputs
    buf[nr] = g if buf[nr] is None else buf[nr] + g


_NAMED: dict[str, type] = {}


def _named(name: str) -> type:
    cls = _NAMED.get(name)
    if cls is None:
        cls = _NAMED[name] = torch_named(name)(type("FormulaNode", (FormulaNode,), {"__slots__": ()}))
    return cls


def gathered(node: Node, name: str, grads, results, mark: int):
    """``results``, ``node``'s formula's recorded results (its steps numbered after ``mark``), as the outputs of one
    ``FormulaNode`` named ``name`` (the module doc); as they are when the formula recorded no step."""
    from .._tensor import Tensor

    single = not isinstance(results, (tuple, list))
    listed = (results,) if single else results
    roots = []
    for r in listed:
        if type(r) is RecordedArray and type(r.t) is not Tensor:  # (a batched backward's values: func/_batched.py)
            return results
        fn = r.t._grad_fn if type(r) is RecordedArray else None
        roots.append((fn, r.t._output_nr) if fn is not None and fn.seq > mark and type(fn) is not AccumulateGrad
                     else None)
    if not any(roots):
        return results
    # the steps: the nodes the results' history reaches that the formula made (numbered after ``mark``)
    inner: set = set()
    stack = [root[0] for root in roots if root is not None]
    boundary: dict = {}  # (node id, output number) -> (edge, shape), in the order the steps read them
    while stack:
        step = stack.pop()
        if step in inner:
            continue
        inner.add(step)
        for edge, shape in zip(step.next_edges, step.input_shapes):
            if edge is None:
                continue
            target = edge[0]
            if target.seq > mark and type(target) is not AccumulateGrad:
                stack.append(target)
            else:
                boundary.setdefault((id(target), edge[1]), ((target, edge[1]), shape))
    steps = sorted(inner, key=lambda n: -n.seq)
    # the edges: one per incoming gradient (None for a constant one), then the differentiated node's inputs and
    # outputs the steps read, in their order, as PyTorch's ``*_backward(grad, self, ..., result)``, then the rest
    edges: list = []
    shapes: list = []
    slots: dict = {}

    def take(key, edge, shape) -> None:
        slots[key] = len(edges)
        edges.append(edge)
        shapes.append(shape)

    for g in grads:
        t = g.t if type(g) is RecordedArray and type(g.t) is Tensor else None
        edge = input_edge(t) if t is not None and t._requires_grad else None
        key = None if edge is None else (id(edge[0]), edge[1])
        if key is not None and key in boundary and key not in slots:
            take(key, boundary[key][0], boundary[key][1])
        else:
            take(None, None, None)
    own = [(id(e[0]), e[1]) for e in node.next_edges if e is not None]
    own += [(id(node), k) for k in range(node.num_outputs)]
    for key in own + list(boundary):
        if key in boundary and key not in slots:
            take(key, *boundary[key])
    slots.pop(None, None)
    w = _named(name)()
    w.steps = steps
    w.inner = inner
    w.roots = roots
    w.slots = slots
    w.next_edges = edges
    w.input_shapes = shapes
    w.needs_input_grad = tuple(e is not None for e in edges)
    w._saved_versions = ()
    w.num_outputs = len(listed)
    w.seq = _next_seq()
    from . import forward_ad, graph

    out = []
    for i, (r, root) in enumerate(zip(listed, roots)):
        if root is None:
            # a result computed from constants alone (layer_norm's bias gradient, the incoming gradient summed) is
            # an output of PyTorch's one op all the same: it requires grad, its gradient never reaches the steps
            data = r.t._data if type(r) is RecordedArray else r
            if r is None or (type(r) is RecordedArray and r.t._requires_grad) or data.dtype.kind not in "fc":
                out.append(r)
            else:
                out.append(RecordedArray(Tensor._make(data, w, i)))
            continue
        t = Tensor._make(r.t._data, w, i)
        t._vc = r.t._vc  # (the steps may have saved these values: changing them in place is checked there)
        if graph._dual_level is not None:  # inside a forward-mode level: the result's tangent (forward-over-reverse)
            forward_ad.share_tangent(r.t, t)
        out.append(RecordedArray(t))
    return out[0] if single else type(results)(out)
