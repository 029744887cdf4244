"""Graph nodes: what forward records and backward walks.

Each differentiable op is a ``Node`` subclass with ``forward(*arrays, **params)``
and ``backward(grad)`` side by side. ``forward`` computes on raw arrays and
puts what backward needs in ``self.saved``; ``backward`` returns one gradient
per input (``None`` where an input needs none). ``Op.apply(*inputs, **params)``
runs forward and, when grad mode is on and an input requires grad, links the
node into the graph.

Ops never un-broadcast: the engine sums each gradient down to the shape its
input had (``input_shapes``), in one place.
"""

from __future__ import annotations

import itertools
import sys
import weakref
from types import SimpleNamespace

from .. import _dtype, _inference
from .. import _trace as trace
from .._arg_aliases import NotATensorError
from .._backend import QUIET, quiet_call, quiet_exit, quiet_run, quiet_set, xp
from .._dtype import np_kind
from .._inference import active as _inference_active
from .._meta import is_meta, iterator_layout, meta_results, size_one_strides
from .._meta import made as _meta_made
from .._size import broadcast_mismatch
from .._sparse import SparseCOO, accumulate_sparse
from .._tensor import Tensor, _empty_strides, _fill
from . import lowp, saved_hooks
from .grad_mode import _GradState, _ThreadGradState
from .grad_store import set_first_grad
from .gradient_edge import GradientEdge, get_gradient_edge, increment_version  # noqa: F401 (torch's names)
from .multi_grad_hook import register_multi_grad_hook  # noqa: F401 (torch's name)
from .recorded import RecordedArray, accumulate_recorded, hooked_grad
from .saved_hooks import _stack as _saved_hooks_stack
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks  # noqa: F401 (torch's names)

_RELEASED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

_sequence = itertools.count()
_view_labels: dict = {}  # view op class -> its label in PyTorch's in-place error messages
_next_seq = _sequence.__next__  # (a bound C method: no lookup of the builtin ``next`` per recorded op)
_new_object = object.__new__
_ndarray = xp.ndarray
_ARRAY_OR_SCALAR = (xp.ndarray, xp.generic)


def _refuse_array(cls: type) -> None:
    """PyTorch's TypeError for an op given a NumPy array where its tensor goes (``F.relu(array)``): an op's first
    input is always a tensor (ember's own code passes plain arrays only after it), so a NumPy array there is the
    caller's; PyTorch converts none silently."""
    raise NotATensorError(f"{cls.__qualname__.lower()}(): argument 'input' (position 1) must be Tensor, not "
                          "numpy.ndarray (convert it with ember.from_numpy or ember.as_tensor)")

# The entered forward-mode AD level (forward_ad.py), None when none is: the one check every recorded op pays.
_dual_level = None
# Set once a DTensor exists (ember/distributed/tensor): called with (op class, inputs, params) before each op, it
# returns the DTensor result of an op that has a sharding rule (F.relu(dt), F.linear), None when no input is a
# DTensor, and refuses any other op on a DTensor instead of computing on the local piece alone.
_dtensor_dispatch = None
# While a FlopCounterMode is entered (ember/utils/flop_counter.py): told of each op's inputs and result
# (``forward(node, inputs, out)``) and, by the engine, of each node about to run its backward.
_op_observer = None
# ops/copy_slices.py's refresh_view(view): an out-of-date view's grad_fn made again from its base's history
# (installed when ember.ops loads).
refresh_view = None
# ops/copy_slices.py's take_history(x, result): a tensor changed in place takes the result's place in the graph, a
# view passing it to its base (a custom Function's mark_dirty input; installed when ember.ops loads)
take_history = None


def set_dual_level(level) -> None:
    """Enter (a ``forward_ad`` level) or leave (None) forward-mode AD: ops then propagate their inputs' tangents."""
    global _dual_level
    _dual_level = level


def shape_error(op: str, arrays, err: Exception) -> Exception:
    """PyTorch's RuntimeError for operands of ``op`` that cannot broadcast; otherwise ``err`` unchanged."""
    shapes = [a.shape for a in arrays if hasattr(a, "shape")]
    msg = broadcast_mismatch(shapes) if len(shapes) > 1 else None
    if msg is None:
        return err
    return RuntimeError(f"{msg} (in {op}, operand shapes: {', '.join(str(list(s)) for s in shapes)})")


def short_name(node) -> str:
    """``node.name()`` without PyTorch's ``torch::autograd::`` namespace (AccumulateGrad, CopySlices and
    CopyBackwards carry it in ``name()``), as PyTorch shows a node in its repr and a printed tensor's ``grad_fn``."""
    return node.name().rpartition("::")[2]


def _backward_name(n: str) -> str:
    """PyTorch's name of the node type of ember's class ``n``: ``n`` when it is one already (``SplitBackward0``),
    else ``n`` with ``Backward0`` added (``Conj``, ``Atan2``: ``ConjBackward0``, ``Atan2Backward0``)."""
    return n if n[-1:].isdigit() and n[-9:-1] == "Backward" else f"{n}Backward0"


def forward_op_name(name: str) -> str:
    """A node's name as PyTorch's messages name its forward op (its ``Node::forward_op_name``): without the suffix
    ``Backward`` and the digits after its last occurrence, the number kept unless it is 0 (MulBackward0 -> Mul,
    ProdBackward1 -> Prod1, a custom Function's DoubleBackward -> Double); a name whose last ``Backward`` is
    followed by anything but digits (CopyBackwards), or that has none (CopySlices), is kept whole."""
    op, backward, number = name.rpartition("Backward")
    if not backward or number and not number.isdigit():
        return name
    return op if number in ("", "0") else op + number


def torch_named(name: str):
    """Class decorator: the node's type reads as PyTorch's (``type(y.grad_fn).__name__``, ``repr``, a printed
    tensor's ``grad_fn=<AddBackward0>``); its ``__qualname__`` keeps ember's name, by which ember's own tables
    (DTensor's sharding rules) find it."""
    def rename(cls: type) -> type:
        cls.__name__ = name
        return cls

    return rename


_SHOWN_CLASSES: dict[tuple[type, str], type] = {}
_SHOWN_BASES: dict[type, type] = {}  # a renamed class -> the class it renames


def _static_attribute(cls: type, name: str):
    """``name`` as ``cls`` or a base defines it (not bound, no descriptor run)."""
    for base in cls.__mro__:
        if name in base.__dict__:
            return base.__dict__[name]
    return None


def shown_as(out: Tensor, name: str) -> Tensor:
    """``out``, its node (when recorded) reading as ``name``: an op that PyTorch records as one node
    (``SoftMarginLossBackward0``) and ember composes of several shows PyTorch's name on its last one. The node
    becomes an instance of a subclass of its own class that only renames it (``torch_named``), so its
    gradient, saved tensors and version checks stay as they were."""
    node = out.grad_fn
    if node is not None:
        show_node_as(node, name)
    return out


def show_node_as(node: Node, name: str) -> None:
    """``node`` reading as ``name`` (``shown_as``), set by the node itself where its PyTorch name depends on the
    call (a class loss: NllLossBackward0, or AddBackward0 with label smoothing)."""
    cls = type(node)
    cls = _SHOWN_BASES.get(cls, cls)  # (a node renamed before, rerun under create_graph: its class, not a chain)
    shown = _SHOWN_CLASSES.get((cls, name))
    if shown is None:
        namespace = {"__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__}
        if cls.attributes_shown is not None:  # PyTorch's ``_saved_<name>`` (and such) of the node it reads as
            namespace.update(cls.attributes_shown.get(name, {}))
        shown = torch_named(name)(type(cls.__qualname__, (cls,), namespace))
        _SHOWN_CLASSES[cls, name] = shown
        _SHOWN_BASES[shown] = cls
    node.__class__ = shown


class Node:
    """A recorded op. ``next_edges[i]`` is where input i's gradient goes: (node, output_nr) or None."""

    __slots__ = (
        "saved",
        "next_edges",
        "input_shapes",
        "needs_input_grad",
        "seq",
        "_saved_versions",
        "output_meta",
        "__dict__",
        "__weakref__",
    )

    # The output shares storage (and version counter) with input 0; forward only makes a view (no arithmetic, so
    # no floating-point errors to silence: apply skips NumPy's error state around it).
    is_view = False
    num_outputs = 1
    # Rarely set, so class-level defaults (an instance sets its own in its __dict__): a node is
    # made per recorded op, and every attribute set in __init__ is paid on every op.
    _pre_hooks = None  # {output_nr: [hook]} (register_pre_hook: a tensor's hooks, Tensor.register_hook)
    _node_pre_hooks = None  # [hook(grad_outputs)] (register_prehook: the node's own, after the tensors')
    _post_hooks = None  # [hook(grad_inputs, grad_outputs)] (register_hook)
    _retained = None  # {output_nr: weakref to a tensor that retains its grad}
    _trace = None  # the creation stack, under anomaly detection
    _packed = False  # saved holds what saved-tensor hooks packed (unpack_saved before backward)
    _packed_saved = None  # what the hooks packed, while saved holds its unpacked arrays (repack_saved)
    _kept_after_release = None  # saved, with its tensors FREED, once backward freed it (_kept_after_release)
    _topo = None  # PyTorch's topological_nr, once a backward with inputs given has numbered it (engine.py)
    # The order in which backward passes this node's input gradients on (input positions), where it is not the
    # inputs' own: a fused node standing for several of PyTorch's (``Linear``: addmm(bias, input, weight.t())) passes
    # them in the order PyTorch's nodes do, so that leaves' hooks fire in PyTorch's order. None: the inputs' order.
    send_order: tuple[int, ...] | None = None

    # True for an op whose backward reads forward intermediates that depend on its inputs (not only its
    # inputs and outputs): under create_graph its forward runs again on recorded inputs (recorded.py), so the
    # node keeps its inputs and parameters (``_rerun``).
    rerun_for_higher_order = False
    # the positions of inputs such a rerun does not read as they are at backward (``rerun_inputs``): their
    # versions go unchecked, as PyTorch does not save them (a bias only added, say)
    rerun_unchecked: tuple = ()
    float32_compute = False  # True: half-precision inputs computed in float32, as PyTorch's CPU kernel (lowp.py)
    # True for an elementwise op: output element k depends only on element k of each (broadcast) input, so each
    # input's Jacobian is diagonal and equals its transpose; forward-mode AD then runs backward on the tangent.
    diagonal_jacobian = False
    # True for an elementwise op that lays its result out itself (``where``, whose condition, a parameter, is
    # TensorIterator's first operand); another's result takes its operands' layout as PyTorch's (``iterator_layout``)
    own_layout = False
    # True for an elementwise op of one tensor and a number that is no input (a parameter: ``remainder(x, 2.5)``,
    # ``2.5 - x``), which PyTorch's TensorIterator runs as a binary op with a 0-d operand: its result takes the
    # layout of ``x + 1`` (the number rules out the unary fast setup), not of a unary op's
    number_operand = False
    # True for an op whose forward is linear in each tensor input with the others fixed (matmul, convolution),
    # except the input at ``bias_input`` (None allowed in its place), added to the result: forward-mode AD then
    # applies forward itself to one tangent at a time.
    multilinear = False
    bias_input: int | None = None
    # Positions of inputs the op's result does not depend on (a derivative identically zero, as copysign's sign
    # source): backward gives them zeros, as PyTorch's, and forward-mode AD takes no tangent from them, so a result
    # whose only tangent came from one has none, as PyTorch's forward formula leaves it undefined.
    tangent_free_inputs: tuple[int, ...] = ()
    # True for an op linear in its floating inputs jointly (sums, concatenation, gathers, average pooling):
    # forward-mode AD applies forward to the tangents (zeros for an input without one).
    linear = False
    # True for a node whose outputs are its inputs returned as they are (sharing their storage), as PyTorch's views
    # made in a custom Function: changing one in place while recording is PyTorch's error (ops/indexing.py).
    returns_inputs = False
    # True for a node that runs even when every gradient reaching it is None (as PyTorch's engine runs every node
    # it reaches): the inputs' node of a module with backward hooks, whose hooks then fire (with zeros).
    runs_without_gradient = False
    # True for a view op whose PyTorch name depends on the node (``x[idx]``: Select, Slice, ...), not only its class
    label_varies = False
    half_dtype = None  # the half dtype a float32_compute node rounds its results and gradients to
    # True for a node whose result is an integer or bool tensor (an in-place fill of one from a value requiring
    # grad, ``_refuse_integer_history``): a gradient reaching it is PyTorch's engine's assertion (engine.py)
    integer_output = False
    # Positions in ``saved`` of arrays that are constants of the backward formula (its derivative with respect to
    # them is no term: a piecewise-linear activation's f'): a half-precision node's float32 copy there is no loss
    # under create_graph (recorded.py ``_run_in_half``)
    constant_saved: tuple[int, ...] = ()
    # True for a float32_compute op that PyTorch composes of others, its half-precision input cast to float32 first
    # (rms_norm): its gradient under create_graph ends in that cast's ToCopyBackward0, not the formula's last op
    upcasts_input = False
    # (half dtype, positions) of a float32_compute node's half-precision inputs mixed with float32 ones (a bfloat16
    # batch through float32 normalisation parameters): their gradients are rounded to it, as PyTorch's are
    half_inputs = None
    # True for such a node whose result PyTorch's mixed-dtype kernel returns in the half inputs' dtype (layer_norm,
    # batch_norm, group_norm of a bfloat16 batch with float32 parameters): rounded once, and the gradient arriving
    # in that dtype widened to float32 for the formula, one node as PyTorch's (no cast's ToCopyBackward0 after it)
    narrows_mixed_result = False
    # Which inputs' gradients read each entry of ``saved``: one tuple of input positions per saved entry, or None
    # (every entry is read whichever gradients are computed). As PyTorch (which saves ``other`` for ``self``'s
    # gradient only when ``self`` requires grad), an entry whose readers all need no gradient is not kept: it
    # is neither held (memory) nor version-checked, so changing that tensor in place before backward is fine.
    saved_for: tuple[tuple[int, ...], ...] | None = None
    # {PyTorch node name: {attribute: descriptor}}: the saved-tensor attributes (saved_attributes.py), and such, of
    # a node shown under a name of PyTorch's that varies with the call (``show_node_as``), for each such name
    attributes_shown: dict[str, dict] | None = None
    # Positions in ``saved`` of inputs PyTorch saves as their transpose (linear's weight, saved as ``weight.t()``
    # for its GEMM): its error for one changed in place names that view, of the reversed shape.
    saved_transposed: tuple[int, ...] = ()

    def __init__(self) -> None:  # (``apply`` makes its nodes without calling this: it sets the same field)
        self.saved = ()

    # Subclasses implement these two, next to each other.
    def forward(self, *arrays, **params):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **params) -> Tensor:
        """Run the op on tensors (non-tensor inputs pass through unchanged) and record it."""
        if _dtensor_dispatch is not None and (out := _dtensor_dispatch(cls, inputs, params)) is not None:
            return out
        # Plain loops and lists, not generator expressions: recording is per op, so this is the
        # hot path of every small-tensor program (a generator costs a frame per element). The node is made
        # without a call to __init__ (a Python frame per op): its one field is set here.
        if inputs and inputs[0].__class__ is _ndarray:
            _refuse_array(cls)
        node = _new_object(cls)
        node.saved = ()
        needs = None
        arrays = []
        enabled = _GradState.enabled  # (a thread-local: read once)
        if enabled:
            # The inputs in one pass, inline (a call is a frame): the arrays, whether each needs a gradient, and
            # for each that does its edge (``input_edge``) and shape (None for the others).
            flags = []
            edges = []
            shapes = []
            for t in inputs:
                if isinstance(t, Tensor):
                    a = t._data
                    arrays.append(a)
                    if t._requires_grad:
                        needs = True
                        flags.append(True)
                        # input_edge's common cases inline: a leaf with its AccumulateGrad, a result that is no view
                        fn = t._grad_fn
                        if fn is None:
                            fn = t._grad_accumulator
                            edges.append((fn, 0) if fn is not None and t._base is None else input_edge(t))
                        elif t._base is None:
                            edges.append((fn, t._output_nr))
                        else:
                            edges.append(input_edge(t))
                        shapes.append(a.shape)
                        continue
                else:
                    arrays.append(t)
                flags.append(False)
                edges.append(None)
                shapes.append(None)
            if needs is not None:
                needs = tuple(flags)
        else:
            for t in inputs:
                arrays.append(t._data if isinstance(t, Tensor) else t)
        node.needs_input_grad = needs
        level = _dual_level
        tangents = None if level is None else level.tangents_of(node, inputs)  # (forward_ad.py)
        # inf/nan silently, as PyTorch (not NumPy's global seterr: the user's own); a view computes nothing
        is_view = cls.is_view
        quiet = None if is_view else quiet_set(QUIET)
        half = mixed_low = None
        if cls.float32_compute:
            a = arrays[0] if arrays else None
            # a float32/float64 first input decides it without widen's call (widen would answer None at once)
            if a.__class__ is not _ndarray or a.dtype.itemsize == 2 or a.dtype.kind not in "fc":
                widened = lowp.widen(arrays)
                half = node.half_dtype = widened[0]
                if half is None and widened[1] is not arrays:  # half inputs through float32 parameters
                    node.half_inputs = lowp.half_positions(arrays)
                    if cls.narrows_mixed_result:
                        mixed_low = node.half_inputs[0]
                arrays = widened[1]
        try:
            if params:
                out = node.forward(*arrays, **params)
            elif len(arrays) == 2:  # (the binary operators: a list unpacked into a call makes a tuple, ~0.1 µs)
                out = node.forward(arrays[0], arrays[1])
            else:
                out = node.forward(*arrays)
        except ValueError as err:  # zero cost on success; NumPy's broadcast errors become PyTorch's
            raise shape_error(cls.__qualname__.lower(), arrays, err) from None
        finally:
            if quiet is not None:
                quiet_exit(quiet)
        if _op_observer is not None:
            _op_observer.forward(node, inputs, out)
        if half is not None:
            wide = out
            out = lowp.narrow(out, half)
        elif mixed_low is not None:
            out = lowp.narrow(out, mixed_low)
        if _meta_made[0]:  # (a program that never made a meta tensor does not look for one)
            out = meta_results(arrays, out, cls.diagonal_jacobian)  # (a pointwise op's: its inputs' layout)
        if needs is not None and isinstance(out, _ARRAY_OR_SCALAR) and out.dtype.kind in "biu":
            # (a NumPy scalar too: ``prod()`` of every element of an integer tensor gives one)
            _refuse_integer_history(inputs, out.dtype)
            node.integer_output = True
        if cls.diagonal_jacobian and not cls.own_layout and (
                len(arrays) > 1 or out.__class__ is _ndarray and out.ndim > 1 and (1 in out.shape or not out.size)):
            # two operands' layouts, or one's with a dimension of size 1 or none left (a number operand's empty
            # result takes the tensor's order, as ``x + 1``'s): PyTorch's TensorIterator's, not NumPy's
            out = _relaid_output(node, out, iterator_layout(out, (*arrays, 0) if cls.number_operand else arrays))
        result = _new_object(Tensor)  # (Tensor._make without its call)
        if out.__class__ is _ndarray and not _inference_active[0]:
            # _fill's work inline (its frame is a tenth of a tiny op's cost): keep in step with _tensor._fill
            result._data = out if out.size or not out.ndim or any(out.strides) else _empty_strides(out)
            result._grad = None
            result._grad_fn = node if needs is not None else None
            result._output_nr = 0
            result._vc = [0]
            result._base = None
            result._grad_accumulator = None
            result._hooks = None
            result._post_acc_hooks = None
            result._retains_grad = False
            result._grad_slot = None
            result._requires_grad = needs is not None
        else:
            _fill(result, out, node if needs is not None else None, 0)
        if is_view and inputs[0]._vc.__class__ is not list:
            # a view of an inference tensor (its counter an InferenceCounter) shares its version counter but, as
            # PyTorch's, keeps no view metadata: no _base, nothing for autograd to follow (it never takes a grad)
            result._vc = inputs[0]._vc
            if result._vc.__class__ is not _inference.InferenceCounter:  # (a view of a detached one: refused)
                result._vc = _inference.InferenceCounter((0,))
            # PyTorch records no history for it either: it neither requires grad nor has a grad_fn, even of a
            # parameter made in inference mode (F.linear's weight.t() then passes no gradient to the weight)
            result._grad_fn = None
            result._requires_grad = False
        elif is_view:
            src = inputs[0]
            result._vc = src._vc
            result._base = src._base if src._base is not None else src
            result._view_version = src._vc[0]  # its grad_fn reads the base's history as of this version
            # how it was made, for PyTorch's in-place errors (ops/copy_slices.py); a view of a view inherits it
            if not enabled:
                result._view_creation = _inference.view_creation() if _inference_active[0] else "no_grad"
                # as PyTorch: a view of a tensor that requires grad requires grad too, made under no_grad or not,
                # a leaf without history (``input_edge``: its gradient goes nowhere). PyTorch asks the root base
                # (a view that was made a leaf by requires_grad_() passes nothing on), and asks it again later: a
                # base that comes to require grad (an in-place op, requires_grad_()) tells its views (follow_base)
                watch_view(result)  # (the base's requires_grad_() tells it: base_requires_grad)
                result._requires_grad = result._base._requires_grad
            elif src._base is None or src._view_creation is None:
                result._view_creation = None
                if needs is None:  # (its base needs no gradient now: it may later, through an in-place op)
                    watch_view(result)
            else:
                # (PyTorch's label of the op in its message: SliceBackward0 -> Slice, SqueezeBackward1 -> Squeeze1),
                # worked out once per class: every view of a view in grad mode pays this line
                label = _view_labels.get(cls) if not cls.label_varies else None
                if label is None:
                    label = forward_op_name(node.name())
                    if not cls.label_varies:
                        _view_labels[cls] = label
                result._view_creation = ("of", src._view_creation, label)
                if needs is None:  # (as a view of the base: it needs a gradient once the base does)
                    watch_view(result)
        if tangents is not None:
            level.push(node, arrays, params, tangents, result, needs)
        if needs is not None:
            if result._data is not out and node.saved:
                # NumPy answered a 0-d result with a scalar, which the tensor holds as an array: a saved output
                # must be that array, for create_graph to read it as the output (recorded.py)
                node.saved = tuple(result._data if s is out else s for s in node.saved)
            if node.saved or _ThreadGradState.anomaly:
                node._record(inputs, needs, result, edges, shapes, arrays if half is not None else None)
                if half is not None:
                    node._saved_unrounded(wide, result)
            else:  # _record's whole work for a node that saves nothing (add, views, sums), without its frame
                node.seq = _next_seq()
                node.next_edges = edges
                node.input_shapes = shapes
                node.output_meta = ((result._data.shape, result._data.dtype),)
                node._saved_versions = ()
            if cls.rerun_for_higher_order:
                node.keep_for_rerun(inputs, params)
        return result

    def _link(self, inputs, needs, outputs) -> None:
        """Record this node as the maker of ``outputs`` (a tensor or a list of them) from ``inputs``, of which those
        flagged in ``needs`` need a gradient."""
        edges = []
        shapes = []
        for t, n in zip(inputs, needs):
            if n:
                edges.append(input_edge(t))
                shapes.append(t._data.shape)
            else:
                edges.append(None)
                shapes.append(None)
        self._record(inputs, needs, outputs, edges, shapes)

    def _record(self, inputs, needs, outputs, edges: list, shapes: list, arrays: list | None = None) -> None:
        """``_link`` given each input's edge and shape (None for an input that needs no gradient): the sequence
        number, the edges, and the versions of what backward will read. ``arrays``: what forward received in
        the inputs' place when not their own arrays (float32 copies of half-precision inputs, ``lowp.py``): a
        saved copy stands for its tensor, whose version is checked."""
        self.seq = _next_seq()
        self.next_edges = edges  # lists, not tuples: read-only after recording, and one copy fewer per op
        self.input_shapes = shapes
        self.output_meta = ((outputs._data.shape, outputs._data.dtype),) if outputs.__class__ is Tensor \
            else _output_meta(outputs)
        saved = self.saved
        # an entry with no reader at all (a one-operand einsum's operand) is unread even when every gradient is
        if saved and self.saved_for is not None and (False in needs or () in self.saved_for):
            saved = self.saved = _drop_unread(saved, self.saved_for, needs)
        if saved:
            # Remember the version of every tensor whose storage backward will read, and where the tensor
            # came from: its edge for an input (None when it needs no gradient), its output number for an
            # output. (counter, version, array, source): no reference to the tensor itself, so an output
            # that saves itself does not form a tensor -> node -> tensor cycle; the source is what
            # create_graph needs to give the formula that array as a tensor of the graph (recorded.py).
            # (a position in saved: hooks may pack the array). Plain loops and identity tests, no comprehensions,
            # dict or id(): every recorded op that saves a tensor runs this, on a few entries.
            # Inputs sharing one array (x * x, x.detach() * x) each get their own entry: an input saved at its
            # own position in ``saved`` (forward saves its inputs in order) takes that one, any other the first
            # match no other input took; so each entry is differentiated through the input it is (create_graph,
            # recorded.py), also when saved-tensor hooks pack the entries apart.
            entries = []
            n = len(saved)
            i = 0
            taken = None
            for t in inputs:
                if isinstance(t, Tensor):
                    a = t._data if arrays is None else arrays[i]  # (a float32 copy stands for its tensor)
                    if i < n and saved[i] is a:
                        entries.append((t._vc, t._vc[0], t._data, (edges[i], i)))
                    else:
                        if taken is None:
                            taken = _own_positions(inputs, saved, arrays)
                        k = 0
                        for s in saved:
                            if s is a and k not in taken:
                                entries.append((t._vc, t._vc[0], t._data, (edges[i], k)))
                                taken.add(k)
                                break
                            k += 1
                i += 1
            for t in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
                a = t._data
                k = 0
                for s in saved:
                    if s is a:
                        entries.append((t._vc, t._vc[0], a, (t._output_nr, k)))
                        break
                    k += 1
            self._saved_versions = tuple(entries)
            for e in entries:  # an inference tensor's counter is no plain list (ember/_inference.py)
                if e[0].__class__ is not list:
                    raise RuntimeError(_inference.SAVED_FOR_BACKWARD)
            if _saved_hooks_stack.hooks:  # (saved_hooks.stack_in_use() without its frame)
                self._pack_saved(inputs)
        else:
            self._saved_versions = ()
        if _ThreadGradState.anomaly:  # (process-wide, on the class: read there, not through the thread's state)
            from .anomaly import record_creation

            record_creation(self)

    def output_metadata(self, output_nr: int) -> tuple | None:
        """The (shape, dtype) of this node's output ``output_nr`` when it was made (PyTorch's input metadata of
        a node, which ``autograd.grad`` reads to make a scalar output's gradient from its ``GradientEdge``), or
        None where it was not recorded. Kept without the output itself, which may be gone by then: ``output_meta``
        holds each output's (shape, dtype) by output number, or, for a node of one output with its inputs' shape
        (an elementwise op of ``apply_same``/``apply_one``, which then record nothing more per op), that output's
        dtype alone, its shape the first recorded input's (``input_shapes``)."""
        meta = getattr(self, "output_meta", None)
        if meta is None:
            return None
        if isinstance(meta, xp.dtype):  # one output of its inputs' shape (the elementwise fast paths record so)
            if output_nr:
                return None
            return next(s for s in self.input_shapes if s is not None), meta
        return meta[output_nr] if output_nr < len(meta) else None

    def _saved_unrounded(self, wide, result: Tensor) -> None:
        """A half-precision op computed in float32 (lowp.py) that saved its float32 result ``wide`` before it was
        rounded to ``result``: that entry stands for ``result``, as PyTorch saves the result itself, so changing
        it in place before backward is its error, and create_graph differentiates through it (recorded.py)."""
        if self._packed or wide is result._data:
            return
        for k, s in enumerate(self.saved):
            if s is wide:
                self._saved_versions += ((result._vc, result._vc[0], result._data, (0, k)),)
                return

    def _pack_saved(self, inputs) -> None:
        """Hand the saved arrays to the active saved-tensor hooks (autograd/saved_hooks.py); the version checks
        keep the arrays' dtype and shape, not the arrays, so that a pack hook may let them go. A saved input is
        handed over as the input tensor itself, as PyTorch's pack hook gets it: in its own dtype also where
        forward saved a float32 copy of a half-precision input (lowp.py), which unpacking widens again."""
        hooks = saved_hooks.active()
        if hooks is None:
            return
        given = {}
        for _c, _v, array, (source, k) in self._saved_versions:
            if k is not None and source.__class__ is not int:
                for t in inputs:
                    if isinstance(t, Tensor) and t._data is array:
                        given[k] = t
                        break
        self.saved = saved_hooks.pack_saved(self.saved, hooks, Unread, saved_hooks.pack_order(type(self)),
                                            self.saved_transposed, given)
        self._saved_versions = tuple((c, v, SimpleNamespace(dtype=a.dtype, shape=a.shape), source)
                                     for c, v, a, source in self._saved_versions)
        self._packed = True

    def unpack_saved(self) -> None:
        """Before backward: the saved arrays back from the saved-tensor hooks' unpack, what they packed kept
        (``repack_saved``)."""
        if self.saved is None:
            raise RuntimeError(_RELEASED_MSG)
        self._packed_saved = self.saved
        self.saved = saved_hooks.unpack_saved(self.saved)
        self._packed = False

    def repack_saved(self) -> None:
        """After a backward that retained the graph: what the hooks packed back in the unpacked arrays' place, so
        that the next backward (or a ``_saved_<name>`` read) calls the unpack hook again, as PyTorch's engine unpacks
        a saved tensor at each use, not once (an unpack hook that loads from elsewhere runs each time)."""
        self.saved = self._packed_saved
        self._packed_saved = None
        self._packed = True

    def __dir__(self):
        """As PyTorch's: the ``_saved_<name>`` attributes are what the node saved (``saved_attributes.py``), so
        ember's own bookkeeping by that prefix is left out (programs list a node's saved tensors by it), and so is
        a name the node's class marks as not saved by the form it reads as (``absent``: EluBackward1's
        ``_saved_self``, which PyTorch's node lacks)."""
        cls = type(self)
        return [n for n in super().__dir__() if n not in ("_saved_versions", "_saved_unrounded")
                and not getattr(_static_attribute(cls, n), "absent", False)]

    # ----------------------------------------------------------------- engine helpers
    def name(self) -> str:
        """PyTorch's name of the node: the class's own when it is one (``SplitBackward0``), else the class name
        with ``Backward0`` added."""
        return _backward_name(type(self).__name__)

    @property
    def metadata(self) -> dict:
        """A dict for the caller's own data about this node, kept with it, as PyTorch's ``Node.metadata`` (made
        on first use: a node per recorded op pays nothing for it)."""
        found = self.__dict__.get("_metadata")
        if found is None:
            found = self.__dict__["_metadata"] = {}
        return found

    def __init_subclass__(cls, **kwargs) -> None:
        # the type reads as name() does, as PyTorch's node types do (type(y.grad_fn).__name__ 'ConjBackward0', not
        # ember's class name 'Conj'); a class that names itself otherwise (name(), torch_named) keeps its own, and
        # __qualname__ keeps ember's name, as torch_named's
        super().__init_subclass__(**kwargs)
        if cls.name is Node.name:
            cls.__name__ = _backward_name(cls.__name__)

    def __repr__(self) -> str:
        return f"<{short_name(self)} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def check_saved_versions(self) -> None:
        if self.saved is None:
            raise RuntimeError(_RELEASED_MSG)
        for counter, version, array, source in self._saved_versions:
            if counter[0] != version:
                raise RuntimeError(_modified_message(self, array, source, counter, version))

    def check_versions_of(self, *tensors) -> None:
        """Check at backward, as if saved, the versions of ``tensors`` (None entries skipped): arguments the
        formula reads that reached forward as parameters or derived arrays (an index, a class weight, a mask),
        which PyTorch saves for backward, so that changing one in place before backward is its error instead of
        a gradient computed from the new values. (Entries with no position in ``saved``: not handed to the
        formula as tensors under create_graph, where they carry no gradient.)"""
        if self._packed or _saved_hooks_stack.hooks:  # saved through saved-tensor hooks: PyTorch checks none there
            return
        entries = self._saved_versions
        for t in tensors:  # (a plain loop: a comprehension costs a frame, on every recorded gather or loss)
            if t is not None:
                if t._vc.__class__ is not list:
                    raise RuntimeError(_inference.SAVED_FOR_BACKWARD)
                entries += ((t._vc, t._vc[0], t._data, (None, None)),)
        self._saved_versions = entries

    def forget_versions_of(self, t: Tensor) -> None:
        """Drop the version checks of ``t`` (its version counter's entries): ``t`` was changed in place by the op
        itself (an activation with ``inplace=True`` writes its result into its input)."""
        counter = t._vc
        self._saved_versions = tuple(e for e in self._saved_versions if e[0] is not counter)

    def output_written_to(self, result: Tensor, x: Tensor) -> None:
        """This node's output ``result`` was written into ``x`` by an in-place op (``ops/inplace.py``): as
        PyTorch saves an in-place op's output as ``x`` itself, a saved ``result`` is checked at ``x``'s version
        from now on, so that changing ``x`` in place again before backward is PyTorch's error."""
        old = result._vc
        if old is x._vc:
            return
        entries = self._saved_versions
        for k, e in enumerate(entries):
            if e[0] is old:
                entries = entries[:k] + ((x._vc, x._vc[0], e[2], e[3]),) + entries[k + 1:]
        self._saved_versions = entries

    def keep_for_rerun(self, inputs, params: dict) -> None:
        """What a ``rerun_for_higher_order`` node's forward runs on again under create_graph: its inputs (with
        their versions now, so that an in-place change before the rerun is the usual error, not silently new
        values) and its parameters."""
        skip = self.rerun_unchecked
        versions = [(t._vc, t._vc[0]) for i, t in enumerate(inputs) if isinstance(t, Tensor) and i not in skip]
        self._rerun = (inputs, params, versions)

    def rerun_inputs(self) -> list:
        """The arguments a ``rerun_for_higher_order`` node's forward runs on again under create_graph: its tensor
        inputs as recorded arrays of the graph, the rest as they were."""
        from .recorded import RecordedArray

        return [RecordedArray(t) if isinstance(t, Tensor) else t for t in self._rerun[0]]

    def check_rerun_versions(self) -> None:
        for counter, version in self._rerun[2]:
            if counter[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: an input of {self.name()} (whose forward runs again under create_graph) is at "
                    f"version {counter[0]}; expected version {version} instead. Hint: clone the tensor before "
                    "changing it in place."
                )

    def release(self) -> None:
        """Free saved arrays after backward (unless retain_graph). A node that saved no array but checks the
        versions of tensors its formula reads as parameters (``check_versions_of``: an index, a class weight,
        which PyTorch saves) is freed too: a second backward through it is PyTorch's error."""
        saved = self.saved
        if saved or self._saved_versions:
            if saved:
                for entry in saved:
                    if entry.__class__ is not xp.ndarray:  # (the usual node saves arrays only: nothing to keep)
                        self._kept_after_release = _kept_after_release(saved)
                        break
            self.saved = None
            self._saved_versions = ()
            if self._packed_saved is not None:
                self._packed_saved = None
            if self.rerun_for_higher_order:
                self._rerun = None

    def register_pre_hook(self, output_nr: int, hook):
        from ..utils.hooks import RemovableHandle

        if self._pre_hooks is None:
            self._pre_hooks = {}
        return RemovableHandle(self._pre_hooks.setdefault(output_nr, []), hook)

    def register_prehook(self, fn):
        """Call ``fn(grad_outputs)`` before this node's backward runs (a tuple: one gradient per output, None where
        there is none), after the hooks of the tensors it made (``Tensor.register_hook``) and their retained
        gradients; a returned tuple (or list) of as many replaces ``grad_outputs``, None keeps them. As PyTorch's
        ``Node.register_prehook``: the hooks run in the order registered, each given the previous one's result;
        ``autograd.grad`` captures an input's gradient before them (and a leaf's accumulator does not run there).
        Returns a handle whose ``remove()`` unregisters ``fn``."""
        from ..utils.hooks import RemovableHandle

        if self._node_pre_hooks is None:
            self._node_pre_hooks = []
        return RemovableHandle(self._node_pre_hooks, fn)

    def register_hook(self, fn):
        """Call ``fn(grad_inputs, grad_outputs)`` after this node's backward (one gradient per input and per
        output, None where there is none); a returned tuple replaces ``grad_inputs``. As PyTorch's
        ``Node.register_hook``."""
        from ..utils.hooks import RemovableHandle

        if self._post_hooks is None:
            self._post_hooks = []
        return RemovableHandle(self._post_hooks, fn)

    def retain_grad_of(self, tensor: Tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[tensor._output_nr] = weakref.ref(tensor)


def version_checked(out: Tensor, *tensors, reader: int | None = None) -> Tensor:
    """``out``, whose node (when recorded) checks the versions of ``tensors`` at backward as if saved
    (``Node.check_versions_of``): an op's arguments that reach its formula as parameters or derived arrays.
    ``reader``: only when the gradient of input ``reader`` is computed (the one formula that reads them), as
    PyTorch saves them only then."""
    node = out.grad_fn
    if node is not None and (reader is None or node.needs_input_grad[reader]):
        node.check_versions_of(*tensors)
    return out


def add_to_grad(t: Tensor, grad) -> None:
    """``t.grad += grad``: how backward writes every gradient (a leaf's, a retained one, ``inputs=``).

    The first gradient is copied (the incoming array may be shared with other consumers of the same
    gradient): into ``t``'s slot of its gradient store when it has one (autograd/grad_store.py), else
    into a new array; later ones add in place and bump the gradient's version.
    """
    current = t._grad
    accumulate = _ACCUMULATE_BY_KIND.get(type(grad))
    if accumulate is not None:
        accumulate(t, grad)
    elif current is None:
        set_first_grad(t, grad)
    elif current.is_sparse:  # a dense gradient into a sparse .grad: a new dense .grad, as PyTorch
        t._grad = Tensor._make(grad + current._data)
    else:
        current._data += grad
        current._bump_version()


# Gradients that are not plain arrays accumulate by their own kind's rule, found by type: a recorded gradient
# under create_graph (recorded.py), a sparse COO gradient of Embedding(sparse=True) (ember/_sparse.py).
_ACCUMULATE_BY_KIND = {RecordedArray: accumulate_recorded, SparseCOO: accumulate_sparse}


def leaf_slot_to_fill(node: Node, i: int):
    """The array ``node.backward`` may build input ``i``'s whole gradient in and return, so that it becomes the
    leaf's ``.grad`` without a copy: the leaf's free slot in its gradient store (``GradStore.slot_to_fill``),
    when the gradient goes straight to the leaf's accumulator (no node pre-hooks, no tensor hooks that could
    keep it) and the leaf has no ``.grad`` yet. Else None: the backward makes its own array.
    """
    edge = node.next_edges[i]
    if edge is None or _GradState.higher_order:  # (create_graph: gradients are recorded tensors, not arrays)
        return None
    acc = edge[0]
    if type(acc) is not AccumulateGrad or acc._pre_hooks or acc._node_pre_hooks:
        return None
    var = acc.variable
    if var is None or var._grad is not None or var._grad_slot is None or hooks_may_keep(var):
        return None
    store = var._grad_slot[0]
    index = store.slot_of(var)
    return store.slot_to_fill(index) if index is not None else None


def hooks_may_keep(var: Tensor) -> bool:
    """Whether a tensor hook of ``var`` may keep the gradient it is given: any but those marked ``reads_only``
    (a hook object whose class says it only reads, as the training-loop diagnostics' does)."""
    hooks = var._hooks  # None until a hook is registered
    return hooks is not None and any(not getattr(hook, "reads_only", False) for hook in hooks)


def _output_meta(outputs) -> tuple:
    """(shape, dtype) of each output by its output number (None for a number no output took): a tensor, or a
    list of them."""
    if isinstance(outputs, Tensor):
        return ((outputs._data.shape, outputs._data.dtype),)
    meta = [None] * (max((t._output_nr for t in outputs), default=-1) + 1)
    for t in outputs:
        meta[t._output_nr] = (t._data.shape, t._data.dtype)
    return tuple(meta)


def _refuse_integer_history(inputs: tuple, dtype) -> None:
    """PyTorch's refusal to give an integer or bool result a history: an integer tensor that requires grad (one
    filled in place from a value that does: ``masked_fill_``, ``index_fill_``, ``fill_``) is refused by every op
    that would record such a result of it out of place (``y + 1``, ``y.sum()``, ``y[0]``), while in-place ops on it
    record (their input is the op's snapshot of it, ``ops.inplace._snapshot``)."""
    for t in inputs:
        if (isinstance(t, Tensor) and t._requires_grad and t._data.dtype.kind in "biu"
                and not t.__dict__.get("_in_place_input")):
            raise RuntimeError(f"Autograd not support dtype: {_dtype.SCALAR_TYPE_NAMES[dtype.name]}")


class MultiOutputNode(Node):
    """A node with several outputs: ``forward`` returns a tuple of arrays (None for an output not produced),
    ``backward(*grads)`` gets one gradient per output (None for an output that received none)."""

    @classmethod
    def apply(cls, *inputs, **params) -> tuple:
        """Node.apply for several outputs: a tuple of tensors (None where forward returned None). Floating and
        complex outputs carry the node; integer ones (pivots, indices) carry no gradient."""
        if _dtensor_dispatch is not None and (out := _dtensor_dispatch(cls, inputs, params)) is not None:
            return out
        if inputs and inputs[0].__class__ is _ndarray:
            _refuse_array(cls)
        node = cls()
        needs = None
        if _GradState.enabled:
            needs = tuple(isinstance(t, Tensor) and t._requires_grad for t in inputs)
            if True not in needs:
                needs = None
        node.needs_input_grad = needs
        level = _dual_level
        tangents = None if level is None else level.tangents_of(node, inputs)  # (forward_ad.py)
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
        if cls.float32_compute:
            node.half_dtype, arrays = lowp.widen(arrays)
        quiet = quiet_set(QUIET)  # inf/nan silently, as PyTorch (and as Node.apply)
        try:
            outs = node.forward(*arrays, **params)
        finally:
            quiet_exit(quiet)
        if node.half_dtype is not None:
            outs = lowp.narrow(outs, node.half_dtype)
        if _meta_made[0]:
            outs = meta_results(arrays, tuple(outs))
        node.num_outputs = len(outs)
        grad_fn = node if needs is not None else None
        results = tuple(None if a is None else Tensor._make(a, grad_fn if np_kind(a.dtype) in "fc" else None, nr)
                        for nr, a in enumerate(outs))
        if tangents is not None:
            level.push(node, arrays, params, tangents, results, needs)
        if needs is not None:
            node._link(inputs, needs, [r for r in results if r is not None])
            if cls.rerun_for_higher_order:
                node.keep_for_rerun(inputs, params)
        return results


class _Watched:
    """The views made in grad mode of a base that needed no gradient (weak references), kept with the version
    counter they share with it (``Tensor._vc[1]``): when the base first needs one (an in-place op through it or any
    of its views), they need one too (``ops/copy_slices.py``: ``follow_base``). ``written``: the array of the tensor
    an in-place op last gave a new history (a weak reference) and the name of that history's node, which the error
    for a saved input changed in place names, as PyTorch's names the tensor's ``grad_fn`` now (``note_written``)."""

    __slots__ = ("refs", "limit", "written")

    def __init__(self) -> None:
        self.refs: list = []
        self.limit = 32
        self.written = None


def note_written(t: Tensor, grad_fn) -> None:
    """``t`` took ``grad_fn`` as its history after an in-place op (``copy_slices.set_history``): kept with its
    version counter, for ``_modified_message``."""
    vc = t._vc
    if vc.__class__ is not list or grad_fn is None or t._data.__class__ is not xp.ndarray:
        return
    if len(vc) == 1:
        vc.append(_Watched())
    # (weakly the array and the node's name only: the node may die with the tensor, which PyTorch's saved variable
    # would keep, and holding it from the counter would make a cycle through the nodes that saved the tensor)
    vc[1].written = (weakref.ref(t._data), grad_fn.name())


def watch_view(view: Tensor) -> None:
    """Note ``view`` (made in grad mode, of a base that needs no gradient) with its base's version counter."""
    if view._data.dtype.kind not in "fc":  # (an integer base never takes a gradient)
        return
    vc = view._vc
    if len(vc) == 1:
        vc.append(_Watched())
    watched = vc[1]
    refs = watched.refs
    refs.append(weakref.ref(view))
    if len(refs) > watched.limit:  # drop the dead ones, so a long-lived base sliced every step does not grow
        refs[:] = [r for r in refs if r() is not None]
        watched.limit = max(32, 2 * len(refs))


_F32 = xp.dtype(xp.float32)
_F64 = xp.dtype(xp.float64)
_BOTH_NEED = (True, True)  # (one tuple for every node of two inputs that both need a gradient: it is immutable)


def apply_same(cls: type, compute, a: Tensor, b: Tensor, saves: bool = False) -> Tensor | None:
    """``cls.apply(a, b)`` for the common case of a binary elementwise op, or None, calling nothing, where ``apply``
    must run: two plain ``Tensor``s (no subclass) over NumPy arrays of one shape with dimensions and elements and
    one dtype, float32 or float64 (not non-native byte order), and none of forward AD, meta tensors, inference
    mode, anomaly mode or saved-tensor hooks. ``compute(da, db)`` is the node's forward on the arrays (a NumPy
    operator: the same call, so the same bits); ``saves``: the node saves both arrays (``self.saved = (a, b)``).
    The result, its node, edges, shapes and saved versions are ``apply``'s: without the inputs' loop, the flags
    list, the half-precision and view tests, and a node at all where nothing records (``no_grad``, or inputs that
    need no gradient). ``x + y`` on small tensors is mostly this machinery, not the arithmetic."""
    da = a._data
    db = b._data
    dt = da.dtype
    shape = da.shape  # (read once: each read of an array's shape builds a new tuple; the node keeps this one)
    if (dt is not db.dtype or dt is not _F32 and dt is not _F64 or da.__class__ is not _ndarray
            or db.__class__ is not _ndarray or not shape or shape != db.shape or not da.size
            or _dual_level is not None or _inference_active[0] or _meta_made[0] and (is_meta(da) or is_meta(db))):
        return None  # (meta arrays: apply's meta results; others keep this path once a meta tensor exists)
    ra = a._requires_grad
    rb = b._requires_grad
    record = (ra or rb) and _GradState.enabled
    if record:
        if _ThreadGradState.anomaly or saves and _saved_hooks_stack.hooks:
            return None
        node = _new_object(cls)
        # each input's edge as apply's loop finds it (its common cases inline, input_edge for the others)
        if ra:
            fn = a._grad_fn
            if fn is None:
                fn = a._grad_accumulator
                ea = (fn, 0) if fn is not None and a._base is None else input_edge(a)
            elif a._base is None:
                ea = (fn, a._output_nr)
            else:
                ea = input_edge(a)
        else:
            ea = None
        if rb:
            fn = b._grad_fn
            if fn is None:
                fn = b._grad_accumulator
                eb = (fn, 0) if fn is not None and b._base is None else input_edge(b)
            elif b._base is None:
                eb = (fn, b._output_nr)
            else:
                eb = input_edge(b)
        else:
            eb = None
    try:  # inf/nan silently, as apply: in NumPy's error-state context of its own (``quiet_run``)
        out = quiet_run(compute, da, db)
    except RuntimeError:  # (that context was entered already, by another thread or a finalizer run inside it)
        out = quiet_call(compute, da, db)
    if not da.flags.c_contiguous:  # (a row-major first operand gives PyTorch a row-major result, as NumPy)
        out = iterator_layout(out, (da, db))
    result = _new_object(Tensor)  # (apply's fields: keep in step with _tensor._fill)
    result._data = out
    result._grad = None
    result._output_nr = 0
    result._vc = [0]
    result._base = None
    result._grad_accumulator = None
    result._hooks = None
    result._post_acc_hooks = None
    result._retains_grad = False
    result._grad_slot = None
    if not record:
        result._grad_fn = None
        result._requires_grad = False
        return result
    result._grad_fn = node
    result._requires_grad = True
    node.output_meta = dt  # (the output's dtype alone: its shape is the inputs', ``output_metadata``)
    if ra and rb:
        needs = node.needs_input_grad = _BOTH_NEED
        shapes = [shape, shape]
    else:
        needs = node.needs_input_grad = (True if ra else False, True if rb else False)
        shapes = [shape if ra else None, shape if rb else None]
    edges = [ea, eb]
    if saves:
        node.saved = (da, db)
        if ra and rb and da is not db and a._vc.__class__ is list and b._vc.__class__ is list:
            # _record's entries for two inputs saved at their own positions, both read
            node.seq = _next_seq()
            node.next_edges = edges
            node.input_shapes = shapes
            node._saved_versions = ((a._vc, a._vc[0], da, (ea, 0)), (b._vc, b._vc[0], db, (eb, 1)))
        else:
            node._record((a, b), needs, result, edges, shapes, None)
    else:
        node.saved = ()
        node.seq = _next_seq()
        node.next_edges = edges
        node.input_shapes = shapes
        node._saved_versions = ()
    return result


def _relaid_output(node: Node, out, laid):
    """``laid``, the op's result ``out`` in PyTorch's layout, also where forward saved ``out`` for backward (so that
    its version is the result's)."""
    if laid is not out and node.saved:
        node.saved = tuple(laid if s is out else s for s in node.saved)
    return laid


def apply_one(cls: type, x, *args) -> Tensor | None:
    """``cls.apply(x, *args)`` for a one-input op that is no view (``args``: its forward's other arguments, passed
    positionally: a sum's axes and keepdim) on a plain ``Tensor`` over a NumPy array with dimensions and elements,
    float32 or float64, outside forward AD, meta tensors and inference mode; None, calling nothing, otherwise (any
    other ``x``: ``apply``'s checks and errors). The node's own forward computes (the same bits); the result, edge,
    shape and saved versions are ``apply``'s (``_record`` where forward saved more than its output, or under anomaly
    mode), without the inputs' loop, the flags list, the keyword parameters and the half-precision and view tests."""
    if x.__class__ is not Tensor:
        return None
    da = x._data
    dt = da.dtype
    if (dt is not _F32 and dt is not _F64 or da.__class__ is not _ndarray or not da.ndim or not da.size
            or _dual_level is not None or _inference_active[0] or _meta_made[0] and is_meta(da)):
        return None
    node = _new_object(cls)
    node.saved = ()
    record = x._requires_grad and _GradState.enabled
    if record:  # its edge as apply's loop finds it
        fn = x._grad_fn
        if fn is None:
            fn = x._grad_accumulator
            edge = (fn, 0) if fn is not None and x._base is None else input_edge(x)
        elif x._base is None:
            edge = (fn, x._output_nr)
        else:
            edge = input_edge(x)
    quiet = quiet_set(QUIET)
    try:
        out = node.forward(da, *args)
    finally:
        quiet_exit(quiet)
    elementwise = cls.diagonal_jacobian
    if out.__class__ is not _ndarray:  # (a full sum before NumPy 2.3: a scalar, which the tensor holds as an array)
        scalar = out
        out = xp.array(out)
        if node.saved:  # (as apply's: a saved output is the tensor's array)
            node.saved = tuple(out if s is scalar else s for s in node.saved)
    elif elementwise and out.ndim > 1 and 1 in out.shape and not da.flags.c_contiguous:
        out = _relaid_output(node, out, size_one_strides(out, (da,)))  # (PyTorch's strides for a size-1 dimension)
    result = _new_object(Tensor)  # (apply's fields: keep in step with _tensor._fill)
    result._data = out
    result._grad = None
    result._output_nr = 0
    result._vc = [0]
    result._base = None
    result._grad_accumulator = None
    result._hooks = None
    result._post_acc_hooks = None
    result._retains_grad = False
    result._grad_slot = None
    if not record:
        node.needs_input_grad = None
        result._grad_fn = None
        result._requires_grad = False
        return result
    result._grad_fn = node
    result._requires_grad = True
    # an elementwise op's output has its input's shape and dtype: the dtype alone (``output_metadata``)
    node.output_meta = dt if elementwise else ((out.shape, out.dtype),)
    node.needs_input_grad = needs = (True,)
    saved = node.saved
    if saved and (saved.__class__ is not tuple or len(saved) != 1 or saved[0] is not out or cls.saved_for is not None
                  or _saved_hooks_stack.hooks) or _ThreadGradState.anomaly:
        node._record((x,), needs, result, [edge], [da.shape], None)
    else:  # _record's work for a node that saves nothing, or its output alone (tanh, exp, relu, sigmoid)
        node.seq = _next_seq()
        node.next_edges = [edge]
        node.input_shapes = [da.shape]
        node._saved_versions = ((result._vc, 0, out, (0, 0)),) if saved else ()
    return result


def node_at(cls: type, edge: tuple, array) -> Node:
    """A node of ``cls`` (a one-input elementwise op that saves nothing: a clone) recorded as if applied to the
    tensor at ``edge`` (its input's place in the graph) whose value ``array`` is its output, without running its
    forward: the fields ``apply_one`` sets. For a copy made already that stands in the graph as that op's output
    (an in-place op's saved ``self.clone()``, ``inplace._saved_as_clone``)."""
    node = _new_object(cls)
    node.saved = ()
    node.seq = _next_seq()
    node.next_edges = [edge]
    node.input_shapes = [array.shape]
    node.output_meta = array.dtype  # (an elementwise op's output: its input's shape, ``output_metadata``)
    node.needs_input_grad = (True,)
    node._saved_versions = ()
    if _ThreadGradState.anomaly:  # (as apply's: where it was made, for anomaly mode's trace)
        from .anomaly import record_creation

        record_creation(node)
    return node


def records_nothing(*tensors: Tensor) -> bool:
    """Whether ``Node.apply`` on ``tensors`` (the op's tensor inputs: plain ``Tensor``s or parameters over NumPy
    arrays) records nothing and does nothing to its forward's array but wrap it as a new tensor: grad mode off or no
    input requiring grad, and none of a DTensor's dispatch, forward AD, meta tensors, inference mode or a
    FlopCounterMode's observer. An op whose forward is a kernel call then calls it without the node (LayerNorm
    under ``no_grad``: the node, its inputs' loop and its forward's tests are half of a small LayerNorm's cost)."""
    if (_dual_level is not None or _inference_active[0] or _dtensor_dispatch is not None or _op_observer is not None
            or _meta_made[0] and any(is_meta(t._data) for t in tensors)):
        return False
    if _GradState.enabled:
        for t in tensors:
            if t._requires_grad:
                return False
    return True


def unrecorded_view(src: Tensor, make, arg, cls: type) -> Tensor | None:
    """``src``'s view over the array ``make(arg)`` (a NumPy view of ``src._data``: its ``reshape``, ``transpose``
    or a slicing ``__getitem__``; ``cls``: the view node ``apply`` would run), made as ``Node.apply`` makes that
    node's result where it records nothing: under ``no_grad``, or in grad mode of a tensor that needs no gradient.
    The same fields, without the node, the inputs' loop and the call of the node's forward (attention's head split
    and merge, 9-12 views per layer, pay these). None, calling nothing, where ``apply`` does more: a gradient to
    record, a tensor subclass (a DTensor, a Parameter), forward AD, a meta tensor, or a view of a view in grad mode
    whose label ``apply`` has not worked out yet."""
    enabled = _GradState.enabled
    if (enabled and src._requires_grad or src.__class__ is not Tensor or _dual_level is not None
            or _meta_made[0] and is_meta(src._data)):  # (a meta tensor's view records PyTorch's strides: apply)
        return None
    base = src._base
    label = None
    if enabled and base is not None and src._view_creation is not None:  # (apply's label, once worked out there)
        label = _view_labels.get(cls) if not cls.label_varies else None
        if label is None:
            return None
    result = _new_object(Tensor)
    out = make(arg)
    if out.__class__ is _ndarray and (out.size or not out.ndim):
        # _fill's fields inline, as apply_same's (its frame, and a version counter replaced at once below, are a
        # tenth of a view's cost: attention's head split and merge make 22 per GPT forward): keep in step with it
        result._data = out
        result._grad = None
        result._grad_fn = None
        result._output_nr = 0
        result._grad_accumulator = None
        result._hooks = None
        result._post_acc_hooks = None
        result._retains_grad = False
        result._grad_slot = None
        result._requires_grad = False
    else:  # (an empty array's strides, a scalar: _fill's own cases)
        _fill(result, out, None, 0)
    result._vc = src._vc
    if src._vc.__class__ is not list:  # an inference tensor's view: no view metadata (apply's comment)
        result._base = None
        if src._vc.__class__ is not _inference.InferenceCounter:  # (a view of a detached one: refused, as apply's)
            result._vc = _inference.InferenceCounter((0,))
        return result
    result._base = root = base if base is not None else src
    result._view_version = src._vc[0]
    if not enabled:  # as apply's: a no_grad view requires grad as its root does, and follows it (watch_view)
        result._view_creation = _inference.view_creation() if _inference_active[0] else "no_grad"
        watch_view(result)
        result._requires_grad = root._requires_grad
    elif label is None:
        result._view_creation = None
        watch_view(result)  # (its base needs no gradient now: it may later, through an in-place op)
    else:
        result._view_creation = ("of", src._view_creation, label)
        watch_view(result)  # (as a view of the base: it needs a gradient once the base does)
    return result


def _drop_unread(saved: tuple, readers: tuple, needs: tuple) -> tuple:
    """``saved`` with each array that no gradient to be computed reads swapped for a stand-in of its shape and
    dtype (a formula may still ask an unread operand's ``ndim`` or ``shape``) that holds one element: NaN for
    floating dtypes, so a formula that wrongly read the values would give a visibly wrong gradient."""
    # Plain loops, no generators: this runs on every recorded Mul/MatMul/Linear with a constant operand.
    dropped = []
    for k, r in enumerate(readers):
        for i in r:
            if needs[i]:
                break
        else:
            dropped.append(k)
    if not dropped:
        return saved
    out = list(saved)
    for k in dropped:
        a = saved[k]
        # (also where another entry holds the same array for a needed gradient, ``x * x.detach()``: PyTorch saves
        # per operand, so the unread one's ``_saved_<name>`` is None there too)
        if isinstance(a, xp.ndarray):
            out[k] = _stand_in(a.shape, a.dtype, a.strides)
    return tuple(out)


_STAND_INS: dict = {}


def _stand_in(shape: tuple, dtype, strides: tuple):
    """A read-only array of ``shape`` and ``dtype`` over one element (all strides 0), NaN where the dtype has
    it, else 0, remembering the dropped array's ``strides`` (``held_strides``: PyTorch's matrix products keep an
    operand's layout for a gradient that does not read its values); shared by every node that drops an entry of
    that shape, dtype and layout (a step's shapes repeat)."""
    key = (shape, dtype, strides)
    arr = _STAND_INS.get(key)
    if arr is None:
        if len(_STAND_INS) >= 512:  # many distinct shapes (varying lengths): start over, not grow without bound
            _STAND_INS.clear()
        fill = xp.full(1, xp.nan if dtype.kind in "fc" else 0, dtype=dtype)
        arr = _STAND_INS[key] = Unread(shape, dtype, buffer=fill, strides=(0,) * len(shape))
        arr.held_strides = strides
        arr.flags.writeable = False
    return arr


def _own_positions(inputs, saved, arrays) -> set:
    """The positions in ``saved`` that hold an input's array at the input's own position (Node._record)."""
    taken = set()
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and i < len(saved) and saved[i] is (t._data if arrays is None else arrays[i]):
            taken.add(i)
    return taken


# What backward frees of a node's saved entries (with the tensors saved-tensor hooks packed): the rest (numbers,
# shapes, the stand-ins of entries never saved) stays readable as PyTorch's ``_saved_<name>`` after backward.
_FREED_KINDS = (xp.ndarray, Tensor, RecordedArray, SparseCOO, saved_hooks._Packed)
FREED = object()  # an entry of ``Node._kept_after_release`` that backward freed


def _kept_after_release(saved: tuple) -> tuple:
    """``saved`` as it reads after backward freed it (``Node.release``): the tensors freed (``FREED``), the
    stand-ins of entries never saved (``Unread``) and the plain values kept."""
    return tuple(entry if entry.__class__ is Unread or not isinstance(entry, _FREED_KINDS) else FREED
                 for entry in saved)


class Unread(xp.ndarray):
    """The stand-in for a saved entry that no computed gradient reads (``Node.saved_for``): not a saved tensor,
    so saved-tensor hooks do not see it. ``held_strides``: the dropped array's strides in bytes."""

    held_strides: tuple = ()


def _modified_message(node: Node, array, source, counter, expected: int) -> str:
    """PyTorch's error for a saved tensor changed in place before backward: its type and shape, the op whose
    output it is (none for a leaf), its version now and when saved. For a saved input, the op is the tensor's
    creator now, as PyTorch's (``y.add_(1)`` after ``y * y`` saved ``y``: output 0 of Add), which the in-place op
    that gave it its history left with the version counter (``note_written``); for a saved output, the node that
    saved it. (Under saved-tensor hooks, the creator when it was saved, as PyTorch's.)"""
    version = counter[0]
    edge = (node, source[0]) if isinstance(source[0], int) else source[0]
    # a promoted operand's copy (CastEdge) stands for the input, which PyTorch saved in its own dtype
    dtype = edge.dtype if edge.__class__ is CastEdge else array.dtype
    name = _dtype.SCALAR_TYPE_NAMES.get(dtype.name, str(dtype))
    # PyTorch's legacy tensor type name, where the dtype has one (bool, bfloat16 and complex have none)
    legacy = dtype.kind in "fiu" and name != "BFloat16"
    transposed = source[1] in node.saved_transposed
    what = (f"[{f'torch.{name}Tensor' if legacy else f'CPU{name}Type'} "
            f"{list(array.shape)[::-1] if transposed else list(array.shape)}]")
    if edge is not None and (transposed or edge[0].is_view):
        # a view of a tensor that requires grad, changed in place (itself, its base or another view of it): PyTorch
        # regenerates the view's grad_fn as AsStridedBackward0, which its message names
        what += ", which is output 0 of AsStrided,"
    else:
        written = counter[1].written if len(counter) > 1 and not isinstance(source[0], int) else None
        creator = None
        if written is not None and written[0]() is array:
            creator, nr = written[1], 0  # (PyTorch's output number of a saved input's: 0, never set)
        elif edge is not None and not isinstance(edge[0], AccumulateGrad):
            creator, nr = edge[0].name(), edge[1]  # (name(): PyTorch's names CopySlices in torch::autograd::)
        if creator is not None:
            what += f", which is output {nr} of {forward_op_name(creator)},"  # (Add, Prod1, a Function's name)
    hint = ("the backtrace further above shows the operation that failed to compute its gradient. The variable "
            "in question was changed in there or anywhere later. Good luck!" if _GradState.anomaly else
            "enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {version}; expected version {expected} instead. Hint: {hint}")


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into ``variable.grad`` (never overwrites).

    One per leaf for the leaf's lifetime: the tensor holds its accumulator and the accumulator holds
    the tensor weakly (PyTorch has the opposite arrangement and makes a new accumulator when the old one
    died with its graph; here recording an op on a leaf costs no new object, and there is still no
    reference cycle). A leaf freed while a graph still reaches it receives no gradient, which nobody
    could read anyway.
    """

    __slots__ = ("_variable_ref",)

    def __init__(self, variable: Tensor) -> None:
        self.saved = ()
        self._variable_ref = weakref.ref(variable)
        self.next_edges = ()
        self.input_shapes = ()
        self.needs_input_grad = ()
        self._saved_versions = ()
        self.seq = sys.maxsize  # run as soon as ready, so gradients land early (DDP overlap)

    @property
    def variable(self) -> Tensor | None:
        """The leaf this accumulates into (None once the leaf has been freed)."""
        return self._variable_ref()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name, in its namespace

    def hooked(self, grad, accumulating: bool = True):
        """``grad`` after the leaf's tensor hooks (``register_hook``), each of which may replace it: backward runs
        them before accumulating, autograd.grad (``accumulating=False``) before returning the leaf's gradient, as
        PyTorch does, except ember's own hooks marked ``accumulation_only`` (they watch ``.grad``)."""
        var = self._variable_ref()
        if var is None or not var._hooks:
            return grad
        for hook in tuple(var._hooks):
            if not accumulating and getattr(hook, "accumulation_only", False):
                continue
            grad = hooked_grad(hook, grad)
        return grad

    def backward(self, grad):
        """Add ``grad`` into the leaf's ``.grad`` after its tensor hooks, then run its post-accumulate-grad hooks.
        ``grad`` None (reached without a gradient): the hooks run all the same (with None), ``.grad`` is left."""
        var = self._variable_ref()
        if var is None:
            return ()
        if var._hooks:  # (a leaf whose hooks may keep the gradient never gets its slot lent: leaf_slot_to_fill)
            grad = self.hooked(grad)
            if type(grad) is SparseCOO and var._grad is None and hooks_may_keep(var):
                grad = grad.copy()  # taken as it is by add_to_grad, and a hook may have kept it
        if grad is not None:
            add_to_grad(var, grad)
        if var._post_acc_hooks:
            started = trace.start()
            for hook in tuple(var._post_acc_hooks):
                refuse_post_accumulate_result(hook(var))
            trace.finish("post-accumulate-grad hooks", "hooks", started)
        return ()


def refuse_post_accumulate_result(result) -> None:
    """PyTorch's errors for a post-accumulate-grad hook that returns something: it acts on the leaf (its ``.grad``),
    there is no gradient to replace."""
    if result is None:
        return
    if isinstance(result, Tensor):
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")
    raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")


class CastEdge(tuple):
    """The edge ``(node, output_nr)`` of an input that an op read in another dtype, promoted (``x32 + y64`` reads
    ``x`` as float64; ``sum(dtype=...)``): PyTorch records no cast node there, its engine casts the gradient back
    to the input's ``dtype`` as it goes down the edge (``validate_outputs``), the real part for a real input of a
    complex result. ``engine.py`` does that here (``cast_gradient``); a plain tuple everywhere else."""

    def __new__(cls, edge: tuple, dtype) -> CastEdge:
        self = tuple.__new__(cls, edge)
        self.dtype = dtype
        return self


def cast_gradient(grad, dtype):
    """``grad`` (an array, or a recorded one under create_graph) as the gradient of an input of ``dtype``: the real
    part of a complex gradient of a real input, in that dtype, as PyTorch's engine passes it down the edge."""
    if np_kind(grad.dtype) == "c" and np_kind(dtype) != "c":
        grad = grad.real
    return grad if grad.dtype == dtype else grad.astype(dtype)


def promoted_input(t: Tensor, array) -> Tensor:
    """``t`` (which requires grad, in grad mode) read as ``array``, its values in the dtype an op promotes its
    operands to: a tensor that stands in ``t``'s place in the graph, as PyTorch's ops read a promoted operand
    without recording a cast (``x32 + y64`` is AddBackward0 whose edges are ``x``'s and ``y``'s own). An op
    recording it links to ``t``'s edge as a ``CastEdge`` (``input_edge``), so its gradient reaches ``t`` in ``t``'s
    dtype; it shares ``t``'s version counter, so that changing ``t`` in place before backward is PyTorch's error
    when the op saved it."""
    edge = input_edge(t)
    p = Tensor._make(array)
    p._requires_grad = True
    p._vc = t._vc
    p._cast_edge = None if edge is None else CastEdge(edge, t._data.dtype)
    return p


def edge_tensor(array, edge: tuple) -> Tensor:
    """A tensor over ``array`` in the graph at ``edge`` (a formula's saved input under create_graph, recorded.py):
    a ``CastEdge``'s as the promoted input it stands for (``promoted_input``)."""
    if edge.__class__ is CastEdge:
        t = Tensor._make(array)
        t._requires_grad = True
        t._cast_edge = edge
        return t
    return Tensor._make(array, edge[0], edge[1])


def entry_tensor(node: Node, array, source, counter: list) -> Tensor:
    """A tensor over ``array``, an entry of ``node.saved``, in the graph where that entry came from (``source``, as
    ``_record`` notes it): an output's with ``node`` as its grad_fn, an input's at its edge, a constant for an input
    that needs no gradient; sharing the saved tensor's version counter ``counter``. (create_graph's saved tensors,
    recorded.py, and PyTorch's ``grad_fn._saved_<name>``, saved_attributes.py.)"""
    if isinstance(source, int):
        t = Tensor._make(array, node, source)
    elif source is None:
        t = Tensor._make(array)
    else:
        t = edge_tensor(array, source)
    t._vc = counter
    return t


def made_without_history(t: Tensor) -> bool:
    """Whether ``t`` is a view without a grad_fn of a tensor that requires grad: made under no_grad, or in grad mode
    before its base required grad (a leaf without an accumulator, as PyTorch's, which requires grad through its
    base: a gradient reaching it is dropped; ``requires_grad_()`` on a no_grad view gives it an accumulator).
    Reads fields only: creates no accumulator."""
    return t._grad_fn is None and t._base is not None and t._base._requires_grad and t._grad_accumulator is None


def input_edge(t: Tensor) -> tuple:
    """Where the gradient of ``t`` (which requires grad) goes: (its grad_fn, its output number), or a leaf's
    (AccumulateGrad, 0). A view whose base changed in place since its grad_fn was made gets a new one first.
    None for a view made under no_grad of a tensor that requires grad: it requires grad but, as in PyTorch, has
    no history and no accumulator, so a gradient reaching it is dropped."""
    fn = t._grad_fn
    if fn is None and made_without_history(t):
        if t._view_version != t._vc[0]:  # its base changed in place since: PyTorch's error under no_grad
            refresh_view(t)  # (refresh_view), else the view's history from its base's
            if t._grad_fn is not None:
                return (t._grad_fn, t._output_nr)
        return None
    if fn is not None:
        if t._base is not None and t._view_version != t._vc[0]:
            refresh_view(t)
            fn = t._grad_fn
        return (fn, t._output_nr)
    acc = t._grad_accumulator
    if t._base is not None and t._view_version != t._vc[0]:  # a view made before its base needed a gradient, or
        refresh_view(t)  # one made a leaf (its accumulator) whose base changed since: PyTorch regenerates its
        if t._grad_fn is not None:  # grad_fn first (refresh_view: the base's history, or PyTorch's error)
            return (t._grad_fn, t._output_nr)
    if acc is not None:
        return (acc, 0)
    own = t.__dict__
    if "_cast_edge" in own:  # a promoted operand standing for its tensor (promoted_input): that tensor's edge
        return own["_cast_edge"]
    return leaf_edge(t)


def refresh_stale_view(t: Tensor) -> None:
    """``Tensor.grad_fn``'s way to ``refresh_view`` (installed after this module loads)."""
    refresh_view(t)


def base_requires_grad(t: Tensor, value: bool) -> None:
    """``requires_grad_(value)``'s news for the views of ``t`` (a root whose flag changes): those without history
    (made under no_grad, or in grad mode while ``t`` needed no gradient) require grad as ``t`` does now, as
    PyTorch's ask their base (``watch_view`` keeps them)."""
    if len(t._vc) > 1:
        for ref in t._vc[1].refs:
            v = ref()
            if v is not None and v._base is t and v._grad_fn is None and v._grad_accumulator is None:
                # (an accumulator: its own flag)
                v._requires_grad = value


def leaf_edge(t: Tensor) -> tuple:
    """A leaf's edge, (its AccumulateGrad, 0), made on the leaf's first recorded op."""
    acc = t._grad_accumulator
    if acc is None:
        acc = t._grad_accumulator = AccumulateGrad(t)
    return (acc, 0)


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
