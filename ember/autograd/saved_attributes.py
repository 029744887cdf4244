"""PyTorch's ``grad_fn._saved_<name>`` attributes: the tensors (and arguments) a node saved for backward.

PyTorch exposes what each node saved under the names of its derivative formula (``MulBackward0._saved_self``,
``_saved_other``; ``ExpBackward0._saved_result``; ``SumBackward0._saved_self_sym_sizes``), and programs that
inspect the autograd graph read them (torchviz's ``show_saved``, the "autograd mechanics" notes). An op's node
class declares them next to its formula, as class attributes:

    _saved_self, _raw_saved_self = saved_tensor(0)    # saved[0], as a tensor
    _saved_other, _raw_saved_other = saved_tensor(1, number_as_tensor=True)

so ``dir(grad_fn)`` lists them, as PyTorch's (``_raw_saved_<name>``: the saved tensor as an object that takes
hooks of its own, ``SavedTensor.register_hooks``). A saved input reads back as PyTorch's does: a leaf is the leaf
itself; another input is a tensor of the graph at that input's place (PyTorch gives the caller's own object);
a saved output is a new tensor over the output's memory whose ``grad_fn`` is the node, as PyTorch's (``y is
y.grad_fn._saved_result`` is False there too). An entry no computed gradient reads (``Node.saved_for``) was not
saved: None, as PyTorch's, after backward too. After backward freed the node, reading a saved tensor is PyTorch's
error (a number read as a number stays, as PyTorch's ``_saved_exponent``), and so is reading one changed in place
since it was saved.

A node that keeps something other than what PyTorch saves (a loss's derivatives, layer_norm's normalised rows)
gives PyTorch's saved arguments from the arrays it holds to check their versions (``checked_argument``) and computes
a saved statistic from them where it keeps none; docs/api.md lists what it cannot give.
"""

from __future__ import annotations

import operator
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from .graph import _RELEASED_MSG, FREED, AccumulateGrad, Node, Unread, _modified_message, entry_tensor
from .saved_hooks import _Packed, unpack_saved


def saved_value(node: Node, position: int, number_as_tensor: bool = False) -> Any:
    """The entry at ``position`` of ``node.saved`` as PyTorch's ``_saved_<name>`` gives it (the module's docstring).
    ``number_as_tensor``: a Python number there reads as the 0-d tensor PyTorch wraps it in (``x * 2``'s
    ``_saved_other`` is ``tensor(2)``), not as the number (``x ** 2``'s ``_saved_exponent`` is ``2``)."""
    saved = node.saved
    if saved is None:  # freed by backward: an entry never saved is None, a number read as one stays, as PyTorch's
        kept = node._kept_after_release
        value = FREED if kept is None else kept[position]
        if type(value) is Unread:
            return None
        if value is FREED or number_as_tensor:
            raise RuntimeError(_RELEASED_MSG)
        return value
    value = saved[position]
    if type(value) is Unread:
        return None
    packed = type(value) is _Packed
    if packed:  # saved through saved-tensor hooks: what their unpack hook gives back, in the saved tensor's place
        value = unpack_saved((value,), widen=False)[0]  # (the tensor packed: a half input in its own dtype)
    elif not isinstance(value, xp.ndarray):
        return Tensor._make(xp.asarray(value)) if number_as_tensor and isinstance(value, (bool, int, float,
                                                                                        complex)) else value
    for counter, version, array, (source, k) in node._saved_versions:
        if k != position:
            continue
        if counter[0] != version and not packed:  # (hooks' tensors: unchecked, as PyTorch's)
            raise RuntimeError(_modified_message(node, array, (source, k), counter, version))
        if source is not None and not isinstance(source, int) and source[0].__class__ is AccumulateGrad:
            leaf = source[0].variable
            if leaf is not None and leaf._data is value:  # a leaf: the caller's tensor itself, as PyTorch's
                return leaf
            if packed:  # another tensor standing for the leaf: requiring grad, without history
                return Tensor._make(value).requires_grad_()
        return entry_tensor(node, value, source, counter)
    return Tensor._make(value)  # an intermediate the formula reads (neither an input nor an output)


def checked_argument(node: Node, index: int, edge: int | None = None) -> Tensor | None:
    """The ``index``-th tensor ``node`` checks the version of as an argument (``Node.check_versions_of``, which
    skips absent ones), as PyTorch's ``_saved_<name>`` of it: its array is held for that check already, so reading
    it keeps nothing more alive. ``edge``: that tensor is the node's input at this position (a leaf reads as the
    leaf itself, another input as a tensor of the graph at its place); None: an argument without a gradient (a
    target, a class weight). None where the node holds none: an absent optional argument, and under saved-tensor
    hooks, which check no versions (docs/api.md). After backward freed the node: PyTorch's error."""
    if node.saved is None:
        raise RuntimeError(_RELEASED_MSG)
    held = [entry for entry in node._saved_versions if entry[3][0] is None and entry[3][1] is None]
    if index >= len(held):
        return None
    counter, version, array, _ = held[index]
    if counter[0] != version:
        raise RuntimeError(_modified_message(node, array, held[index][3], counter, version))
    source = None if edge is None else node.next_edges[edge]
    if source is not None and source[0].__class__ is AccumulateGrad:
        leaf = source[0].variable
        if leaf is not None and leaf._data is array:
            return leaf
    return entry_tensor(node, array, source, counter)


def unreleased(node: Node) -> Node:
    """``node``, whose ``_saved_<name>`` reads what it holds outside ``saved`` for its formula (an index, indices, a
    mask): PyTorch's error once backward freed the graph (its saved variable is released with the others, though
    ember's node keeps the array for a second backward's error)."""
    if node.saved is None:
        raise RuntimeError(_RELEASED_MSG)
    return node


def as_unsigned(n: int) -> int:
    """A saved int as PyTorch's ``_saved_<name>`` reads it: a negative one as unsigned 64-bit (-1: 2**64 - 1)."""
    return n + 2 ** 64 if n < 0 else n


def keep_dim_as_given(out, dim: int):
    """``out``, whose node keeps ``dim`` as the caller gave it: PyTorch's node saves the dim unwrapped (its
    ``_saved_dim`` reads -1 as 2**64 - 1, ``saved_dim``), where ember's node computes with it wrapped. ``out``: a
    tensor, or (values, indices), the values' node."""
    node = (out[0] if isinstance(out, tuple) else out).grad_fn
    if node is not None and dim < 0:
        node.dim_given = operator.index(dim)
    return out


def keep_as_given(out, **given):
    """``out``, whose node keeps the arguments ``given`` as the caller gave them (dims unwrapped, in the order given),
    which PyTorch's node shows as its ``_saved_<name>`` (``given_argument``) where ember's node computes with them
    wrapped or sorted. ``out``: a tensor, or (values, indices), the values' node."""
    node = (out[0] if isinstance(out, tuple) else out).grad_fn
    if node is not None:
        node.given = given
    return out


def _as_read(value):
    """A saved argument as PyTorch's ``_saved_<name>`` reads it: an int as unsigned 64-bit (``as_unsigned``), each
    of a sequence's too, as a tuple."""
    if isinstance(value, (tuple, list)):
        return tuple(_as_read(v) for v in value)
    return as_unsigned(operator.index(value)) if type(value) is not bool and isinstance(value, int) else value


def given_argument(name: str, default=None, raw: bool = False) -> property:
    """PyTorch's ``_saved_<name>`` of an argument the node keeps as given (``keep_as_given``), read as PyTorch's
    (``_as_read``; as given with ``raw``: a Scalar such as ``alpha``, which PyTorch shows as given); ``default(node)``
    where the caller kept none (another op making the same node)."""
    def read(node: Node):
        given = node.__dict__.get("given")
        value = given[name] if given is not None and name in given else default(node)
        return value if raw else _as_read(value)

    return property(read)


def saved_dim(node: Node, wrapped: int) -> int:
    """PyTorch's ``_saved_dim`` of ``node``, which computes along ``wrapped``: the dim as given (``keep_dim_as_given``),
    a negative one read as unsigned."""
    return as_unsigned(node.__dict__.get("dim_given", wrapped))


def held_tensor(node: Node, array) -> Tensor:
    """``array`` (see ``unreleased``) as PyTorch's ``_saved_<name>`` of it: a tensor while the graph is alive."""
    unreleased(node)
    return Tensor._make(array)


class _SavedValue:
    """Descriptor: ``node.saved[position]`` read as PyTorch's ``grad_fn._saved_<name>`` (``saved_value``)."""

    __slots__ = ("position", "number_as_tensor")

    def __init__(self, position: int, number_as_tensor: bool) -> None:
        self.position = position
        self.number_as_tensor = number_as_tensor

    def __get__(self, node: Node | None, owner: type | None = None) -> Any:
        if node is None:
            return self
        return saved_value(node, self.position, self.number_as_tensor)


class SavedTensor:
    """PyTorch's ``grad_fn._raw_saved_<name>``: one saved tensor of a node, which takes a pair of saved-tensor
    hooks of its own (``register_hooks``), as ``saved_tensors_hooks`` gives every saved tensor."""

    __slots__ = ("_node", "_position")

    def __init__(self, node: Node, position: int) -> None:
        self._node, self._position = node, position

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack the saved tensor now with ``pack_hook``; backward (and ``_saved_<name>``) reads
        ``unpack_hook(packed)`` in its place. PyTorch's errors once freed, and for a second pair."""
        node, k = self._node, self._position
        if node.saved is None:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if "
                               "you need to access saved variables after calling backward.")
        if type(node.saved[k]) is _Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        packed = _Packed(pack_hook(saved_value(node, k)), unpack_hook)
        node.saved = node.saved[:k] + (packed,) + node.saved[k + 1:]
        node._packed = True  # (the engine unpacks it before backward)

    def unpack(self) -> Any:
        """The saved tensor, as ``_saved_<name>`` reads it."""
        return saved_value(self._node, self._position)


class _RawSaved:
    """Descriptor: PyTorch's ``grad_fn._raw_saved_<name>`` of ``node.saved[position]`` (``SavedTensor``)."""

    __slots__ = ("position",)

    def __init__(self, position: int) -> None:
        self.position = position

    def __get__(self, node: Node | None, owner: type | None = None) -> Any:
        if node is None:
            return self
        return SavedTensor(node, self.position)


def saved_tensor(position: int, number_as_tensor: bool = False) -> tuple[_SavedValue, _RawSaved]:
    """The descriptors of PyTorch's ``_saved_<name>`` and ``_raw_saved_<name>`` for ``node.saved[position]``
    (``_saved_self, _raw_saved_self = saved_tensor(0)`` in an op's node class)."""
    return _SavedValue(position, number_as_tensor), _RawSaved(position)


class saved_property(property):  # noqa: N801 (a property, named as one)
    """A ``_saved_<name>`` attribute read by a function of the node (``fget``), not as ``saved[position]`` is, for
    the entry at ``position`` of ``saved`` (a weight PyTorch's node saves transposed): its ``position`` places
    the entry in the order saved-tensor hooks pack (``saved_hooks.pack_order``)."""

    def __init__(self, position: int, fget) -> None:
        super().__init__(fget)
        self.position = position


class NotSaved:
    """Descriptor: a ``_saved_<name>`` that a node's base class declares and PyTorch's node of this form lacks
    (``_saved_self`` of ``EluBackward1``, which saves its result instead): PyTorch's AttributeError, and left out of
    ``dir(node)`` (``absent``, which ``Node.__dir__`` reads)."""

    absent = True

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, node: Node | None, owner: type | None = None):
        if node is None:
            return self
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{self.attribute}'")


def not_saved(*names: str) -> dict:
    """``NotSaved`` descriptors of ``_saved_<name>`` and ``_raw_saved_<name>`` for each of ``names``, by attribute."""
    return {f"{prefix}{name}": NotSaved(f"{prefix}{name}") for name in names for prefix in ("_saved_", "_raw_saved_")}


def input_sizes(node: Node) -> tuple:
    """PyTorch's ``_saved_self_sym_sizes`` of an op of one tensor input: the input's shape (kept after backward)."""
    return tuple(node.input_shapes[0])
