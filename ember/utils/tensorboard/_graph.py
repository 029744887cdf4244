"""``SummaryWriter.add_graph``'s graph: a model's operations as TensorBoard's ``GraphDef``, grouped by module.

PyTorch traces the model with its JIT (``torch.jit.trace``) and writes the traced graph: its ATen operators, with
the constants and list constructions they take, under the scope of the module that ran them
(``CNN/Conv2d[conv1]/input.3``). ember has no JIT, but it records every differentiable operation in the autograd
graph as the model runs. So ember runs the model once, as PyTorch's trace does (in eval mode, the training flag
restored after), on detached copies of the floating-point inputs that require gradients (so the graph reaches
back to them), and reads the operations off the autograd graph of the outputs. Each module's forward is bracketed
by hooks that take a number from the autograd graph's sequence counter, so an operation recorded between them
belongs to that module (the innermost one); a node that autograd made later (lazily, when its graph was read)
takes the scope of the operation that uses it.

The nodes follow PyTorch's names and kinds: ``input/<argument>`` and ``output/output.<n>`` (kind ``IO Node``, with
their shapes), the parameters as ``<scope>/<name>`` (``prim::GetAttr``), the operations as ``<scope>/<n>`` with kind
``aten::<op>``, a model's tuple (or list, or dict) of outputs gathered by one ``prim::TupleConstruct`` node into one
output node of shape ``[1]``, as PyTorch's trace writes it. Differences from PyTorch: the operations are the
differentiable ones autograd records, named after their backward nodes (a linear layer shows ``aten::addmm`` and
``aten::t`` where PyTorch's trace shows ``aten::linear``; PyTorch's constants and list constructions do not appear);
an op that returns its input as it is (dropout in eval mode, which PyTorch's trace shows as ``aten::dropout``)
records nothing; operations on tensors that need no gradient (integer indices, a model without parameters) are not
recorded, so they are absent; ``use_strict_trace`` keeps only PyTorch's checks of the output (a dict of outputs
refused, a list warned of, unless it is False); the profiler's empty run metadata is not written.
"""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Any

from ..._tensor import Tensor
from ...autograd import graph as _autograd_graph
from ...autograd.grad_mode import enable_grad
from .._pytree import tree_map


def _flat_tensors(value: Any) -> list[Tensor]:
    """The tensors in ``value`` (a tensor, or lists, tuples and dicts of them), in order."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    return []


def _with_grad(value: Any, copies: list[tuple[Tensor, Tensor]]) -> Any:
    """``value`` with each floating-point tensor replaced by a detached copy that requires gradients (the pairs
    (copy, original) appended to ``copies``), so that the autograd graph reaches the model's inputs; containers
    rebuilt as the pytree rebuilds them (a namedtuple, a dict subclass keep their types)."""
    def with_grad(leaf: Any) -> Any:
        if not isinstance(leaf, Tensor) or not (leaf.is_floating_point() or leaf.is_complex()):
            return leaf
        copy = leaf.detach().requires_grad_(True)
        copies.append((copy, leaf))
        return copy

    return tree_map(with_grad, value)


def _aten_name(grad_fn) -> str:
    """``aten::<op>`` for an autograd node: ``MaxPool2DWithIndicesBackward0`` -> ``aten::max_pool2d_with_indices``
    (its forward op's name, in ATen's snake case)."""
    op = _autograd_graph.forward_op_name(_autograd_graph.short_name(grad_fn))
    return "aten::" + re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op).lower()


def _scopes(model) -> dict[int, str]:
    """Each submodule's scope as PyTorch's graph names it: ``CNN``, ``CNN/Conv2d[conv1]``,
    ``CNN/Sequential[seq]/Linear[1]`` (a module met twice keeps its first name)."""
    scopes: dict[int, str] = {}
    for name, module in model.named_modules():
        if id(module) in scopes:
            continue
        if not name:
            scopes[id(module)] = type(module).__name__
            continue
        parent, _, attr = name.rpartition(".")
        parent_scope = scopes[id(model.get_submodule(parent))] if parent else scopes[id(model)]
        scopes[id(module)] = f"{parent_scope}/{type(module).__name__}[{attr}]"
    return scopes


def _input_names(model, count: int) -> list[str]:
    """Names for the model's ``count`` input tensors: its forward's argument names where it has that many, as
    PyTorch's graph names them, else ``input.<n>``."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= count:
        return params[:count]
    return [f"input.{i + 1}" for i in range(count)]


def _run_with_scopes(model, args: tuple) -> tuple[Any, list[tuple[int, int, str]]]:
    """Run ``model(*args)``, returning its output and each module call's (first, end, scope) in sequence numbers."""
    scopes = _scopes(model)
    open_calls: list[tuple[int, str]] = []
    calls: list[tuple[int, int, str]] = []

    def enter(module, _inputs):
        open_calls.append((_autograd_graph._next_seq(), scopes[id(module)]))

    def leave(module, _inputs, _output):
        start, scope = open_calls.pop()
        calls.append((start, _autograd_graph._next_seq(), scope))

    handles = []
    seen = set()
    for module in model.modules():
        if id(module) not in seen:
            seen.add(id(module))
            handles.append(module.register_forward_pre_hook(enter))
            handles.append(module.register_forward_hook(leave))
    try:
        output = model(*args)
    finally:
        for handle in handles:
            handle.remove()
    return output, calls


def _scope_of(seq: int | None, calls: list[tuple[int, int, str]]) -> str | None:
    """The innermost module call whose sequence numbers hold ``seq``; None for a number outside them all."""
    best = None
    if seq is None:
        return None
    for start, end, scope in calls:
        if start < seq < end and (best is None or start > best[0]):
            best = (start, scope)
    return None if best is None else best[1]


def _check_output_container(output: Any, strict: bool) -> None:
    """PyTorch's strict trace on a mutable container of outputs: a dict is refused (its message printed, then
    "Error occurs, No graph saved", then the RuntimeError), a list warned of (TracerWarning)."""
    kind = "dict" if isinstance(output, dict) else "list" if isinstance(output, list) else None
    if kind is None or not strict:
        return
    message = (f"Encountering a {kind} at the output of the tracer might cause the trace to be incorrect, this is "
               "only valid if the container structure does not change based on the module's inputs. Consider using "
               "a constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
               "`NamedTuple` instead). If you absolutely need this and know the side effects, pass strict=False to "
               "trace() to allow this behavior.")
    if kind == "list":
        from ...jit import TracerWarning

        warnings.warn(message, TracerWarning, stacklevel=4)
        return
    print(message)
    print("Error occurs, No graph saved")
    raise RuntimeError(message)


def build_graph(model, input_to_model: Any, verbose: bool = False, use_strict_trace: bool = True):
    """The ``GraphDef`` that ``SummaryWriter.add_graph(model, input_to_model)`` writes (see the module's
    docstring)."""
    from tensorboardX.proto.attr_value_pb2 import AttrValue
    from tensorboardX.proto.graph_pb2 import GraphDef
    from tensorboardX.proto.node_def_pb2 import NodeDef
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboardX.proto.versions_pb2 import VersionDef

    def node(name: str, op: str, inputs: list[str], shape: tuple[int, ...] | None = None, attributes: str = ""):
        attr = {"attr": AttrValue(s=attributes.encode("utf-8"))}
        if shape is not None:
            dims = [TensorShapeProto.Dim(size=int(d)) for d in shape]
            attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)]))
        return NodeDef(name=name, op=op, input=inputs, attr=attr)

    args = input_to_model if isinstance(input_to_model, (list, tuple)) else (input_to_model,)
    if input_to_model is None:
        args = ()
    copies: list[tuple[Tensor, Tensor]] = []
    args = _with_grad(tuple(args), copies)
    training = model.training
    model.train(False)
    try:
        with enable_grad():
            output, calls = _run_with_scopes(model, args)
    finally:
        model.train(training)
    _check_output_container(output, use_strict_trace)

    root_scope = type(model).__name__
    leaf_names: dict[int, str] = {}  # id(tensor) -> node name, for the inputs and the parameters
    nodes = []
    for (copy, _), name in zip(copies, _input_names(model, len(copies)), strict=True):
        leaf_names[id(copy)] = f"input/{name}"
        nodes.append(node(f"input/{name}", "IO Node", [], tuple(copy.shape)))
    scopes = _scopes(model)
    for qualified, param in model.named_parameters():
        owner, _, attr = qualified.rpartition(".")
        scope = scopes[id(model.get_submodule(owner))] if owner else root_scope
        leaf_names[id(param)] = f"{scope}/{attr}"

    names: dict[int, str | None] = {}  # id(autograd node) -> its graph node's name (None: a leaf not shown)
    seen: dict[int, str] = {}  # id(autograd node) -> its scope, once met
    op_nodes: list = []
    param_nodes: dict[str, Any] = {}

    def visit(root, consumer_scope: str) -> None:
        """Name ``root`` and every node it reads from, adding their graph nodes in the order the forward pass ran
        them (depth first, without recursion: an unrolled RNN's graph is deep)."""
        stack = [(root, consumer_scope, False)]
        while stack:
            grad_fn, scope, expanded = stack.pop()
            if expanded:  # its inputs are named: number it after them
                names[id(grad_fn)] = name = f"{scope}/{len(op_nodes) + 1}"
                inputs = [names[id(f)] for f, _ in grad_fn.next_functions if f is not None and names.get(id(f))]
                op_nodes.append(node(name, _aten_name(grad_fn), inputs))
                continue
            if id(grad_fn) in seen:
                continue
            variable = getattr(grad_fn, "variable", None)
            if variable is not None:  # an AccumulateGrad: an input or a parameter
                seen[id(grad_fn)] = scope
                name = names[id(grad_fn)] = leaf_names.get(id(variable))
                if name is not None and not name.startswith("input/") and name not in param_nodes:
                    param_nodes[name] = node(name, "prim::GetAttr", [], tuple(variable.shape),
                                             f"{{ name :  {name.rpartition('/')[2]} }}")
                continue
            scope = seen[id(grad_fn)] = _scope_of(getattr(grad_fn, "seq", None), calls) or scope
            stack.append((grad_fn, scope, True))
            stack.extend((f, scope, False) for f, _ in reversed(grad_fn.next_functions) if f is not None)

    sources = []
    for tensor in _flat_tensors(output):
        if tensor.grad_fn is not None:
            visit(tensor.grad_fn, root_scope)
            sources.append(names[id(tensor.grad_fn)])
        else:
            sources.append(leaf_names.get(id(tensor)))
    if isinstance(output, Tensor):
        outputs = [node("output/output.1", "IO Node", [s for s in sources if s], tuple(output.shape))]
    else:  # PyTorch's trace returns one tuple: a TupleConstruct node, then one output node (of no known shape)
        op_nodes.append(node(f"{root_scope}/{len(op_nodes) + 1}", "prim::TupleConstruct", [s for s in sources if s]))
        outputs = [node("output/output.1", "IO Node", [op_nodes[-1].name], (1,))]
    graph_def = GraphDef(node=nodes + list(param_nodes.values()) + op_nodes + outputs, versions=VersionDef(producer=22))
    if verbose:
        for n in graph_def.node:
            print(n.name, n.op, list(n.input))
    return graph_def
